// Parameter files: what write_parameter_file writes, read_parameter_file
// reads back (the fixed values and the estimates, to the bit).
#include "neuralsim/io/parameter_file.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "neuralsim/core/errors.hpp"
#include "support/files.hpp"

namespace neuralsim {
namespace {

using ParameterFileTest = testing::TempDirTest;

TEST_F(ParameterFileTest, WhatIsWrittenIsReadBack) {
  ParameterFile f;
  f.model = "double_pendulum";
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  f.parameters = {{"link.link1.length", 0.1 + 0.2, 1e-3, 1.0, 0.1, inf},
                  {"link.link2.length", 4.000000000000001, nan, 2.0, -inf, 10.0},
                  {"joint.joint1.damping", 1e-300, {}, {}, {}, {}}};
  f.fixed = {{"gravity.z", -9.80665, "config.yaml:3"}};
  f.annotations = {{"cost", 1.5}, {"seed", 7}};
  write_parameter_file(path("params.json"), f);
  const std::map<std::string, double> read = read_parameter_file(path("params.json"));
  ASSERT_EQ(read.size(), 4u);
  EXPECT_EQ(read.at("link.link1.length"), 0.1 + 0.2);  // exact: 17 significant digits
  EXPECT_EQ(read.at("link.link2.length"), 4.000000000000001);
  EXPECT_EQ(read.at("joint.joint1.damping"), 1e-300);
  EXPECT_EQ(read.at("gravity.z"), -9.80665);

  const nlohmann::json j = testing::read_json(path("params.json"));
  EXPECT_EQ(j["format"], "neuralsim-parameters");
  EXPECT_EQ(j["model"], "double_pendulum");
  EXPECT_EQ(j["names"], (std::vector<std::string>{"link.link1.length", "link.link2.length", "joint.joint1.damping"}));
  EXPECT_TRUE(j["parameters"]["link.link2.length"]["std_error"].is_null());  // not determined by the data
  EXPECT_TRUE(j["parameters"]["link.link1.length"]["upper"].is_null());      // unbounded
  EXPECT_FALSE(j["parameters"]["joint.joint1.damping"].contains("std_error"));
  EXPECT_EQ(j["fixed"]["gravity.z"]["source"], "config.yaml:3");
  EXPECT_EQ(j["cost"], 1.5);
}

TEST_F(ParameterFileTest, BadFilesAreDataErrors) {
  testing::expect_contains(testing::thrown_message([&] { read_parameter_file(write("a.json", "{\"x\": \"one\"}")); }),
                           {"a.json", "'x'", "expected a number"});
  EXPECT_THROW(read_parameter_file(write("b.json", "{\"x\": 1e999}")), DataError);
  EXPECT_THROW(read_parameter_file(path("missing.json")), DataError);
}

}  // namespace
}  // namespace neuralsim
