// `train.physical` (experiment/train_config.hpp): an empty list is no
// physical parameter, so a sweep can switch them off for any model
// (`--set train.physical=[]`); a non-empty one on a baseline stays refused.
#include <gtest/gtest.h>

#include <string>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/experiment/train_config.hpp"
#include "neuralsim/io/config.hpp"
#include "neuralsim/io/yaml_model.hpp"
#include "support/files.hpp"

namespace neuralsim {
namespace train_config_physical_test {

TrainConfig read(const std::string& train) {
  const Model<double> model = load_yaml_model(testing::source_path("configs/models/double_pendulum.yaml"));
  return read_train_config(Config::parse(train, "t.yaml").at("train"), model, nullptr, 1);
}

TEST(TrainConfigPhysical, AnEmptyListIsNoPhysicalParameterForAnyModel) {
  for (const std::string model : {"hybrid", "mlp", "lstm"}) {
    const TrainConfig c = read("train: {model: " + model + ", physical: []}\n");
    EXPECT_EQ(c.physical.size(), 0) << model;
  }
  EXPECT_EQ(read("train: {physical: [{name: joint.joint1.damping}]}\n").physical.size(), 1);
  try {
    read("train: {model: mlp, physical: [{name: joint.joint1.damping}]}\n");
    ADD_FAILURE() << "a baseline with a physical parameter was accepted";
  } catch (const ConfigError& e) {
    testing::expect_contains(e.what(), {"t.yaml:1", "train.physical", "only a hybrid model"});
  }
}

}  // namespace train_config_physical_test
}  // namespace neuralsim
