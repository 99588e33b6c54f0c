// The `distill:` section of a `distill-mpc` config (and its `linear:`
// system for the small case) → specs; keys, defaults and ranges in
// docs/distill-mpc.md. The quadruped's MPC itself is the `controls:`
// section (experiment/mpc_controllers.hpp, type mpc). Every key is checked
// (range, type, unknown keys) and every error is a ConfigError naming the
// file, line and key.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "neuralsim/control/linear_mpc.hpp"
#include "neuralsim/control/push_perturbation.hpp"
#include "neuralsim/io/config.hpp"
#include "neuralsim/nn/mlp.hpp"
#include "neuralsim/train/supervised.hpp"

namespace neuralsim {

// `linear:` — a double integrator under a linear MPC (the CI case).
struct LinearSystemSpec {
  double dt = 0.05;    // control and simulation period [s]
  double mass = 1.0;   // [kg]
  LinearMpcParameters mpc;  // A, B from (dt, mass); Q, R, horizon, limits
  std::array<double, 2> position{-1, 1}, velocity{-1, 1};  // initial-state ranges
  double stable_tolerance = 0.05;  // |x| and |v| at the end of an episode for "stable"
};

struct DistillDataSpec {
  std::string file;          // an existing dataset (resolved against the config); empty: generate
  int episodes = 20;         // closed-loop episodes generated
  double duration = 5.0;     // per episode [s]
  long long max_samples = 10'000'000;  // refuse (exit 2) a run that would record more
  double validation_fraction = 0.2;    // the last episodes, by episode
};

struct DistillNetworkSpec {
  std::vector<nn::Index> hidden{64, 64};
  nn::Activation activation = nn::Activation::kTanh;
};

struct DistillEvaluationSpec {
  int episodes = 10;         // closed-loop evaluation episodes (seeds), MPC and network
  double duration = 20.0;    // [s]
  double min_height = 0.15;  // quadruped: a base height below this is a fall [m]
};

struct DistillSpec {
  std::optional<LinearSystemSpec> linear;  // set: the small case; otherwise the quadruped of `controls:`
  DistillDataSpec data;
  PushOptions pushes;  // force_max = 0: no pushes; seed = --seed
  DistillNetworkSpec network;
  SupervisedOptions train;  // seed = --seed
  DistillEvaluationSpec evaluate;
};

// `linear:` section. ConfigError naming the key (an infeasible limit pair,
// R not positive definite, …).
LinearSystemSpec read_linear_system_spec(const Config& section);

// The config root's `distill:` (required) and, if present, `linear:`.
DistillSpec read_distill_spec(const Config& root, long long seed);

}  // namespace neuralsim
