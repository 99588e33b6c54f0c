// Models described in YAML (configs/models/*.yaml, or inline under an
// experiment's `model:` key): either an explicit tree of bodies and joints,
// or a generator for a built-in system (pendulum, double_pendulum, chain,
// cartpole, swimmer) with a few parameters. Read through Config, so every
// error names the file, line, column and key. Format: docs/models.md.
#pragma once

#include <string>
#include <vector>

#include "neuralsim/io/config.hpp"
#include "neuralsim/model/model.hpp"

namespace neuralsim {

// Loads a model file (its top level, or its `model:` key). ConfigError on
// a bad description, naming file:line:column and the key.
Model<double> build_yaml_model(const Config& model_section);
// ModelError naming the path when it is not a readable regular file of at
// most Config::kMaxConfigBytes.
Model<double> load_yaml_model(const std::string& path);
// A model from YAML text; `source` names it in messages.
Model<double> parse_yaml_model(const std::string& yaml_text, const std::string& source);

// `joints: {NAME: {friction_law: atan, friction: 0.3, ...}}`: per-joint
// dynamics for a model that does not spell out its joints (a generator, a
// URDF file, a shared model file). Keys: joint_dynamics_keys() (the same
// meaning and checks as in a body's joint); a key not given keeps the
// joint's value, and friction_law absent keeps its law. An unknown joint
// lists the model's joints. ConfigError naming file:line and key.
void apply_joint_dynamics(const Config& joints, Model<double>& model);
const std::vector<std::string>& joint_dynamics_keys();

}  // namespace neuralsim
