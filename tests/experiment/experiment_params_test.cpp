// `params:` values are applied together and the model is checked once: the
// entries of one inertia tensor are only jointly physical, so the order the
// config lists them in must not matter, and a non-physical result names the
// parameter of the link the check fails on.
#include <gtest/gtest.h>

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
         "    - {name: link2, parent: link1, joint: {name: j2, axis: [0, 1, 0], origin: {xyz: [0, 0, -1]}},"
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

}  // namespace
}  // namespace neuralsim
