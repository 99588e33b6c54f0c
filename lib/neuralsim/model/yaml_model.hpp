// Models described in YAML (configs/models/*.yaml): either an explicit tree
// of bodies and joints, or a generator for a built-in system (pendulum,
// double_pendulum, chain, cartpole, swimmer) with a few parameters.
// The format is documented in docs/models.md.
#pragma once

#include <string>

#include <yaml-cpp/yaml.h>

#include "neuralsim/model/model.hpp"

namespace neuralsim {

// Loads a model file. Errors are ModelError naming the file, key and line.
Model<double> load_yaml_model(const std::string& path);

// Builds a model from a YAML node (the value of the top-level `model:` key or
// the document itself). `source` is used in error messages.
Model<double> build_yaml_model(const YAML::Node& node, const std::string& source);

// Expands `generator: ...` into the explicit `bodies:` form (exposed for tests
// and for `rollout --print-model`).
YAML::Node expand_model_generator(const YAML::Node& node, const std::string& source);

}  // namespace neuralsim
