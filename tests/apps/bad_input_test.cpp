// Hostile and careless input, table-driven, through the real CLIs. Every
// case asserts the documented exit code, a one-line message that names the
// file and the key, line or dataset (with what was expected), and that
// --out holds nothing half-written and nothing from another run: a bad
// input found before any work leaves --out absent. Every run has a deadline:
// an input that blocks (a FIFO with no writer) fails its case instead of
// hanging the suite.
#include <gtest/gtest.h>

#include <H5Cpp.h>
#include <sys/stat.h>

#include <array>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "neuralsim/core/format.hpp"
#include "neuralsim/io/distill_dataset.hpp"
#include "support/files.hpp"
#include "support/run_command.hpp"
#include "support/test_models.hpp"

namespace neuralsim {
namespace {

namespace fs = std::filesystem;
using testing::fresh_dir;
using testing::read_text;
using testing::run_command;
using testing::write_file;

// A small valid rollout experiment, by top-level section; cases replace or
// add sections. The model is inline so messages name this file.
std::map<std::string, std::string> rollout_sections() {
  return {{"model", "model:\n  generator: double_pendulum\n  lengths: [1, 1]\n  masses: [1, 1]\n"},
          {"sim", "sim: {integrator: rk4, dt: 0.01, duration: 0.1}\n"},
          {"initial_states", "initial_states: {count: 2, q_low: [-0.5, -0.5], q_high: [0.5, 0.5]}\n"},
          {"controls", "controls: {type: zero}\n"}};
}

std::string join(const std::map<std::string, std::string>& sections) {
  std::string out;
  for (const auto& [key, text] : sections) out += text;
  return out;
}

struct Case {
  std::string name;
  std::string app;                        // rollout | simid
  std::map<std::string, std::string> config;  // rollout: sections over the base; simid: written as is (if any)
  std::string args;                       // extra command-line arguments ({dir} = the case directory)
  int exit_code;
  std::vector<std::string> message;       // substrings of the error line ({dir} = the case directory)
  std::function<void(const std::string& dir)> prepare = nullptr;  // files the case needs
  bool out_may_exist = false;             // --out existed before (reuse cases)
};
// gtest prints a parameter in each test's name; without this, every byte.
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

std::string expand(std::string s, const std::string& dir) {
  for (size_t p = s.find("{dir}"); p != std::string::npos; p = s.find("{dir}")) s.replace(p, 5, dir);
  return s;
}

class BadInput : public ::testing::TestWithParam<Case> {};

constexpr int kDeadlineSeconds = 30;

TEST_P(BadInput, ExitCodeMessageAndCleanOut) {
  const Case& c = GetParam();
  const std::string dir = fresh_dir("bad_input_" + c.name);
  std::string config_arg;
  const bool own_config = c.args.find("--config") != std::string::npos;
  if (c.app == "rollout" && !own_config) {
    std::map<std::string, std::string> sections = rollout_sections();
    for (const auto& [key, text] : c.config) sections[key] = text;
    write_file(dir + "/case.yaml", join(sections));
    config_arg = " --config " + dir + "/case.yaml";
  } else if (!c.config.empty() && !own_config) {
    write_file(dir + "/case.yaml", join(c.config));
    config_arg = " --config " + dir + "/case.yaml";
  }
  if (c.app == "train-augment" || c.app == "discover") {
    // The training cases name their model and data relative to the config,
    // as a user's experiment directory does.
    fs::copy_file(testing::source_path("configs/models/pendulum.yaml"), dir + "/pendulum.yaml");
    fs::copy_file(testing::source_path("datasets/pendulum_pd.h5"), dir + "/pendulum_pd.h5");
  }
  if (c.prepare) c.prepare(dir);
  const std::string out = dir + "/out";
  const bool out_existed = fs::exists(out);
  const bool own_out = c.args.find("--out") != std::string::npos;
  // `timeout` exits 124 when the deadline passes (SIGTERM; SIGKILL 5 s later).
  const auto r = run_command("timeout -k 5 " + std::to_string(kDeadlineSeconds) + " " + testing::app_path(c.app) +
                             config_arg + " -q" + (own_out ? "" : " --out " + out) + " " + expand(c.args, dir));
  ASSERT_NE(r.exit_code, 124) << "no answer within " << kDeadlineSeconds << " s (blocked on an input?)";
  EXPECT_EQ(r.exit_code, c.exit_code) << r.err;
  for (const std::string& part : c.message)
    EXPECT_NE(r.err.find(expand(part, dir)), std::string::npos) << "'" << expand(part, dir) << "' not in: " << r.err;
  // One line: "APP: error: ..." and nothing else on stderr (-q).
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.rfind(c.app + ": error: ", 0), 0u) << r.err;
  // Printable: whatever bytes an input holds, the line quotes them escaped.
  const std::string line = r.err.substr(0, r.err.find('\n'));
  EXPECT_EQ(printable(line), line);
  if (!out_existed) {
    EXPECT_FALSE(fs::exists(out)) << "--out was created for a run that never started";
  } else {
    for (const auto& e : fs::directory_iterator(out)) {
      const std::string name = e.path().filename().string();
      EXPECT_FALSE(name.size() > 4 && name.compare(name.size() - 4, 4, ".tmp") == 0) << "temp file left: " << name;
    }
  }
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) { return info.param.name; }

const std::string kCfg = "{dir}/case.yaml";
const std::string kDevice = testing::character_device();

// ---- rollout: numbers, sizes and shapes ----
INSTANTIATE_TEST_SUITE_P(
    RolloutNumbers, BadInput,
    ::testing::Values(
        Case{"duration_inf", "rollout", {{"sim", "sim: {dt: 0.01, duration: .inf}\n"}}, "", 2,
             {kCfg + ":", "sim.duration", "finite number"}},
        Case{"duration_too_many_steps", "rollout", {{"sim", "sim: {dt: 0.01, duration: 1e12}\n"}}, "", 2,
             {kCfg, "sim.duration", "10^12"}},
        Case{"duration_out_of_memory", "rollout", {{"sim", "sim: {dt: 1e-6, duration: 1e5}\n"}}, "", 2,
             {kCfg, "sim.duration", "GB of memory"}},
        Case{"duration_below_one_step", "rollout", {{"sim", "sim: {dt: 0.01, duration: 0.001}\n"}}, "", 2,
             {kCfg, "sim.duration", "at least one time step"}},
        Case{"dt_inf", "rollout", {{"sim", "sim: {dt: .inf, duration: 1}\n"}}, "", 2, {kCfg, "sim.dt", "finite"}},
        Case{"dt_nan", "rollout", {{"sim", "sim: {dt: .nan, duration: 1}\n"}}, "", 2, {kCfg, "sim.dt", "finite"}},
        Case{"dt_zero", "rollout", {{"sim", "sim: {dt: 0, duration: 1}\n"}}, "", 2, {kCfg, "sim.dt", "(0, 10]"}},
        Case{"dt_negative", "rollout", {{"sim", "sim: {dt: -0.01, duration: 1}\n"}}, "", 2, {kCfg, "sim.dt"}},
        Case{"substeps_zero", "rollout", {{"sim", "sim: {dt: 0.01, duration: 1, substeps: 0}\n"}}, "", 2,
             {kCfg, "sim.substeps", "out of range"}},
        Case{"integrator_unknown", "rollout", {{"sim", "sim: {integrator: rk5, dt: 0.01, duration: 1}\n"}}, "", 2,
             {kCfg + ":", "sim.integrator", "one of semi_implicit_euler, euler, rk4", "'rk5'"}},
        Case{"count_huge", "rollout", {{"initial_states", "initial_states: {count: 1000000000}\n"}}, "", 2,
             {kCfg, "initial_states.count", "out of range [1, 1000000]"}},
        Case{"count_not_integer", "rollout", {{"initial_states", "initial_states: {count: 1e9}\n"}}, "", 2,
             {kCfg, "initial_states.count", "expected an integer"}},
        Case{"count_zero", "rollout", {{"initial_states", "initial_states: {count: 0}\n"}}, "", 2,
             {kCfg, "initial_states.count"}},
        Case{"q_low_wrong_size", "rollout", {{"initial_states", "initial_states: {count: 1, q_low: [0, 0, 0]}\n"}},
             "", 2, {kCfg, "initial_states.q_low", "expected 2 values"}},
        Case{"q_high_below_low", "rollout",
             {{"initial_states", "initial_states: {count: 1, q_low: [1, 1], q_high: [0, 0]}\n"}}, "", 2,
             {kCfg, "initial_states.q_high", "q_low"}},
        Case{"states_list_empty", "rollout", {{"initial_states", "initial_states: {list: []}\n"}}, "", 2,
             {kCfg, "initial_states.list", "empty"}},
        Case{"initial_state_nan", "rollout", {{"initial_states", "initial_states: {list: [{q: [.nan, 0]}]}\n"}},
             "", 2, {kCfg, "initial_states.list.0.q", "finite"}},
        // A list of the wrong length is never broadcast (2 coordinates here).
        Case{"initial_state_q_too_short", "rollout", {{"initial_states", "initial_states: {list: [{q: [0.3]}]}\n"}},
             "", 2, {kCfg + ":", "initial_states.list.0.q", "expected 2 values (one per coordinate)", "got a list of 1"}},
        Case{"initial_state_qd_too_long", "rollout",
             {{"initial_states", "initial_states: {list: [{q: [0, 0], qd: [1, 2, 3]}]}\n"}}, "", 2,
             {kCfg + ":", "initial_states.list.0.qd", "expected 2 values", "got a list of 3"}},
        Case{"initial_state_q_number", "rollout", {{"initial_states", "initial_states: {list: [{q: 0.3}]}\n"}}, "", 2,
             {kCfg + ":", "initial_states.list.0.q", "expected a list of numbers", "'0.3'"}},
        Case{"q_low_one_element_list", "rollout",
             {{"initial_states", "initial_states: {count: 1, q_low: [-0.5], q_high: [0.5, 0.5]}\n"}}, "", 2,
             {kCfg + ":", "initial_states.q_low", "expected 2 values", "one number without brackets", "got a list of 1"}},
        Case{"pd_gain_one_element_list", "rollout", {{"controls", "controls: {type: pd, kp: [20], kd: 2}\n"}}, "", 2,
             {kCfg + ":", "controls.kp", "expected 2 values", "got a list of 1"}},
        Case{"sinusoid_one_element_list", "rollout", {{"controls", "controls: {type: sinusoid, amplitude: [1]}\n"}},
             "", 2, {kCfg + ":", "controls.amplitude", "expected 2 values", "got a list of 1"}},
        Case{"pd_target_one_element_list", "rollout",
             {{"controls", "controls: {type: pd, kp: 20, kd: 2, target: {offset: [0.1]}}\n"}}, "", 2,
             {kCfg + ":", "controls.target.offset", "expected 2 values", "got a list of 1"}},
        Case{"noise_negative", "rollout", {{"noise", "noise: {q_std: -1}\n"}}, "", 2,
             {kCfg, "noise.q_std", "out of range"}},
        Case{"noise_nan", "rollout", {{"noise", "noise: {qd_std: .nan}\n"}}, "", 2, {kCfg, "noise.qd_std"}},
        Case{"noise_unknown_key", "rollout", {{"noise", "noise: {q_sdt: 0.1}\n"}}, "", 2,
             {kCfg, "noise.q_sdt", "did you mean 'q_std'"}},
        Case{"controls_unknown_type", "rollout", {{"controls", "controls: {type: sine}\n"}}, "", 2,
             {kCfg, "controls.type", "one of zero, constant, sinusoid, pd, dataset"}},
        Case{"controls_wrong_size", "rollout", {{"controls", "controls: {type: constant, value: [1, 2, 3]}\n"}}, "",
             2, {kCfg, "controls.value", "expected 2 values"}},
        Case{"controls_one_element_list", "rollout", {{"controls", "controls: {type: constant, value: [1]}\n"}}, "",
             2, {kCfg, "controls.value", "expected 2 values", "got a list of 1"}},
        Case{"controls_dataset_without_file", "rollout", {{"controls", "controls: {type: dataset}\n"}}, "", 2,
             {kCfg, "controls.type", "controls.file"}}),
    case_name);

// ---- rollout: outputs and --out ----
INSTANTIATE_TEST_SUITE_P(
    RolloutOutputs, BadInput,
    ::testing::Values(
        Case{"output_escapes", "rollout", {{"output", "output: {file: ../../x.h5}\n"}}, "", 2,
             {kCfg, "output.file", "plain file name inside --out"}},
        Case{"output_absolute", "rollout", {{"output", "output: {file: /tmp/x.h5}\n"}}, "", 2,
             {kCfg, "output.file", "plain file name"}},
        Case{"output_reserved", "rollout", {{"output", "output: {file: summary.json}\n"}}, "", 2,
             {kCfg, "output.file", "reserved"}},
        Case{"output_empty_name", "rollout", {{"output", "output: {file: ''}\n"}}, "", 2, {kCfg, "output.file"}},
        Case{"output_unknown_key", "rollout", {{"output", "output: {fiel: x.h5}\n"}}, "", 2,
             {kCfg, "output.fiel", "did you mean 'file'"}},
        Case{"out_empty", "rollout", {}, "--out ''", 2, {"--out", "must not be empty"}},
        Case{"out_is_a_file", "rollout", {}, "--out {dir}/case.yaml", 2, {"{dir}/case.yaml", "not a directory"}},
        Case{"out_unwritable", "rollout", {}, "--out /proc/neuralsim", 2, {"/proc/neuralsim"}},
        Case{"out_holds_another_run", "rollout", {}, "", 2, {"{dir}/out", "earlier run", "--force"},
             [](const std::string& dir) {
               write_file(dir + "/out/summary.json", "{\"app\": \"simid\", \"outputs\": []}");
               write_file(dir + "/out/params.json", "{}");
             },
             true},
        Case{"out_holds_unfinished_run", "rollout", {}, "", 2, {"{dir}/out", "unfinished run", "--force"},
             [](const std::string& dir) { write_file(dir + "/out/.neuralsim-run.json", "{}"); }, true}),
    case_name);

// ---- rollout: command line and config files ----
INSTANTIATE_TEST_SUITE_P(
    RolloutCommandLine, BadInput,
    ::testing::Values(
        Case{"set_wrong_type", "rollout", {}, "--set sim.dt=fast", 2,
             {kCfg + " (set by --set)", "sim.dt", "expected a number", "'fast'"}},
        Case{"set_no_equals", "rollout", {}, "--set sim.dt", 2, {"--set 'sim.dt'", "KEY=VALUE"}},
        Case{"set_bad_yaml", "rollout", {}, "--set 'sim.dt=[1,'", 2, {"--set", "not valid YAML"}},
        Case{"threads_out_of_range", "rollout", {}, "--threads 5000", 2,
             {"--threads", "[0, 1024]", "'5000'", "out of range"}},
        Case{"threads_not_a_number", "rollout", {}, "--threads abc", 2, {"--threads", "'abc'", "not an integer"}},
        Case{"threads_fraction", "rollout", {}, "--threads 1.5", 2, {"--threads", "'1.5'", "not an integer"}},
        Case{"threads_empty", "rollout", {}, "--threads ''", 2, {"--threads", "''", "not an integer"}},
        Case{"threads_hex", "rollout", {}, "--threads 0x10", 2, {"--threads", "'0x10'", "not an integer"}},
        Case{"seed_not_a_number", "rollout", {}, "--seed 12x", 2, {"--seed", "'12x'", "not an integer"}},
        Case{"seed_exponent", "rollout", {}, "--seed 1e3", 2, {"--seed", "'1e3'", "not an integer"}},
        Case{"seed_too_large", "rollout", {}, "--seed 99999999999999999999", 2,
             {"--seed", "[0, 9223372036854775807]", "99999999999999999999", "out of range"}},
        Case{"seed_negative", "rollout", {}, "--seed -3", 2, {"--seed", "'-3'", "out of range"}},
        Case{"unknown_flag", "rollout", {}, "--frobnicate", 2, {"--frobnicate", "--help"}},
        Case{"unknown_top_level_key", "rollout", {{"simm", "simm: {dt: 0.01}\n"}}, "", 2,
             {kCfg, "unknown key 'simm'", "did you mean 'sim'"}},
        Case{"duplicate_key", "rollout", {{"zdup", "controls: {type: zero}\n"}}, "", 2,
             {kCfg, "duplicate key 'controls'"}},
        Case{"config_not_a_map", "rollout", {}, "--config {dir}/list.yaml", 2,
             {"{dir}/list.yaml:", "top level of a config must be a map"},
             [](const std::string& dir) { write_file(dir + "/list.yaml", "- 1\n- 2\n"); }},
        Case{"config_syntax_error", "rollout", {{"sim", "sim: {dt: 0.01, duration: [1\n"}}, "", 2, {kCfg}},
        Case{"config_character_device", "rollout", {}, "--config " + kDevice, 2, {kDevice + ": config file is a character device"}},
        Case{"config_too_large", "rollout", {}, "--config {dir}/big.yaml", 2,
             {"{dir}/big.yaml: config file is 16777217 bytes, more than the 16 MiB limit"},
             [](const std::string& dir) {
               write_file(dir + "/big.yaml", "");
               fs::resize_file(dir + "/big.yaml", (16u << 20) + 1);  // sparse: costs no disk
             }},
        Case{"config_alias_bomb", "rollout", {}, "--config {dir}/bomb.yaml", 2, {"{dir}/bomb.yaml", "expands to more than"},
             [](const std::string& dir) {
               std::string bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
               for (int i = 1; i < 9; ++i)
                 bomb += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [*a" + std::to_string(i - 1) +
                         ", *a" + std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + ", *a" +
                         std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + ", *a" + std::to_string(i - 1) +
                         ", *a" + std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + ", *a" +
                         std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + "]\n";
               write_file(dir + "/bomb.yaml", bomb);
             }}),
    case_name);

// A URDF of unit-mass links joined by continuous joints {name, parent, child}.
std::string urdf(const std::vector<std::array<std::string, 3>>& joints) {
  std::set<std::string> links;
  for (const auto& j : joints) links.insert({j[1], j[2]});
  std::string x = "<robot name='r'>";
  for (const std::string& l : links)
    x += "<link name='" + l + "'>" +
         (l == "world" ? "" : "<inertial><mass value='1'/><inertia ixx='0.1' iyy='0.1' izz='0.1' ixy='0' ixz='0' iyz='0'/></inertial>") +
         "</link>";
  for (const auto& j : joints)
    x += "<joint name='" + j[0] + "' type='continuous'><parent link='" + j[1] + "'/><child link='" + j[2] +
         "'/><axis xyz='0 0 1'/></joint>";
  return x + "</robot>";
}

// ---- rollout: models and parameters ----
INSTANTIATE_TEST_SUITE_P(
    RolloutModels, BadInput,
    ::testing::Values(
        Case{"params_unknown_name", "rollout", {{"params", "params: {link.link1.lenght: 2}\n"}}, "", 2,
             {kCfg + ":", "unknown parameter 'link.link1.lenght'", "valid:"}},
        Case{"params_negative_mass", "rollout", {{"params", "params: {link.link1.mass: -1}\n"}}, "", 2,
             {kCfg + ":", "link.link1.mass", "non-physical", "negative"}},
        Case{"params_nan", "rollout", {{"params", "params: {link.link1.mass: .nan}\n"}}, "", 2,
             {kCfg, "params.link.link1.mass", "finite"}},
        Case{"params_set_blames_the_command_line", "rollout", {}, "--set params.link.link1.mass=-2", 2,
             {kCfg + " (set by --set)", "link.link1.mass", "non-physical"}},
        Case{"params_file_missing", "rollout", {{"params_file", "params_file: nope.json\n"}}, "", 3,
             {"{dir}/nope.json: parameter file does not exist", "named by " + kCfg + ":", "key 'params_file'"}},
        Case{"params_file_not_json", "rollout", {{"params_file", "params_file: p.json\n"}}, "", 3,
             {"{dir}/p.json", "invalid JSON"}, [](const std::string& dir) { write_file(dir + "/p.json", "{oops"); }},
        Case{"params_file_non_numeric", "rollout", {{"params_file", "params_file: p.json\n"}}, "", 3,
             {"{dir}/p.json", "link.link1.mass"},
             [](const std::string& dir) { write_file(dir + "/p.json", "{\"link.link1.mass\": \"heavy\"}"); }},
        Case{"model_file_missing", "rollout", {{"model", "model: {file: nope.yaml}\n"}}, "", 2,
             {kCfg + ":", "key 'model.file'", "{dir}/nope.yaml: model file does not exist"}},
        // A ball joint uses the whole tensor: no planar exception.
        Case{"model_negative_inertia", "rollout",
             {{"model", "model:\n  bodies:\n    - name: a\n      joint: {type: spherical}\n"
                        "      mass: 1\n      inertia: [-1, 1, 1]\n"},
              {"initial_states", "initial_states: {q: [[0, 0, 0, 1]]}\n"}},
             "", 2, {kCfg + ":", "model.bodies.0.inertia", "link 'a'", "not positive semidefinite", "planar chain"}},
        Case{"model_triangle_inequality", "rollout",
             {{"model", "model:\n  bodies:\n    - name: a\n      joint: {type: spherical}\n"
                        "      mass: 1\n      inertia: [0.1, 0.1, 0.5]\n"},
              {"initial_states", "initial_states: {q: [[0, 0, 0, 1]]}\n"}},
             "", 2, {kCfg + ":", "link 'a'", "triangle inequality"}},
        // Lumped planar inertia (about the joint 0.02 < m·r² = 0.05): valid
        // only while every joint turns about parallel axes; a second joint
        // about x makes the 3-D tensor matter, and it is refused.
        Case{"model_lumped_link_in_a_non_planar_chain", "rollout",
             {{"model", "model:\n  bodies:\n    - name: a\n      joint: {type: revolute, axis: [0, 1, 0]}\n"
                        "      mass: 0.5\n      com: [0, 0, -0.3162]\n      inertia_about: origin\n"
                        "      inertia: [0.05, 0.02, 0.0]\n"
                        "    - name: b\n      parent: a\n      joint: {type: revolute, axis: [1, 0, 0]}\n"
                        "      mass: 1\n      inertia: [0.1, 0.1, 0.1]\n"}},
             "", 2, {kCfg + ":", "model.bodies.0.inertia", "link 'a'", "planar chain"}},
        // In a planar chain the inertia about the joint must still be >= 0.
        Case{"model_negative_inertia_about_the_joint", "rollout",
             {{"model", "model:\n  bodies:\n    - name: a\n      joint: {type: revolute, axis: [0, 1, 0]}\n"
                        "      mass: 0.5\n      com: [0, 0, -0.3]\n      inertia_about: origin\n"
                        "      inertia: [0.05, -0.01, 0.05]\n"}},
             "", 2, {kCfg + ":", "link 'a'", "about the joint axis", "< 0"}},
        Case{"model_negative_mass", "rollout",
             {{"model", "model:\n  bodies:\n    - name: a\n      joint: {type: revolute}\n      mass: -1\n"}}, "", 2,
             {kCfg + ":", "model.bodies.0.mass", ">= 0"}},
        Case{"model_unknown_joint_type", "rollout",
             {{"model", "model:\n  bodies:\n    - name: a\n      joint: {type: hinged}\n      mass: 1\n"}}, "", 2,
             {kCfg + ":", "model.bodies.0.joint.type", "unknown joint type 'hinged'"}},
        Case{"model_unknown_generator", "rollout", {{"model", "model: {generator: triple_pendulum}\n"}}, "", 2,
             {kCfg + ":", "model.generator", "double_pendulum"}},
        Case{"model_inline_error_has_its_line", "rollout",
             {{"model", "model:\n  generator: chain\n  links: 3\n  lengths: [1, 1]\n"}}, "", 2,
             {kCfg + ":", "model.lengths", "expected a list of 3 numbers"}},
        Case{"urdf_missing", "rollout", {{"model", "model: {urdf: nope.urdf}\n"}}, "", 2,
             {kCfg + ":", "key 'model.urdf'", "nope.urdf: URDF file does not exist"}},
        Case{"urdf_cycle", "rollout", {{"model", "model: {urdf: cycle.urdf}\n"}}, "", 2,
             {kCfg + ":", "key 'model.urdf'", "cycle.urdf: joints 'j1' (a -> b), 'j2' (b -> c), 'j3' (c -> a) form a kinematic cycle through links a, b, c"},
             [](const std::string& dir) { write_file(dir + "/cycle.urdf", urdf({{"j0", "world", "a"}, {"j1", "a", "b"}, {"j2", "b", "c"}, {"j3", "c", "a"}})); }},
        Case{"urdf_self_loop", "rollout", {{"model", "model: {urdf: loop.urdf}\n"}}, "", 2,
             {"loop.urdf: joints 'j1' (a -> a) form a kinematic cycle through links a"},
             [](const std::string& dir) { write_file(dir + "/loop.urdf", urdf({{"j0", "world", "a"}, {"j1", "a", "a"}})); }},
        Case{"urdf_two_parents", "rollout", {{"model", "model: {urdf: closed.urdf}\n"}}, "", 2,
             {"closed.urdf: link 'c' is the child of two joints, 'j2' (a -> c) and 'j3' (b -> c)", "closed kinematic chain"},
             [](const std::string& dir) {
               write_file(dir + "/closed.urdf",
                          urdf({{"j0", "world", "a"}, {"j1", "world", "b"}, {"j2", "a", "c"}, {"j3", "b", "c"}}));
             }},
        Case{"urdf_bad_inertia", "rollout", {{"model", "model: {urdf: bad.urdf, floating_base: true}\n"},
                                             {"initial_states", "initial_states: {q: [[0, 0, 0, 0, 0, 0, 1]]}\n"}},
             "", 2, {"bad.urdf", "link", "triangle inequality"},
             [](const std::string& dir) {
               write_file(dir + "/bad.urdf",
                          "<robot name='r'><link name='a'><inertial><mass value='1'/>"
                          "<inertia ixx='0.1' iyy='0.1' izz='0.5' ixy='0' ixz='0' iyz='0'/></inertial></link>"
                          "</robot>");
             }},
        Case{"urdf_unparsable_inertial", "rollout", {{"model", "model: {urdf: bad.urdf}\n"}}, "", 2,
             {"bad.urdf", "invalid URDF", "mass [heavy] is not a float"},
             [](const std::string& dir) {
               write_file(dir + "/bad.urdf",
                          "<robot name='r'><link name='world'/><link name='a'><inertial><mass value='heavy'/>"
                          "<inertia ixx='0.1' iyy='0.1' izz='0.1' ixy='0' ixz='0' iyz='0'/></inertial></link>"
                          "<joint name='j' type='continuous'><parent link='world'/><child link='a'/>"
                          "<axis xyz='0 0 1'/></joint></robot>");
             }},
        Case{"contact_unknown_model", "rollout", {{"contact", "contact: {model: springy}\n"}}, "", 2,
             {kCfg + ":", "contact.model", "hunt_crossley"}},
        Case{"contact_negative_friction", "rollout", {{"contact", "contact: {parameters: {friction: -1}}\n"}}, "", 2,
             {kCfg, "contact.parameters", "contact.friction", ">= 0"}},
        Case{"contact_unknown_parameter", "rollout", {{"contact", "contact: {parameters: {stickiness: 1}}\n"}}, "",
             2, {kCfg, "contact.parameters.stickiness", "contact.friction"}},
        Case{"contact_impulse_with_rk4", "rollout", {{"contact", "contact: {model: impulse}\n"}}, "", 2,
             {kCfg, "sim.integrator", "semi_implicit_euler"}},
        Case{"contact_parameter_without_contact", "rollout", {{"params", "params: {contact.friction: 0.5}\n"}}, "",
             2, {kCfg, "contact.friction", "no 'contact:' section"}},
        Case{"urdf_massless_joint", "rollout", {{"model", "model: {urdf: empty.urdf}\n"}}, "", 2,
             {kCfg + ":", "coordinate 'j'", "mass matrix is singular"},
             [](const std::string& dir) {
               write_file(dir + "/empty.urdf",
                          "<robot name='r'><link name='world'/><link name='a'/>"
                          "<joint name='j' type='continuous'><parent link='world'/><child link='a'/>"
                          "<axis xyz='0 0 1'/></joint></robot>");
             }},
        Case{"targets_unknown_link", "rollout",
             {{"targets", "targets: [{link: hand, time: 0.05, position: [0, 0, 0], tolerance: 0.1}]\n"}}, "", 2,
             {kCfg, "targets.0.link", "'hand'"}},
        Case{"targets_zero_tolerance", "rollout",
             {{"targets", "targets: [{link: link1, time: 0.05, position: [0, 0, 0], tolerance: 0}]\n"}}, "", 2,
             {kCfg, "targets.0.tolerance", "> 0"}}),
    case_name);

// HDF5 files for --compare and controls.file: a small valid one, and
// hostile variants written with the HDF5 API.
void write_h5(const std::string& path, hsize_t rows, hsize_t cols, bool declare_only, double value = 0.1,
              const char* joint1 = "joint1") {
  H5::Exception::dontPrint();
  H5::H5File f(path, H5F_ACC_TRUNC);
  const H5::StrType str(H5::PredType::C_S1, H5T_VARIABLE);
  auto attr = [&](H5::H5Object& o, const char* name, const std::string& v) {
    o.createAttribute(name, str, H5::DataSpace(H5S_SCALAR)).write(str, v);
  };
  attr(f, "format", "neuralsim-trajectories");
  const int64_t version = 1;
  f.createAttribute("format_version", H5::PredType::NATIVE_INT64, H5::DataSpace(H5S_SCALAR))
      .write(H5::PredType::NATIVE_INT64, &version);
  const char* names[2] = {joint1, "joint2"};
  hsize_t two = 2;
  f.createAttribute("joint_names", str, H5::DataSpace(1, &two)).write(str, names);
  H5::Group g = f.createGroup("trajectories").createGroup("000");
  auto dataset = [&](const char* name, int rank, hsize_t r, hsize_t c) {
    hsize_t dims[2] = {r, c};
    H5::DataSet ds = g.createDataSet(name, H5::PredType::NATIVE_DOUBLE, H5::DataSpace(rank, dims));
    if (declare_only) return;
    std::vector<double> v(r * c);
    for (hsize_t i = 0; i < r; ++i)
      for (hsize_t j = 0; j < c; ++j) v[i * c + j] = rank == 1 ? 0.01 * i : value;
    ds.write(v.data(), H5::PredType::NATIVE_DOUBLE);
  };
  dataset("time", 1, rows, 1);
  dataset("q", 2, rows, cols);
  dataset("qd", 2, rows, cols);
}

INSTANTIATE_TEST_SUITE_P(
    RolloutData, BadInput,
    ::testing::Values(
        Case{"compare_missing_file", "rollout", {}, "--compare {dir}/nope.h5", 2, {"--compare", "nope.h5"}},
        Case{"compare_not_hdf5", "rollout", {}, "--compare {dir}/data.h5", 3, {"{dir}/data.h5", "not an HDF5 file"},
             [](const std::string& dir) { write_file(dir + "/data.h5", "plain text"); }},
        Case{"compare_truncated", "rollout", {}, "--compare {dir}/data.h5", 3, {"{dir}/data.h5"},
             [](const std::string& dir) {
               write_h5(dir + "/good.h5", 10, 2, false);
               const std::string bytes = read_text(dir + "/good.h5");
               write_file(dir + "/data.h5", bytes.substr(0, bytes.size() / 2));
             }},
        Case{"compare_huge_declared_shape", "rollout", {}, "--compare {dir}/data.h5", 3,
             {"{dir}/data.h5:/trajectories/000/", "declares shape", "can hold"},
             [](const std::string& dir) { write_h5(dir + "/data.h5", 400000000, 2, true); }},
        Case{"compare_wrong_columns", "rollout", {}, "--compare {dir}/data.h5", 3,
             {"{dir}/data.h5:/trajectories/000/q", "expected shape"},
             [](const std::string& dir) { write_h5(dir + "/data.h5", 10, 3, false); }},
        Case{"compare_nan_values", "rollout", {}, "--compare {dir}/data.h5", 3,
             {"{dir}/data.h5:/trajectories/000/q", "finite"},
             [](const std::string& dir) { write_h5(dir + "/data.h5", 10, 2, false, std::nan("")); }},
        Case{"compare_joint_mismatch", "rollout", {}, "--compare {dir}/data.h5", 3,
             {"{dir}/data.h5", "joint_names", "elbow"},
             [](const std::string& dir) { write_h5(dir + "/data.h5", 10, 2, false, 0.1, "elbow"); }},
        Case{"controls_file_missing", "rollout", {{"controls", "controls: {type: dataset, file: nope.h5}\n"}}, "", 3,
             {"{dir}/nope.h5: trajectory file does not exist", "named by " + kCfg + ":", "key 'controls.file'"}}),
    case_name);

// ---- simid ----
const char* kLengths = " --config configs/simid_double_pendulum_lengths.yaml";

INSTANTIATE_TEST_SUITE_P(
    Simid, BadInput,
    ::testing::Values(
        Case{"max_iterations_negative", "simid", {}, std::string(kLengths) + " --set estimate.solver.max_iterations=-5",
             2, {"(set by --set)", "estimate.solver.max_iterations", "out of range"}},
        Case{"time_budget_negative", "simid", {}, std::string(kLengths) + " --set estimate.basin_hopping.time_budget=-1",
             2, {"(set by --set)", "estimate.basin_hopping.time_budget", "> 0"}},
        Case{"cost_threshold_nan", "simid", {}, std::string(kLengths) + " --set estimate.basin_hopping.cost_threshold=.nan",
             2, {"estimate.basin_hopping.cost_threshold"}},
        Case{"population_huge", "simid", {}, std::string(kLengths) + " --set estimate.basin_hopping.population=1000000",
             2, {"estimate.basin_hopping.population", "out of range [1, 100000]"}},
        Case{"residual_type_unknown", "simid", {}, std::string(kLengths) + " --set estimate.residual.type=shooting", 2,
             {"estimate.residual.type", "single_shooting, multiple_shooting, inverse_dynamics"}},
        Case{"loss_unknown", "simid", {}, std::string(kLengths) + " --set estimate.residual.loss=l1", 2,
             {"estimate.residual.loss", "huber"}},
        Case{"solver_unknown", "simid", {}, std::string(kLengths) + " --set estimate.solver.type=adam", 2,
             {"estimate.solver.type", "lbfgs"}},
        Case{"evaluation_window_zero", "simid", {}, std::string(kLengths) + " --set estimate.evaluation_window=0", 2,
             {"estimate.evaluation_window", "out of range"}},
        Case{"geometric_prior_without_inertia", "simid", {}, std::string(kLengths) + " --set estimate.prior.geometric=1",
             2, {"estimate.prior.geometric", "no fitted parameter changes a link's inertia"}},
        Case{"geometric_prior_negative", "simid", {}, std::string(kLengths) + " --set estimate.prior.geometric=-1", 2,
             {"estimate.prior.geometric", "out of range"}},
        Case{"observe_nothing", "simid", {}, std::string(kLengths) + " --set estimate.observe.q=0", 2,
             {"estimate.observe", "nothing is observed"}},
        Case{"lbfgs_multiple_shooting", "simid", {},
             std::string(kLengths) + " --set estimate.solver.type=lbfgs --set estimate.residual.type=multiple_shooting",
             2, {"estimate.solver", "lbfgs cannot optimize multiple-shooting states"}},
        Case{"continuity_weight_word", "simid", {},
             std::string(kLengths) + " --set estimate.residual.continuity_weight=fixed", 2,
             {"estimate.residual.continuity_weight", "expected auto or a fixed weight >= 0", "got 'fixed'"}},
        Case{"continuity_rounds_negative", "simid", {},
             std::string(kLengths) + " --set estimate.residual.continuity_rounds=-1", 2,
             {"estimate.residual.continuity_rounds", "out of range"}},
        Case{"max_samples_negative", "simid", {}, std::string(kLengths) + " --set data.max_samples=-1", 2,
             {"data.max_samples", "out of range"}},
        Case{"validation_fraction_too_big", "simid", {}, std::string(kLengths) + " --set data.validation_fraction=1.5",
             2, {"data.validation_fraction", "[0, 1)"}},
        Case{"train_file_missing", "simid", {}, std::string(kLengths) + " --set data.train={dir}/nope.h5", 3,
             {"{dir}/nope.h5", "does not exist"}},
        Case{"train_too_short", "simid", {}, std::string(kLengths) + " --set data.max_samples=2 --set estimate.residual.type=inverse_dynamics",
             3, {"no residuals", "samples", "inverse_dynamics"}},
        // A lumped planar link (inertia about the joint 15 > 0, about the COM
        // −1) is accepted for the planar dynamics, but a log-Cholesky block
        // is a 3-D body: refused, naming the parameter and the link.
        Case{"log_cholesky_of_a_lumped_planar_link", "simid", {},
             std::string(kLengths) + " --set params.link.link2.inertia.yy=-1"
                                     " --set 'estimate.parameters=[{name: link.link2.inertial, transform: log_cholesky}]'",
             2, {"estimate.parameters.0.name", "link 'link2'", "planar chain", "link.link2.inertia.yy"}},
        // simid --evaluate: the file's values are input like any other.
        Case{"evaluate_missing_parameter", "simid", {}, std::string(kLengths) + " --evaluate {dir}/p.json", 3,
             {"{dir}/p.json", "no value for 'link.link2.length'", "estimate.parameters"},
             [](const std::string& d) { write_file(d + "/p.json", R"({"link.link1.length": 3.0})"); }},
        Case{"evaluate_not_json", "simid", {}, std::string(kLengths) + " --evaluate {dir}/p.json", 3, {"{dir}/p.json"},
             [](const std::string& d) { write_file(d + "/p.json", "{link: 3"); }},
        Case{"evaluate_file_missing", "simid", {}, std::string(kLengths) + " --evaluate {dir}/nope.json", 2,
             {"--evaluate", "{dir}/nope.json"}},
        Case{"evaluate_with_resume", "simid", {}, std::string(kLengths) + " --evaluate {dir}/p.json --resume", 2,
             {"nothing to resume", "--evaluate"},
             [](const std::string& d) {
               write_file(d + "/p.json", R"({"link.link1.length": 3.0, "link.link2.length": 4.0})");
             }},
        Case{"bounds_inverted", "simid", {}, std::string(kLengths) + " --set estimate.parameters.0.bounds=[5,1]", 2,
             {"estimate.parameters.0.bounds", "inverted"}},
        // Delays (docs/simid.md, "Delays"): ConfigError, exit 2.
        Case{"control_delay_infinite", "simid", {}, std::string(kLengths) + " --set sim.controls.delay=.inf", 2,
             {"sim.controls.delay", "expected a finite actuation delay in s"}},
        Case{"control_delay_longer_than_data", "simid", {}, std::string(kLengths) + " --set sim.controls.delay=5", 2,
             {"sim.controls.delay", "a delay of 5 s is not shorter than the data",
              "expected |delay| less than the duration"}},
        Case{"control_lead_longer_than_data", "simid", {}, std::string(kLengths) + " --set sim.controls.delay=-5", 2,
             {"sim.controls.delay", "a delay of -5 s is not shorter than the data"}},
        Case{"control_delay_fitted_with_zero_order_hold", "simid", {},
             std::string(kLengths) + " --set 'estimate.parameters=[{name: controls.delay, bounds: [0, 0.02]}]'", 2,
             {"estimate.parameters.0.name", "zero_order_hold", "expected sim.controls.interpolation linear or cubic"}},
        Case{"control_delay_bound_negative", "simid", {},
             std::string(kLengths) + " --set sim.controls.interpolation=cubic"
                                     " --set 'estimate.parameters=[{name: controls.delay, bounds: [-100, 0.02]}]'",
             2, {"estimate.parameters.0.bounds.0", "a delay of -100 s is not shorter than the data"}},
        Case{"sensor_delay_nan", "simid", {}, std::string(kLengths) + " --set 'estimate.observe.q={weight: 1, delay: .nan}'",
             2, {"estimate.observe.q.delay", "expected a number"}},
        Case{"sensor_delay_bound_longer_than_data", "simid", {},
             std::string(kLengths) + " --set 'estimate.parameters=[{name: observe.q.delay, bounds: [0, 100]}]'", 2,
             {"estimate.parameters.0.bounds.1", "not shorter than the data"}},
        Case{"initial_outside_bounds", "simid", {}, std::string(kLengths) + " --set estimate.parameters.0.initial=50",
             2, {"estimate.parameters.0.initial", "outside the bounds"}},
        Case{"log_transform_negative", "simid", {},
             std::string(kLengths) + " --set estimate.parameters.0.transform=log --set estimate.parameters.0.bounds=[-1,10]",
             2, {"estimate.parameters.0.bounds", "log transform"}},
        Case{"ground_truth_not_a_number", "simid", {},
             std::string(kLengths) + " --set estimate.ground_truth.link.link1.length=long", 2,
             {"estimate.ground_truth", "expected a number"}}),
    case_name);

// CSV import descriptions read by simid's data section.
std::string csv_description(const std::string& extra) {
  return "csv_import:\n  files: [log.csv]\n  time: t\n  model: double_pendulum\n  joint_names: [joint1, joint2]\n"
         "  q: [x, y]\n  qd: [x, y]\n" + extra;
}

INSTANTIATE_TEST_SUITE_P(
    SimidCsv, BadInput,
    ::testing::Values(
        Case{"csv_unknown_column", "simid", {}, std::string(kLengths) + " --set data.train={dir}/import.yaml", 2,
             {"{dir}/import.yaml:", "unknown column 'y'", "available columns"},
             [](const std::string& dir) {
               write_file(dir + "/log.csv", "t,x\n0,0\n0.1,0.1\n");
               write_file(dir + "/import.yaml", csv_description(""));
             }},
        Case{"csv_no_matching_file", "simid", {}, std::string(kLengths) + " --set data.train={dir}/import.yaml", 3,
             {"{dir}/import.yaml", "csv_import.files.0", "matches no file"},
             [](const std::string& dir) { write_file(dir + "/import.yaml", csv_description("")); }},
        Case{"csv_time_scale_zero", "simid", {}, std::string(kLengths) + " --set data.train={dir}/import.yaml", 2,
             {"{dir}/import.yaml:", "csv_import.time_scale", "> 0"},
             [](const std::string& dir) {
               write_file(dir + "/log.csv", "t,x,y\n0,0,0\n0.1,0.1,0.1\n");
               write_file(dir + "/import.yaml", csv_description("  time_scale: 0\n"));
             }},
        Case{"csv_unknown_key_beside", "simid", {}, std::string(kLengths) + " --set data.train={dir}/import.yaml", 2,
             {"{dir}/import.yaml:", "unknown key 'scv_import'"},
             [](const std::string& dir) {
               write_file(dir + "/import.yaml", csv_description("") + "scv_import: {}\n");
             }},
        Case{"csv_malformed_number", "simid", {}, std::string(kLengths) + " --set data.train={dir}/import.yaml", 3,
             {"{dir}/log.csv:3", "malformed number '0.1.1'"},
             [](const std::string& dir) {
               write_file(dir + "/log.csv", "t,x,y\n0,0,0\n0.1,0.1.1,0.1\n");
               write_file(dir + "/import.yaml", csv_description(""));
             }},
        Case{"csv_time_backwards", "simid", {}, std::string(kLengths) + " --set data.train={dir}/import.yaml", 3,
             {"{dir}/log.csv:3", "time must increase"},
             [](const std::string& dir) {
               write_file(dir + "/log.csv", "t,x,y\n0.2,0,0\n0.1,0.1,0.1\n");
               write_file(dir + "/import.yaml", csv_description(""));
             }},
        Case{"csv_coordinate_count", "simid", {}, std::string(kLengths) + " --set data.train={dir}/import.yaml", 3,
             {"{dir}/import.yaml", "joint names do not match the model"},
             [](const std::string& dir) {
               write_file(dir + "/log.csv", "t,x,y\n0,0,0\n0.1,0.1,0.1\n");
               write_file(dir + "/import.yaml",
                          "csv_import:\n  files: [log.csv]\n  time: t\n  model: double_pendulum\n"
                          "  joint_names: [joint1]\n  q: [x]\n  qd: [x]\n");
             }}),
    case_name);

// ---- simid --resume: a checkpoint is input ----
void write_checkpoint(const std::string& dir, const std::string& best_x, const std::string& next_round = "1") {
  write_file(dir + "/out/checkpoint.json",
             "{\"format\": \"neuralsim-simid-checkpoint\", \"version\": 2, \"next_round\": " + next_round +
                 ", \"has_best\": true, \"parameter_names\": [\"link.link1.length\", \"link.link2.length\"],"
                 " \"fingerprint\": {}, \"history\": [], \"best\": {\"x\": " + best_x + ", \"cost\": 1.0}}");
}

// A real checkpoint (one quick round), then edited by hand.
const char* kQuickFit =
    " --config configs/simid_double_pendulum_lengths.yaml --set estimate.basin_hopping.rounds=1"
    " --set estimate.basin_hopping.population=1 --set estimate.solver.max_iterations=2 --set data.max_samples=50";

void edit_real_checkpoint(const std::string& dir, const std::function<void(nlohmann::json&)>& edit) {
  const auto r = run_command(testing::app_path("simid") + kQuickFit + " -q --out " + dir + "/out");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = testing::read_json(dir + "/out/checkpoint.json");
  edit(j);
  write_file(dir + "/out/checkpoint.json", j.dump());
}

INSTANTIATE_TEST_SUITE_P(
    SimidResume, BadInput,
    ::testing::Values(
        Case{"resume_without_checkpoint", "simid", {}, std::string(kLengths) + " --resume", 3,
             {"{dir}/out/checkpoint.json", "no checkpoint to resume from"}},
        Case{"resume_corrupt_checkpoint", "simid", {}, std::string(kLengths) + " --resume", 3,
             {"{dir}/out/checkpoint.json", "not JSON"},
             [](const std::string& dir) { write_file(dir + "/out/checkpoint.json", "{\"format\": "); }, true},
        Case{"resume_other_parameters", "simid", {},
             " --config configs/simid_double_pendulum_friction.yaml --resume", 2,
             {"{dir}/out/checkpoint.json", "other parameters"},
             [](const std::string& dir) { write_checkpoint(dir, "[1, 2]"); }, true},
        Case{"resume_other_config", "simid", {}, std::string(kLengths) + " --resume", 2,
             {"{dir}/out/checkpoint.json", "different run", "changed:"},
             [](const std::string& dir) { write_checkpoint(dir, "[1, 2]"); }, true},
        Case{"resume_best_x_too_short", "simid", {}, std::string(kQuickFit) + " --resume", 3,
             {"{dir}/out/checkpoint.json", "best.x must hold 2 numbers"},
             [](const std::string& dir) { edit_real_checkpoint(dir, [](nlohmann::json& j) { j["best"]["x"] = {3.0}; }); },
             true},
        Case{"resume_best_x_huge", "simid", {}, std::string(kQuickFit) + " --resume", 3,
             {"{dir}/out/checkpoint.json", "best.x[0]", "outside its bounds"},
             [](const std::string& dir) { edit_real_checkpoint(dir, [](nlohmann::json& j) { j["best"]["x"][0] = 1e300; }); },
             true},
        Case{"resume_best_null", "simid", {}, std::string(kQuickFit) + " --resume", 3,
             {"{dir}/out/checkpoint.json", "best.x"},
             [](const std::string& dir) { edit_real_checkpoint(dir, [](nlohmann::json& j) { j["best"] = nullptr; }); },
             true},
        Case{"resume_next_round_out_of_range", "simid", {}, std::string(kQuickFit) + " --resume", 3,
             {"{dir}/out/checkpoint.json", "next_round", "outside"},
             [](const std::string& dir) { edit_real_checkpoint(dir, [](nlohmann::json& j) { j["next_round"] = 99; }); },
             true}),
    case_name);

// ---- import-csv ----
std::map<std::string, std::string> import_description(const std::string& extra) {
  return {{"csv_import", "csv_import:\n  files: [log.csv]\n  time: t\n  model: m\n  joint_names: [a]\n"
                         "  q: [x]\n  qd: [y]\n" + extra}};
}
void write_log(const std::string& dir) { write_file(dir + "/log.csv", "t,x,y\n0,0,0\n0.1,0.1,0.1\n"); }

INSTANTIATE_TEST_SUITE_P(
    ImportCsv, BadInput,
    ::testing::Values(
        Case{"import_unknown_top_key", "import-csv", {{"csv_import", import_description("").at("csv_import") + "extra: 1\n"}},
             "", 2, {kCfg + ":", "unknown key 'extra'", "csv_import, description"}, write_log},
        Case{"import_unknown_column", "import-csv", import_description("  tau: [z]\n"), "", 2,
             {kCfg + ":", "csv_import.tau.0", "unknown column 'z'"}, write_log},
        Case{"import_missing_required", "import-csv", {{"csv_import", "csv_import:\n  files: [log.csv]\n"}}, "", 2,
             {kCfg, "missing required key 'csv_import.time'"}, write_log},
        Case{"import_no_file", "import-csv", import_description(""), "", 3, {kCfg, "matches no file"}},
        Case{"import_empty_csv", "import-csv", import_description(""), "", 3, {"{dir}/log.csv", "no records"},
             [](const std::string& dir) { write_file(dir + "/log.csv", ""); }},
        Case{"import_wrong_field_count", "import-csv", import_description(""), "", 3,
             {"{dir}/log.csv:3", "expected 3 fields, got 2"},
             [](const std::string& dir) { write_file(dir + "/log.csv", "t,x,y\n0,0,0\n0.1,0.1\n"); }},
        Case{"import_non_finite", "import-csv", import_description(""), "", 3,
             {"{dir}/log.csv:2", "column 1 ('x')", "finite"},
             [](const std::string& dir) { write_file(dir + "/log.csv", "t,x,y\n0,inf,0\n0.1,0.1,0.1\n"); }},
        Case{"import_delimiter_two_chars", "import-csv", import_description("  delimiter: ';;'\n"), "", 2,
             {kCfg + ":", "csv_import.delimiter", "single character"}, write_log},
        Case{"import_resample_negative", "import-csv", import_description("  resample_dt: -0.1\n"), "", 2,
             {kCfg + ":", "csv_import.resample_dt", "> 0"}, write_log},
        Case{"import_segment_inverted", "import-csv", import_description("  segment: {start: 1, end: 0}\n"), "", 2,
             {kCfg + ":", "csv_import.segment.end", "before its end"}, write_log},
        Case{"import_symlink_loop", "import-csv", import_description(""), "", 3,
             {"{dir}/log.csv: CSV file is a loop of symbolic links"},
             [](const std::string& dir) {
               fs::create_symlink(dir + "/other.csv", dir + "/log.csv");
               fs::create_symlink(dir + "/log.csv", dir + "/other.csv");
             }},
        Case{"import_symlink_loop_glob", "import-csv",
             {{"csv_import", "csv_import:\n  files: ['*.csv']\n  time: t\n  model: m\n  joint_names: [a]\n"
                             "  q: [x]\n  qd: [y]\n"}},
             "", 3, {"{dir}/a.csv: CSV file is a loop of symbolic links"},
             [](const std::string& dir) {
               fs::create_symlink(dir + "/a.csv", dir + "/a.csv");
               write_log(dir);
             }},
        Case{"import_resample_unbounded", "import-csv", import_description("  resample_dt: 1e-300\n"), "", 2,
             {kCfg + ":", "csv_import.resample_dt", "log.csv", "more than the limit of 100000000"}, write_log},
        Case{"import_resample_too_many", "import-csv", import_description("  resample_dt: 1e-12\n"), "", 2,
             {kCfg + ":", "csv_import.resample_dt", "1e+11 samples"}, write_log},
        Case{"import_header_twice", "import-csv", import_description(""), "", 3,
             {"{dir}/log.csv:1:", "column name 'x' appears 2 times", "'csv_import.q.0'", "ambiguous"},
             [](const std::string& dir) { write_file(dir + "/log.csv", "t,x,y,x\n0,0,0,1\n0.1,0.1,0.1,1\n"); }},
        Case{"import_time_twice", "import-csv", import_description(""), "", 3,
             {"{dir}/log.csv:2:", "column name 't' appears 2 times", "'csv_import.time'"},
             [](const std::string& dir) { write_file(dir + "/log.csv", "# exported\nt,t,x,y\n0,0,0,0\n"); }},
        Case{"import_unterminated_quote", "import-csv", import_description(""), "", 3,
             {"{dir}/log.csv:3: field 2", "unterminated quoted field"},
             [](const std::string& dir) { write_file(dir + "/log.csv", "t,x,y\n0,0,0\n0.1,0.1,\"0.1\n"); }},
        Case{"import_binary_file", "import-csv", import_description(""), "", 2,
             {kCfg + ":", "unknown column 't'", "\\x00\\x01\\xff", "\\x1b[2J"},
             [](const std::string& dir) {
               const char bytes[] = "\x7f" "ELF\x00\x01\xff,\x1b[2J,\n\x00\x00\n";
               write_file(dir + "/log.csv", std::string(bytes, sizeof bytes - 1));
             }},
        Case{"import_bom_inside_a_name", "import-csv", import_description(""), "", 2,
             {kCfg + ":", "unknown column 'x'", "\\ufeffx (1)"},
             [](const std::string& dir) { write_file(dir + "/log.csv", "t,\xEF\xBB\xBFx,y\n0,0,0\n"); }},
        // #41: a sample rate instead of a time column, derived velocities, a split.
        Case{"import_rate_and_time", "import-csv", import_description("  sample_rate: 400\n"), "", 2,
             {kCfg + ":", "csv_import.sample_rate", "either a time column or sample_rate, got both"}, write_log},
        Case{"import_rate_not_positive", "import-csv",
             {{"csv_import", "csv_import:\n  files: [log.csv]\n  sample_rate: -400\n  model: m\n  joint_names: [a]\n"
                             "  q: [x]\n  qd: [y]\n"}},
             "", 2, {kCfg + ":", "csv_import.sample_rate", "expected a number > 0 (Hz), got -400"}, write_log},
        Case{"import_derive_window_even", "import-csv",
             {{"csv_import", "csv_import:\n  files: [log.csv]\n  sample_rate: 400\n  model: m\n  joint_names: [a]\n"
                             "  q: [x]\n  qd: {derive: savitzky_golay, window: 20, order: 3}\n"}},
             "", 2, {kCfg + ":", "csv_import.qd.window", "odd", "got 20"}, write_log},
        Case{"import_derive_window_too_long", "import-csv",
             {{"csv_import", "csv_import:\n  files: [log.csv]\n  sample_rate: 400\n  model: m\n  joint_names: [a]\n"
                             "  q: [x]\n  qd: {derive: central_difference}\n"}},
             "", 2, {kCfg + ":", "csv_import.qd.derive", "shorter than the 2 samples of", "got 3"}, write_log},
        Case{"import_split_empty_range", "import-csv", import_description("  split: {validation: [0.5, 0.5]}\n"), "", 2,
             {kCfg + ":", "csv_import.split.validation", "empty range [0.5, 0.5]"}, write_log},
        Case{"import_split_no_samples", "import-csv", import_description("  split: {validation: [5, 6]}\n"), "", 2,
             {kCfg + ":", "csv_import.split.validation", "at least 2 samples of", "got 0"}, write_log},
        Case{"import_out_reused", "import-csv", import_description(""), "", 2, {"{dir}/out", "earlier run", "--force"},
             [](const std::string& dir) {
               write_log(dir);
               write_file(dir + "/out/summary.json", "{\"outputs\": []}");
             },
             true}),
    case_name);

// ---- train-augment ----
// A small valid training run on shipped data (copied into the case
// directory by the runner); cases replace sections.
std::map<std::string, std::string> train_sections(const std::map<std::string, std::string>& changes) {
  std::map<std::string, std::string> s = {
      {"model", "model: {file: pendulum.yaml}\n"},
      {"sim", "sim: {integrator: semi_implicit_euler, dt: 0.002}\n"},
      {"augment", "augment:\n  - {name: damping, site: joint.joint1.torque, inputs: [joint.joint1.qd], hidden: [4]}\n"},
      {"data", "data: {train: pendulum_pd.h5, validation_fraction: 0.25}\n"},
      {"train", "train: {mode: unrolled, window_steps: 5, epochs: 1, batch_size: 4, train_samples: 200}\n"}};
  for (const auto& [key, text] : changes) s[key] = text;
  return s;
}
// The train section with `fields` added; a field given here replaces the default.
std::string train_line(const std::string& fields) {
  std::string out = "train: {";
  for (const char* d : {"window_steps: 5", "epochs: 1", "train_samples: 200"}) {
    const std::string key = std::string(d).substr(0, std::string(d).find(':') + 1);
    if (fields.find(key) == std::string::npos) out += std::string(d) + ", ";
  }
  return out + fields + "}\n";
}

INSTANTIATE_TEST_SUITE_P(
    TrainAugment, BadInput,
    ::testing::Values(
        // Window training replays with a control delay shorter than every recording.
        Case{"train_control_delay_beyond_data", "train-augment",
             train_sections({{"sim", "sim: {integrator: semi_implicit_euler, dt: 0.002, controls: {delay: 1000}}\n"}}),
             "", 2, {kCfg + ":", "sim.controls.delay", "is not shorter than the data"}},
        Case{"train_sensor_delay_parameter", "train-augment",
             train_sections({{"sim", "sim: {integrator: semi_implicit_euler, dt: 0.002}\nparams: {observe.q.delay: 0.01}\n"}}),
             "", 2, {kCfg + ":", "observe.q.delay", "without a sensor delay"}},
        Case{"train_fitted_control_delay", "train-augment",
             train_sections({{"train", train_line("physical: [{name: controls.delay, bounds: [0, 0.01]}]")}}), "", 2,
             {kCfg + ":", "train.physical.0.name", "only simid fits a delay"}},
        Case{"train_mode_unknown", "train-augment", train_sections({{"train", train_line("batch_size: 4, mode: teacher")}}),
             "", 2, {kCfg + ":", "train.mode", "one of one_step, unrolled_detached, unrolled", "'teacher'"}},
        Case{"train_learning_rate_nan", "train-augment", train_sections({{"train", train_line("learning_rate: .nan")}}),
             "", 2, {kCfg + ":", "train.learning_rate", "'.nan'"}},
        Case{"train_learning_rate_zero", "train-augment", train_sections({{"train", train_line("learning_rate: 0")}}),
             "", 2, {kCfg + ":", "train.learning_rate", "out of range"}},
        Case{"train_epochs_not_integer", "train-augment", train_sections({{"train", train_line("epochs: 1e12")}}), "",
             2, {kCfg + ":", "train.epochs", "expected an integer", "'1e12'"}},
        Case{"train_window_zero", "train-augment", train_sections({{"train", train_line("window_steps: 0")}}), "", 2,
             {kCfg + ":", "train.window_steps", "0 is out of range"}},
        Case{"train_batch_negative", "train-augment", train_sections({{"train", train_line("batch_size: -4")}}), "", 2,
             {kCfg + ":", "train.batch_size", "-4 is out of range"}},
        Case{"train_samples_below_window", "train-augment",
             train_sections({{"train", "train: {window_steps: 5, train_samples: 3}\n"}}), "", 2,
             {kCfg + ":", "train.train_samples", "must exceed window_steps (5)"}},
        Case{"train_unknown_key", "train-augment", train_sections({{"train", train_line("epoch: 3")}}), "", 2,
             {kCfg + ":", "unknown key 'train.epoch'", "did you mean 'epochs'"}},
        Case{"train_physical_on_baseline", "train-augment",
             train_sections({{"train", train_line("model: lstm, physical: [joint.joint1.damping]")}}), "", 2,
             {kCfg + ":", "train.physical", "only a hybrid model"}},
        Case{"train_lbfgs_with_decay", "train-augment",
             train_sections({{"train", train_line("optimizer: lbfgs, weight_decay: 0.1")}}), "", 2,
             {kCfg + ":", "train.weight_decay", "adam only"}},
        Case{"train_hidden_too_wide", "train-augment",
             train_sections({{"augment", "augment:\n  - {name: d, site: joint.joint1.torque, inputs: [joint.joint1.qd], "
                                         "hidden: [100000]}\n"}}),
             "", 2, {kCfg + ":", "augment.0.hidden.0", "[1, 4096]", "100000"}},
        Case{"train_unknown_site", "train-augment",
             train_sections({{"augment", "augment:\n  - {name: d, site: joint.nope.torque, inputs: [joint.joint1.qd]}\n"}}),
             "", 2, {kCfg + ":", "augment.0.site", "unknown site 'joint.nope.torque'", "joints: joint1"}},
        Case{"train_validation_fraction", "train-augment",
             train_sections({{"data", "data: {train: pendulum_pd.h5, validation_fraction: 1.5}\n"}}),
             "", 2, {kCfg + ":", "data.validation_fraction", "[0, 1)"}},
        // Honest splits (#38): a held-out set that is the training file.
        Case{"train_test_overlaps_train", "train-augment",
             train_sections({{"data", "data: {train: pendulum_pd.h5, validation_fraction: 0.25, test: ./pendulum_pd.h5}\n"}}),
             "", 2, {kCfg + ":", "data.test", "overlaps data.train"}},
        Case{"train_test_fraction_one", "train-augment",
             train_sections({{"data", "data: {train: pendulum_pd.h5, test_fraction: 1}\n"}}),
             "", 2, {kCfg + ":", "data.test_fraction", "[0, 1)"}},
        Case{"train_data_missing", "train-augment",
             train_sections({{"data", "data: {train: nofile.h5, validation_fraction: 0.25}\n"}}), "", 3,
             {"{dir}/nofile.h5", "does not exist", kCfg + ":", "key 'data.train'"}},
        Case{"train_data_not_hdf5", "train-augment",
             train_sections({{"data", "data: {train: garbage.h5, validation_fraction: 0.25}\n"}}), "", 3,
             {"{dir}/garbage.h5", "not an HDF5 file", "key 'data.train'"},
             [](const std::string& dir) { write_file(dir + "/garbage.h5", "not hdf5\n"); }},
        Case{"train_set_wrong_type", "train-augment", train_sections({}), "--set train.epochs=many", 2,
             {kCfg + " (set by --set)", "train.epochs", "expected an integer", "'many'"}},
        Case{"train_out_reused", "train-augment", train_sections({}), "", 2, {"{dir}/out", "earlier run", "--force"},
             [](const std::string& dir) {
               write_file(dir + "/out/summary.json", "{\"app\": \"simid\", \"outputs\": []}");
             },
             true},
        Case{"train_resume_corrupt_checkpoint", "train-augment", train_sections({}), "--resume", 3,
             {"{dir}/out/checkpoint.json"},
             [](const std::string& dir) {
               write_file(dir + "/out/.neuralsim-run.json", "{}");
               write_file(dir + "/out/checkpoint.json", "{\"format\": \"neuralsim-train-checkpoint\", \"x\": [1e999]}");
             },
             true}),
    case_name);

// ---- discover ----
// A small valid discovery on shipped data (copied into the case directory
// by the runner); cases replace sections.
std::map<std::string, std::string> discover_sections(const std::string& discover) {
  std::map<std::string, std::string> s =
      train_sections({{"augment", ""}, {"data", "data: {train: pendulum_pd.h5, validation: pendulum_pd.h5}\n"}});
  s["discover"] = "discover:\n" + discover;
  return s;
}
const std::string kDiscoverInputs = "  inputs: [joint.joint1.qd]\n";

INSTANTIATE_TEST_SUITE_P(
    Discover, BadInput,
    ::testing::Values(
        Case{"discover_unknown_site", "discover", discover_sections("  sites: [joint.joint1.torqe]\n" + kDiscoverInputs),
             "", 2, {kCfg + ":", "discover.sites.0", "unknown site 'joint.joint1.torqe'", "did you mean 'joint.joint1.torque'"}},
        Case{"discover_unknown_input", "discover", discover_sections("  sites: [joint.*.torque]\n  inputs: [joint.joint1.qdd]\n"),
             "", 2, {kCfg + ":", "discover.inputs.0", "unknown input 'joint.joint1.qdd'", "did you mean 'joint.joint1.qd'"}},
        Case{"discover_no_sites", "discover", discover_sections("  sites: []\n" + kDiscoverInputs), "", 2,
             {kCfg + ":", "discover.sites", "no sites"}},
        Case{"discover_path_not_decreasing", "discover",
             discover_sections("  sites: [joint.*.torque]\n" + kDiscoverInputs + "  penalty: {lambdas: [0.1, 0.3]}\n"), "", 2,
             {kCfg + ":", "discover.penalty.lambdas.1", "strictly decreasing"}},
        Case{"discover_path_not_finite", "discover",
             discover_sections("  sites: [joint.*.torque]\n" + kDiscoverInputs + "  penalty: {lambdas: [.inf, 0.3]}\n"), "", 2,
             {kCfg + ":", "discover.penalty.lambdas.0"}},
        Case{"discover_contact_input_at_joint", "discover",
             discover_sections("  sites: [joint.*.torque]\n  inputs: [contact.depth]\n"), "", 2,
             {kCfg + ":", "discover.inputs.0", "cannot be seen at site 'joint.joint1.torque'", "contact sites"}},
        Case{"discover_star_twice", "discover", discover_sections("  sites: [link.*.*]\n" + kDiscoverInputs), "", 2,
             {kCfg + ":", "discover.sites.0", "'*' stands for a joint or link name"}},
        Case{"discover_replace_mode", "discover",
             discover_sections("  sites: [joint.*.torque]\n" + kDiscoverInputs + "  mode: replace\n"), "", 2,
             {kCfg + ":", "discover.mode", "one of residual, scale"}},
        Case{"discover_frame_at_joint_site", "discover",
             discover_sections("  sites: [{site: joint.*.torque, frame: body}]\n" + kDiscoverInputs), "", 2,
             {kCfg + ":", "discover.sites.0.frame", "has no frame"}},
        Case{"discover_missing_section", "discover", train_sections({{"augment", ""}}), "", 2,
             {kCfg + ":", "discover", "missing required section"}}),
    case_name);

// ---- every file a tool reads must be a regular file: never opened otherwise ----
// A FIFO without a writer would block the open, a character device never
// ends; a directory, a loop of links are named as such. Each kind of input
// of each tool (the deadline fails a case that blocks).
void fifo(const std::string& path) {
  fs::create_directories(fs::path(path).parent_path());
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0) << path;
}
const char* kDistill = " --config configs/distill_double_integrator.yaml";

INSTANTIATE_TEST_SUITE_P(
    NotRegularFiles, BadInput,
    ::testing::Values(
        // --config, every tool
        Case{"config_fifo_rollout", "rollout", {}, "--config {dir}/fifo.yaml", 2, {"{dir}/fifo.yaml: config file is a FIFO"},
             [](const std::string& dir) { fifo(dir + "/fifo.yaml"); }},
        Case{"config_fifo_simid", "simid", {}, "--config {dir}/fifo.yaml", 2, {"{dir}/fifo.yaml: config file is a FIFO"},
             [](const std::string& dir) { fifo(dir + "/fifo.yaml"); }},
        Case{"config_fifo_train_augment", "train-augment", {}, "--config {dir}/fifo.yaml", 2,
             {"{dir}/fifo.yaml: config file is a FIFO"}, [](const std::string& dir) { fifo(dir + "/fifo.yaml"); }},
        Case{"config_fifo_distill_mpc", "distill-mpc", {}, "--config {dir}/fifo.yaml", 2,
             {"{dir}/fifo.yaml: config file is a FIFO"}, [](const std::string& dir) { fifo(dir + "/fifo.yaml"); }},
        Case{"config_fifo_import_csv", "import-csv", {}, "--config {dir}/fifo.yaml", 2,
             {"{dir}/fifo.yaml: config file is a FIFO"}, [](const std::string& dir) { fifo(dir + "/fifo.yaml"); }},
        Case{"config_fifo_discover", "discover", {}, "--config {dir}/fifo.yaml", 2,
             {"{dir}/fifo.yaml: config file is a FIFO"}, [](const std::string& dir) { fifo(dir + "/fifo.yaml"); }},
        Case{"config_character_device", "import-csv", {}, "--config " + kDevice, 2, {kDevice + ": config file is a character device"}},
        Case{"config_directory", "rollout", {}, "--config {dir}", 2, {"--config", "{dir}"}},
        // models
        Case{"urdf_fifo", "rollout", {{"model", "model: {urdf: fifo.urdf}\n"}}, "", 2,
             {kCfg + ":", "key 'model.urdf'", "{dir}/fifo.urdf: URDF file is a FIFO"},
             [](const std::string& dir) { fifo(dir + "/fifo.urdf"); }},
        Case{"urdf_character_device", "rollout", {{"model", "model: {urdf: " + kDevice + "}\n"}}, "", 2,
             {kCfg + ":", "key 'model.urdf'", kDevice + ": URDF file is a character device"}},
        Case{"model_file_fifo", "rollout", {{"model", "model: {file: fifo.yaml}\n"}}, "", 2,
             {kCfg + ":", "key 'model.file'", "{dir}/fifo.yaml: model file is a FIFO"},
             [](const std::string& dir) { fifo(dir + "/fifo.yaml"); }},
        Case{"model_file_directory", "train-augment", train_sections({{"model", "model: {file: models}\n"}}), "", 2,
             {kCfg + ":", "key 'model.file'", "{dir}/models: model file is a directory"},
             [](const std::string& dir) { fs::create_directory(dir + "/models"); }},
        // data, parameters, weights
        Case{"compare_fifo", "rollout", {}, "--compare {dir}/fifo.h5", 3, {"{dir}/fifo.h5: trajectory file is a FIFO"},
             [](const std::string& dir) { fifo(dir + "/fifo.h5"); }},
        Case{"controls_file_fifo", "rollout", {{"controls", "controls: {type: dataset, file: fifo.h5}\n"}}, "", 3,
             {"{dir}/fifo.h5: trajectory file is a FIFO", "key 'controls.file'"},
             [](const std::string& dir) { fifo(dir + "/fifo.h5"); }},
        Case{"train_data_fifo", "train-augment",
             train_sections({{"data", "data: {train: fifo.h5, validation_fraction: 0.25}\n"}}), "", 3,
             {"{dir}/fifo.h5: trajectory file is a FIFO", "named by " + kCfg + ":", "key 'data.train'"},
             [](const std::string& dir) { fifo(dir + "/fifo.h5"); }},
        Case{"train_data_directory", "discover",
             discover_sections("  sites: [joint.*.torque]\n" + kDiscoverInputs), "--set data.validation={dir}", 3,
             {"{dir}: trajectory file is a directory", "key 'data.validation'"}},
        Case{"csv_description_fifo", "simid", {}, std::string(kLengths) + " --set data.train={dir}/fifo.yaml", 2,
             {"{dir}/fifo.yaml: CSV import description is a FIFO", "key 'data.train'"},
             [](const std::string& dir) { fifo(dir + "/fifo.yaml"); }},
        Case{"params_file_fifo", "rollout", {{"params_file", "params_file: fifo.json\n"}}, "", 3,
             {"{dir}/fifo.json: parameter file is a FIFO", "key 'params_file'"},
             [](const std::string& dir) { fifo(dir + "/fifo.json"); }},
        Case{"params_file_character_device", "rollout", {{"params_file", "params_file: " + kDevice + "\n"}}, "", 3,
             {kDevice + ": parameter file is a character device"}},
        Case{"distill_data_fifo", "distill-mpc", {}, std::string(kDistill) + " --set distill.data.file={dir}/fifo.h5", 3,
             {"{dir}/fifo.h5: distillation dataset is a FIFO"}, [](const std::string& dir) { fifo(dir + "/fifo.h5"); }},
        Case{"distill_weights_fifo", "distill-mpc", {}, std::string(kDistill) + " --set distill.evaluate.weights={dir}/fifo.h5",
             3, {"{dir}/fifo.h5: weights file is a FIFO"}, [](const std::string& dir) { fifo(dir + "/fifo.h5"); }},
        // checkpoints (--resume) and an earlier run's summary (--force)
        Case{"resume_checkpoint_fifo_simid", "simid", {}, std::string(kLengths) + " --resume", 3,
             {"{dir}/out/checkpoint.json: checkpoint is a FIFO"},
             [](const std::string& dir) { fifo(dir + "/out/checkpoint.json"); }, true},
        Case{"resume_checkpoint_fifo_train_augment", "train-augment", train_sections({}), "--resume", 3,
             {"{dir}/out/checkpoint.json: checkpoint is a FIFO"},
             [](const std::string& dir) {
               write_file(dir + "/out/.neuralsim-run.json", "{}");
               fifo(dir + "/out/checkpoint.json");
             },
             true},
        Case{"resume_checkpoint_directory_distill", "distill-mpc", {}, std::string(kDistill) + " --resume", 3,
             {"{dir}/out/checkpoint.json: checkpoint is a directory"},
             [](const std::string& dir) { fs::create_directories(dir + "/out/checkpoint.json"); }, true},
        Case{"force_summary_fifo", "rollout", {}, "--force", 2, {"{dir}/out/summary.json: summary of an earlier run is a FIFO"},
             [](const std::string& dir) { fifo(dir + "/out/summary.json"); }, true}),
    case_name);

// ---- --out the system cannot take: refused by every tool before any work ----
const std::string kLongName(300, 'n');
std::string long_path() {
  std::string p;
  for (int i = 0; i < 45; ++i) p += "/" + std::string(100, 'd');
  return p;
}

INSTANTIATE_TEST_SUITE_P(
    OutPaths, BadInput,
    ::testing::Values(
        Case{"out_name_max_rollout", "rollout", {}, "--out {dir}/" + kLongName, 2, {"--out", "NAME_MAX", "300"}},
        Case{"out_name_max_simid", "simid", {}, std::string(kLengths) + " --out {dir}/" + kLongName, 2, {"--out", "NAME_MAX"}},
        Case{"out_name_max_train_augment", "train-augment", train_sections({}), "--out {dir}/" + kLongName, 2,
             {"--out", "NAME_MAX"}},
        Case{"out_name_max_distill_mpc", "distill-mpc", {}, std::string(kDistill) + " --out {dir}/" + kLongName, 2,
             {"--out", "NAME_MAX"}},
        Case{"out_name_max_import_csv", "import-csv", import_description(""), "--out {dir}/" + kLongName, 2,
             {"--out", "NAME_MAX"}, write_log},
        Case{"out_name_max_discover", "discover", discover_sections("  sites: [joint.*.torque]\n" + kDiscoverInputs),
             "--out {dir}/" + kLongName, 2, {"--out", "NAME_MAX"}},
        Case{"out_path_max_rollout", "rollout", {}, "--out {dir}" + long_path(), 2, {"--out", "PATH_MAX"}},
        Case{"out_path_max_train_augment", "train-augment", train_sections({}), "--out {dir}" + long_path(), 2,
             {"--out", "PATH_MAX"}},
        Case{"out_path_max_distill_mpc", "distill-mpc", {}, std::string(kDistill) + " --out {dir}" + long_path(), 2,
             {"--out", "PATH_MAX"}},
        Case{"out_path_max_import_csv", "import-csv", import_description(""), "--out {dir}" + long_path(), 2,
             {"--out", "PATH_MAX"}, write_log},
        Case{"output_name_too_long", "rollout", {{"output", "output: {file: " + kLongName + "}\n"}}, "", 2,
             {kCfg + ":", "output.file", "at most 200 bytes"}}),
    case_name);

// ---- distill-mpc: finite data the network's scaling cannot represent ----
void write_distill(const std::string& path, double feature, double target, bool alternate) {
  DistillDataset d;
  const int n = 8;
  d.features = DistillDataset::RowMatrixXd::Zero(n, 2);
  d.targets = DistillDataset::RowMatrixXd::Zero(n, 1);
  for (int k = 0; k < n; ++k) {
    const double sign = alternate && k % 2 ? -1.0 : 1.0;
    d.features(k, 1) = sign * feature;
    d.targets(k, 0) = sign * target;
  }
  d.episode = Eigen::VectorXd::LinSpaced(n, 0, n - 1);
  d.time = Eigen::VectorXd::Zero(n);
  write_distill_dataset(path, d);
}

INSTANTIATE_TEST_SUITE_P(
    DistillMpc, BadInput,
    ::testing::Values(
        Case{"distill_targets_huge", "distill-mpc", {}, std::string(kDistill) + " --set distill.data.file={dir}/d.h5", 3,
             {"{dir}/d.h5:/targets: column 0 has mean 1.0000000000000001e+300", "at most 1e+100"},
             [](const std::string& dir) { write_distill(dir + "/d.h5", 1.0, 1e300, false); }},
        Case{"distill_targets_spread", "distill-mpc", {}, std::string(kDistill) + " --set distill.data.file={dir}/d.h5", 3,
             {"{dir}/d.h5:/targets: column 0 has mean 0 and standard deviation 9.9999999999999998e+149"},
             [](const std::string& dir) { write_distill(dir + "/d.h5", 1.0, 1e150, true); }},
        Case{"distill_features_huge", "distill-mpc", {}, std::string(kDistill) + " --set distill.data.file={dir}/d.h5", 3,
             {"{dir}/d.h5:/features: column 1", "standard deviation 1.7976931348623157e+308"},
             [](const std::string& dir) { write_distill(dir + "/d.h5", 1.7976931348623157e308, 1.0, true); }}),
    case_name);

}  // namespace
}  // namespace neuralsim
