// `params:` values are applied together and the model is checked once: the
// entries of one inertia tensor are only jointly physical, so the order the
// config lists them in must not matter, and a non-physical result names the
// parameter of the link the check fails on.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/experiment/experiment.hpp"
#include "neuralsim/io/config.hpp"
#include "neuralsim/model/parameters.hpp"

namespace neuralsim {
namespace {

std::string config_with(const std::string& params) {
  return "model:\n"
         "  name: two_links\n"
         "  bodies:\n"
         "    - {name: link1, joint: {name: j1, axis: [0, 1, 0]}, mass: 1.0, com: [0, 0, -0.5],"
         " inertia: [0.02, 0.02, 0.001]}\n"
         "    - {name: link2, parent: link1, joint: {name: j2, axis: [1, 0, 0], origin: {xyz: [0, 0, -1]}},"
         " mass: 0.5, com: [0, 0, -0.3], inertia: [0.01, 0.01, 0.001]}\n"
         "sim: {dt: 0.01, duration: 0.1}\n"
         "params: " + params + "\n";
}

Experiment load(const std::string& params) {
  return load_experiment(Config::parse(config_with(params), "exp.yaml"));
}

TEST(ExperimentParams, InertiaEntriesAreCheckedTogether) {
  // ixx = 0.1 alone breaks 0.1 ≤ iyy + izz = 0.021; with iyy = 0.1 it holds.
  const Experiment e = load("{link.link1.inertia.xx: 0.1, link.link1.inertia.yy: 0.1}");
  EXPECT_NEAR(get_parameter(e.model, resolve_parameter(e.model, "link.link1.inertia.xx")), 0.1, 1e-15);
  EXPECT_NEAR(get_parameter(e.model, resolve_parameter(e.model, "link.link1.inertia.yy")), 0.1, 1e-15);
}

// (j2 turns about x: not a planar chain, so every link must be a physical
// 3-D body; model/inertia_check.hpp.)
TEST(ExperimentParams, ANonPhysicalResultBlamesTheLinksParameters) {
  try {
    load("{link.link1.inertia.xx: 0.1, link.link2.mass: 0.7}");
    FAIL() << "accepted a non-physical inertia";
  } catch (const ConfigError& err) {
    const std::string msg = err.what();
    EXPECT_NE(msg.find("exp.yaml:"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'link.link1.inertia.xx' = 0.1"), std::string::npos) << msg;
    EXPECT_NE(msg.find("triangle"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("link.link2.mass"), std::string::npos) << msg;  // not involved
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;               // one line
  }
}

// A value given in the config (params:, or --set params.X=v, which writes
// there) wins over the same name in params_file, and the notes say so; the
// file's other values apply. Every tool loads its model through
// load_experiment, so this holds for each of them.
TEST(ExperimentParams, AnExplicitValueWinsOverTheParamsFile) {
  const std::string dir = ::testing::TempDir();
  const std::string file = dir + "/fitted.json";
  {
    std::ofstream f(file);
    f << R"({"parameters": {"link.link1.mass": {"value": 1.7}, "link.link2.mass": {"value": 0.9}}})";
  }
  const Config cfg = Config::parse(config_with("{link.link2.mass: 0.6}") + "params_file: " + file + "\n",
                                   dir + "/exp.yaml", {"params.joint.j1.damping=0.25"});
  const Experiment e = load_experiment(cfg);
  EXPECT_EQ(get_parameter(e.model, resolve_parameter(e.model, "link.link1.mass")), 1.7);  // the file's
  EXPECT_EQ(get_parameter(e.model, resolve_parameter(e.model, "link.link2.mass")), 0.6);  // params: wins
  EXPECT_EQ(get_parameter(e.model, resolve_parameter(e.model, "joint.j1.damping")), 0.25);  // --set
  std::string notes;
  for (const std::string& n : e.notes) notes += n + "\n";
  EXPECT_NE(notes.find("parameter link.link2.mass = 0.6"), std::string::npos) << notes;
  EXPECT_NE(notes.find("wins over params_file"), std::string::npos) << notes;
  EXPECT_NE(notes.find("set 1 parameters (1 more overridden by params:)"), std::string::npos) << notes;
}

}  // namespace
}  // namespace neuralsim
