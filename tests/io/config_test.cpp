#include "neuralsim/io/config.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "neuralsim/core/errors.hpp"
#include "support/files.hpp"

namespace neuralsim {
namespace {

namespace fs = std::filesystem;

// Each test gets its own directory so parallel ctest runs do not collide.
class ConfigTest : public testing::TempDirTest {
 protected:

  // The message of the ConfigError thrown by f, or "" (a failure) if none.
  template <class F>
  static std::string error_of(F&& f) {
    try {
      f();
    } catch (const ConfigError& e) {
      return e.what();
    }
    ADD_FAILURE() << "expected a ConfigError";
    return "";
  }

};

const char* const kSample =
    "sim:\n"                      // 1
    "  dt: 0.001\n"               // 2
    "  steps: 100\n"              // 3
    "  integrator: rk4\n"         // 4
    "  verbose: true\n"           // 5
    "init:\n"                     // 6
    "  q: [0.1, 0.2]\n"           // 7
    "names: [a, b]\n"             // 8
    "controls:\n"                 // 9
    "  - amplitude: 1.5\n"        // 10
    "  - amplitude: oops\n"       // 11
    "model: models/arm.urdf\n"    // 12
    "quoted: \"123\"\n"           // 13
    "big: 10000000000\n"          // 14
    "empty:\n";                   // 15

TEST_F(ConfigTest, ReadsEverySupportedType) {
  const Config c = Config::load(write("c.yaml", kSample));
  EXPECT_DOUBLE_EQ(c.get<double>("sim.dt"), 0.001);
  EXPECT_EQ(c.get<int>("sim.steps"), 100);
  EXPECT_EQ(c.get<long long>("big"), 10000000000LL);
  EXPECT_TRUE(c.get<bool>("sim.verbose"));
  EXPECT_EQ(c.get<std::string>("sim.integrator"), "rk4");
  EXPECT_EQ(c.get<std::vector<double>>("init.q"), (std::vector<double>{0.1, 0.2}));
  EXPECT_EQ(c.get<std::vector<std::string>>("names"), (std::vector<std::string>{"a", "b"}));
  const Eigen::VectorXd q = c.get<Eigen::VectorXd>("init.q");
  ASSERT_EQ(q.size(), 2);
  EXPECT_DOUBLE_EQ(q[1], 0.2);
  EXPECT_DOUBLE_EQ(c.get<double>("controls.0.amplitude"), 1.5);  // list index in a path
  EXPECT_EQ(c.get<std::string>("quoted"), "123");
}

TEST_F(ConfigTest, WrongTypeNamesFileLineColumnAndKey) {
  const std::string file = write("c.yaml", kSample);
  const Config c = Config::load(file);
  EXPECT_EQ(error_of([&] { c.get<double>("sim.integrator"); }),
            file + ":4:15: key 'sim.integrator': expected a number, got 'rk4'");
  EXPECT_EQ(error_of([&] { c.get<int>("sim.dt"); }),
            file + ":2:7: key 'sim.dt': expected an integer, got '0.001'");
  EXPECT_EQ(error_of([&] { c.get<bool>("sim.steps"); }),
            file + ":3:10: key 'sim.steps': expected true or false, got '100'");
  EXPECT_EQ(error_of([&] { c.get<double>("init"); }),
            file + ":7:3: key 'init': expected a number, got a map");
  // The int range is checked rather than silently truncated.
  EXPECT_NE(error_of([&] { c.get<int>("big"); }).find(file + ":14:6: key 'big'"),
            std::string::npos);
  // Element errors point at the element.
  EXPECT_EQ(error_of([&] { c.get<std::vector<double>>("names"); }),
            file + ":8:9: key 'names.0': expected a number, got 'a'");
}

TEST_F(ConfigTest, SubConfigsKeepTheirKeyPrefix) {
  const std::string file = write("c.yaml", kSample);
  const Config c = Config::load(file);
  const std::vector<Config> controls = c.list("controls");
  ASSERT_EQ(controls.size(), 2u);
  EXPECT_DOUBLE_EQ(controls[0].get<double>("amplitude"), 1.5);
  EXPECT_EQ(error_of([&] { controls[1].get<double>("amplitude"); }),
            file + ":11:16: key 'controls.1.amplitude': expected a number, got 'oops'");
  const Config sim = c.at("sim");
  EXPECT_EQ(sim.prefix(), "sim");
  EXPECT_EQ(error_of([&] { sim.get<double>("gravity"); }),
            file + ": missing required key 'sim.gravity'");
  EXPECT_EQ(error_of([&] { c.at("names"); }),
            file + ":8:8: key 'names': expected a map, got a list");
}

TEST_F(ConfigTest, MissingAndEmptyKeys) {
  const std::string file = write("c.yaml", kSample);
  const Config c = Config::load(file);
  EXPECT_EQ(error_of([&] { c.get<double>("sim.gravity"); }),
            file + ": missing required key 'sim.gravity'");
  EXPECT_FALSE(c.has("sim.gravity"));
  EXPECT_TRUE(c.has("sim.dt"));
  EXPECT_DOUBLE_EQ(c.get_or("sim.gravity", 9.81), 9.81);
  EXPECT_DOUBLE_EQ(c.get_or("sim.dt", 9.81), 0.001);
  EXPECT_EQ(c.get_or("nothing.here", "default"), "default");
  // An empty value counts as unset for defaults, but a required one names it.
  EXPECT_FALSE(c.has("empty"));
  EXPECT_EQ(c.get_or("empty", 3), 3);
  EXPECT_NE(error_of([&] { c.get<int>("empty"); }).find("key 'empty' is empty"),
            std::string::npos);
  // A present value of the wrong type is never replaced by the default.
  EXPECT_THROW(c.get_or("sim.integrator", 1.0), ConfigError);
}

TEST_F(ConfigTest, OverridesScalarsListsNestedAndIndices) {
  const std::string file = write("c.yaml", kSample);
  const Config c = Config::load(file, {"sim.dt=0.002", "init.q=[0.3,0.4,0.5]", "name=foo",
                                       "controls.1.amplitude=2", "new.section.value=7",
                                       "controls.2.amplitude=5", "sim.steps=1", "sim.steps=2"});
  EXPECT_DOUBLE_EQ(c.get<double>("sim.dt"), 0.002);
  EXPECT_EQ(c.get<std::vector<double>>("init.q"), (std::vector<double>{0.3, 0.4, 0.5}));
  EXPECT_EQ(c.get<std::string>("name"), "foo");
  EXPECT_DOUBLE_EQ(c.get<double>("controls.1.amplitude"), 2.0);
  EXPECT_DOUBLE_EQ(c.get<double>("controls.0.amplitude"), 1.5);  // neighbour untouched
  EXPECT_EQ(c.get<int>("new.section.value"), 7);
  EXPECT_EQ(c.list("controls").size(), 3u);  // index == size appends
  EXPECT_EQ(c.get<int>("sim.steps"), 2);      // later overrides win
  EXPECT_EQ(c.get<std::string>("sim.integrator"), "rk4");  // siblings kept

  EXPECT_EQ(c.where("sim.dt"), file + " (set by --set)");
  EXPECT_EQ(c.where("new.section.value"), file + " (set by --set)");
  EXPECT_EQ(c.where("sim.integrator"), file + ":4");
  EXPECT_EQ(c.where("no.such.key"), file);
}

TEST_F(ConfigTest, ErrorsAboutOverriddenKeysSaySetByCommandLine) {
  const std::string file = write("c.yaml", kSample);
  const Config c = Config::load(file, {"sim.dt=abc", "extra.key=1"});
  EXPECT_EQ(error_of([&] { c.get<double>("sim.dt"); }),
            file + " (set by --set): key 'sim.dt': expected a number, got 'abc'");
  const std::vector<std::string> file_keys = {"sim",   "init",   "names", "controls",
                                              "model", "quoted", "big",   "empty"};
  const std::string msg = error_of([&] { c.check_known_keys(file_keys); });
  EXPECT_EQ(msg, file + " (set by --set): unknown key 'extra' (allowed keys: sim, init, names, "
                        "controls, model, quoted, big, empty)");
}

TEST_F(ConfigTest, MalformedOverridesNameTheOverride) {
  const std::string file = write("c.yaml", kSample);
  for (const std::string bad : {"sim.dt", "=3", "sim..dt=1", "init.q=[0.1,", "sim.dt.x=1",
                                "controls.9.amplitude=1", "controls.x.amplitude=1"}) {
    const std::string msg = error_of([&] { Config::load(file, {bad}); });
    EXPECT_NE(msg.find("--set '" + bad + "'"), std::string::npos) << msg;
  }
}

TEST_F(ConfigTest, MalformedYamlGivesFileLineColumn) {
  const std::string f1 = write("bad1.yaml", "a: 1\nb: c: d\n");
  EXPECT_EQ(error_of([&] { Config::load(f1); }).rfind(f1 + ":2:5: ", 0), 0u);
  const std::string f2 = write("bad2.yaml", "sim:\n  dt: 0.1\n  q: ]\n");
  EXPECT_EQ(error_of([&] { Config::load(f2); }).rfind(f2 + ":3:6: ", 0), 0u);
  const std::string f3 = write("list.yaml", "- 1\n- 2\n");
  EXPECT_NE(error_of([&] { Config::load(f3); }).find("top level of a config must be a map"),
            std::string::npos);
  const std::string missing = (dir_ / "nope.yaml").string();
  EXPECT_NE(error_of([&] { Config::load(missing); }).find(missing), std::string::npos);
}

TEST_F(ConfigTest, EmptyFileIsAnEmptyMap) {
  const Config c = Config::load(write("empty.yaml", ""), {"a=1"});
  EXPECT_EQ(c.get<int>("a"), 1);
}

TEST_F(ConfigTest, DuplicateKeysAreRejectedWithBothLines) {
  const std::string file = write("dup.yaml", "sim:\n  dt: 0.1\n  steps: 3\n  dt: 0.2\n");
  EXPECT_EQ(error_of([&] { Config::load(file); }),
            file + ":4:3: duplicate key 'sim.dt' (first defined at line 2)");
}

TEST_F(ConfigTest, UnknownKeysNameLineSuggestionAndAllowedKeys) {
  const std::string file = write("typo.yaml", "sim:\n  dt: 0.1\n  stpes: 10\n");
  const Config c = Config::load(file);
  c.check_known_keys({"sim"});  // the top level is fine
  const std::string msg = error_of([&] { c.at("sim").check_known_keys({"dt", "steps"}); });
  EXPECT_EQ(msg.rfind(file + ":3:3: unknown key 'sim.stpes'", 0), 0u) << msg;
  EXPECT_NE(msg.find("did you mean 'steps'?"), std::string::npos) << msg;
  EXPECT_NE(msg.find("allowed keys: dt, steps"), std::string::npos) << msg;
  // No suggestion for something unrelated.
  const std::string other = error_of([&] { c.at("sim").check_known_keys({"dt", "gravity"}); });
  EXPECT_EQ(other.find("did you mean"), std::string::npos) << other;
}

TEST_F(ConfigTest, RangeAndChoiceChecks) {
  const std::string file = write("c.yaml", kSample);
  const Config c = Config::load(file);
  c.check_range("sim.dt", 0.0, 0.1);
  c.check_range("sim.gravity", 0.0, 1.0);  // absent: not checked
  EXPECT_EQ(error_of([&] { c.check_range("sim.steps", 1, 10); }),
            file + ":3:10: key 'sim.steps': 100 is out of range [1, 10]");
  c.check_one_of("sim.integrator", {"euler", "rk4"});
  EXPECT_EQ(error_of([&] { c.check_one_of("sim.integrator", {"euler", "semi_implicit"}); }),
            file + ":4:15: key 'sim.integrator': expected one of euler, semi_implicit, got 'rk4'");
}

TEST_F(ConfigTest, PathsResolveRelativeToTheConfigFile) {
  const std::string file = write("sub/dir/c.yaml",
                                 "model: models/arm.urdf\n"
                                 "data: ../data/x.h5\n"
                                 "abs: /opt/x.urdf\n"
                                 "cli: whatever\n");
  const Config c = Config::load(file, {"cli=local/file.h5"});
  const fs::path base = dir_ / "sub" / "dir";
  EXPECT_EQ(c.path("model"), (base / "models/arm.urdf").string());
  EXPECT_EQ(c.path("data"), (dir_ / "sub" / "data/x.h5").string());
  EXPECT_EQ(c.path("abs"), "/opt/x.urdf");
  // Command-line paths are relative to where the command is run.
  EXPECT_EQ(c.path("cli"), "local/file.h5");
  EXPECT_THROW(c.path("missing"), ConfigError);
}

TEST_F(ConfigTest, ToJsonKeepsTypes) {
  const Config c = Config::load(write("c.yaml", kSample), {"sim.dt=0.5", "flag=false"});
  const nlohmann::json j = c.to_json();
  EXPECT_TRUE(j["sim"]["dt"].is_number_float());
  EXPECT_DOUBLE_EQ(j["sim"]["dt"].get<double>(), 0.5);  // overrides are reflected
  EXPECT_TRUE(j["sim"]["steps"].is_number_integer());
  EXPECT_EQ(j["sim"]["steps"].get<int>(), 100);
  EXPECT_TRUE(j["sim"]["verbose"].is_boolean());
  EXPECT_TRUE(j["sim"]["verbose"].get<bool>());
  EXPECT_EQ(j["flag"], false);
  EXPECT_TRUE(j["sim"]["integrator"].is_string());
  EXPECT_TRUE(j["quoted"].is_string());  // "123" was quoted in the file
  EXPECT_TRUE(j["empty"].is_null());
  ASSERT_TRUE(j["init"]["q"].is_array());
  EXPECT_DOUBLE_EQ(j["init"]["q"][1].get<double>(), 0.2);
  EXPECT_EQ(j["big"].get<long long>(), 10000000000LL);
  EXPECT_EQ(c.at("sim").to_json().size(), 4u);
}

TEST_F(ConfigTest, ParseFromTextUsesTheGivenName) {
  const Config c = Config::parse("a: x\n", "<defaults>");
  EXPECT_EQ(c.file(), "<defaults>");
  EXPECT_EQ(error_of([&] { c.get<double>("a"); }),
            "<defaults>:1:4: key 'a': expected a number, got 'x'");
  EXPECT_EQ(c.keys(), (std::vector<std::string>{"a"}));
}

}  // namespace
}  // namespace neuralsim
