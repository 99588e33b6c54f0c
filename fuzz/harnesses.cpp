#include "harnesses.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/experiment/contact_config.hpp"
#include "neuralsim/experiment/experiment.hpp"
#include "neuralsim/io/config.hpp"
#include "neuralsim/io/csv_import.hpp"
#include "neuralsim/io/hdf5_trajectory.hpp"
#include "neuralsim/io/urdf_model.hpp"
#include "neuralsim/io/yaml_model.hpp"
#include "neuralsim/tools/identify_checkpoint.hpp"
#include "neuralsim/tools/training_checkpoint.hpp"

namespace neuralsim::fuzz {
namespace {

namespace fs = std::filesystem;

// A scratch directory per process (fuzzers run in parallel).
const fs::path& scratch() {
  static const fs::path dir = [] {
    const fs::path d = fs::temp_directory_path() / ("neuralsim_fuzz_" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

std::string write_scratch(const std::string& name, const uint8_t* data, size_t size) {
  const fs::path p = scratch() / name;
  std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return p.string();
}

// Only the documented error types may leave a reader; anything else
// (std::bad_alloc, std::out_of_range, a crash) is a finding.
template <class F>
void expect_documented_errors(F&& f) {
  try {
    f();
  } catch (const ConfigError&) {
  } catch (const DataError&) {
  } catch (const ModelError&) {
  }
}

}  // namespace

void config(const uint8_t* data, size_t size) {
  expect_documented_errors([&] {
    const Config c = Config::parse(std::string(reinterpret_cast<const char*>(data), size), "fuzz.yaml");
    (void)c.to_json();
    if (c.has("model") && c.is_map("model")) {
      const Model<double> model = build_yaml_model(c.at("model"));
      std::vector<std::string> notes, warnings;
      (void)read_contact_section(c, model, notes, warnings);
      if (c.has("sim")) (void)read_step_options(c.at("sim"));
    }
  });
}

void csv_import(const uint8_t* data, size_t size) {
  static const std::string description = [] {
    const fs::path p = scratch() / "import.yaml";
    std::ofstream(p) << "csv_import:\n  files: [log.csv]\n  time: t\n  model: m\n  joint_names: [a]\n"
                        "  q: [{terms: {a: 2.0}, offset: 0.1}]\n  qd: [b]\n  tau: [b]\n";
    return p.string();
  }();
  write_scratch("log.csv", data, size);
  expect_documented_errors([&] { (void)import_csv(description); });
}

void hdf5_trajectories(const uint8_t* data, size_t size) {
  const std::string path = write_scratch("data.h5", data, size);
  expect_documented_errors([&] { (void)read_trajectories(path); });
}

void urdf(const uint8_t* data, size_t size) {
  expect_documented_errors(
      [&] { (void)build_urdf_model(std::string(reinterpret_cast<const char*>(data), size), "fuzz.urdf"); });
}

void checkpoint(const uint8_t* data, size_t size) {
  static const Model<double> model = parse_yaml_model("generator: double_pendulum\n", "fuzz");
  static const ParameterSet params = [] {
    std::vector<EstimatedParameter> p(2);
    for (int i = 0; i < 2; ++i) {
      p[i].target = *resolve_named_parameter("link.link" + std::to_string(i + 1) + ".length", model, false);
      p[i].initial = 1;
      p[i].lower = 0.1;
      p[i].upper = 10;
    }
    return ParameterSet(p);
  }();
  const CheckpointFile store(write_scratch("checkpoint.json", data, size));
  expect_documented_errors([&] { (void)read_identify_checkpoint(store, params, {}, 100, 100); });
  // The same bytes as the training loop's checkpoint (another reader, same rules).
  TrainingCheckpointSpec spec;
  spec.num_parameters = 3;
  spec.parameter_names = {"net.w0", "net.w1", "net.b0"};
  spec.max_epochs = 100;
  expect_documented_errors([&] { (void)read_training_checkpoint(store, spec); });
}

const std::vector<Target>& targets() {
  static const std::vector<Target> all = {{"config", config},
                                          {"csv_import", csv_import},
                                          {"hdf5_trajectories", hdf5_trajectories},
                                          {"urdf", urdf},
                                          {"checkpoint", checkpoint}};
  return all;
}

}  // namespace neuralsim::fuzz
