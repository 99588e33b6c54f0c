// The `discover:` section of a discover config (docs/discover.md): the
// candidate augmentations (sites × inputs), the penalty path, the selection
// rule, the stability repetitions and the optional retrain.
//
//   discover:
//     sites: [joint.*.torque, {site: link.tail.drag_force, inputs: [link.tail.speed]}]
//     inputs: [joint_states, joint_controls, noise.0]   # every site without its own list
//     network: {hidden: [8], activation: tanh, init: xavier_uniform, output_scale: 1, seed: 0}
//     mode: residual                  # residual | scale | replace
//     penalty:
//       points: 8                     # the path: lambda_max · ratio^(k/(points−1)), k = 0 … points−1
//       ratio: 0.01
//       lambda_max: auto              # auto: where every site's output is zero (KKT, see tools/discover.hpp)
//       lambdas: [1.0, 0.3, 0.1]      # or the path itself: decreasing, finite, > 0
//       upper_l2: 1e-3                # L2 (decoupled weight decay) on the layers after the first
//       adaptive: 1                   # adaptive group lasso: weights ∝ 1/‖dense group‖^adaptive (0 = plain)
//     epochs: {dense: 100, per_point: 40, refit: 40}   # refit: the relaxed fit of each point (0 = none)
//     selection: {rule: explained, tolerance: 0.01, min_improvement: 0.1, frequency: 0.8}
//     stability: {seeds: 3, bootstrap: 3}
//     retrain: {epochs: 100}          # 0 = no retrain of the pruned model
//
// Site strings may hold one '*' in place of a joint or link name (every joint
// with coordinates, every link), also as {site: link.*.force, inputs: [...],
// frame: body} (the frame of link force, torque and drag-force sites).
// In input names '@' stands for the site's own joint or link (body i and its
// joint i): {site: link.*.drag_force, inputs: [link.@.speed]}. Input shorthand: joint.*.q|qd|u and
// link.*.<quantity> expand over joints / links; `joint_states` = joint.*.q +
// joint.*.qd, `joint_controls` = joint.*.u, `link_motion` =
// link.*.linear_velocity, link.*.angle_of_attack, link.*.speed; noise.<k>
// is a distractor (augment/blueprint.hpp). Errors: ConfigError with
// file:line:column and the key, with "did you mean" for unknown names.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "neuralsim/augment/blueprint.hpp"
#include "neuralsim/contact/contact_settings.hpp"
#include "neuralsim/io/config.hpp"

namespace neuralsim {

struct DiscoverSpec {
  // One network per candidate site, its first layer seeing every candidate
  // input of the site; networks are initialized from `network_seed` + index
  // (the tool re-seeds them per repetition and zeroes their output layers).
  std::vector<AugmentBlueprint> candidates;
  std::vector<nn::Index> hidden = {8};
  nn::Activation activation = nn::Activation::kTanh;
  nn::Init init = nn::Init::kXavierUniform;
  std::uint64_t network_seed = 0;
  double output_scale = 1;  // every output multiplied by it (the site's units: e.g. 0.01 N for small drag forces)

  // The penalty path (decreasing): explicit, or `points` values from
  // lambda_max (0 = auto) down to lambda_max · ratio.
  std::vector<double> lambdas;
  int points = 8;
  double ratio = 0.01;
  double lambda_max = 0;
  double upper_l2 = 1e-3;
  double adaptive = 1;  // γ of the adaptive group lasso: weights c_g (mean dense norm / ‖w_g,dense‖)^γ (0 = plain)

  int dense_epochs = 100;
  int epochs_per_point = 40;
  int refit_epochs = 40;  // the relaxed fit of each point's support (0 = none: points compared as penalized)

  // Selection: the largest penalty whose validation loss V is at most
  //   explained (default):  V_min + tolerance · (V_analytical − V_min),
  //                         i.e. it keeps 1 − tolerance of the best point's
  //                         improvement over the analytical model;
  //   one_standard_error:   (V_min + SE(V_min)) · (1 + tolerance);
  //   minimum:              V_min · (1 + tolerance).
  // Nothing is selected when that point improves the analytical model's
  // validation loss by less than min_improvement (relative); a candidate is
  // reported selected when its selection frequency over the repetitions is
  // ≥ frequency.
  enum class Rule { kExplained, kOneStandardError, kMinimum };
  Rule rule = Rule::kExplained;
  double tolerance = 0.01;
  double min_improvement = 0.1;
  double frequency = 0.8;  // stability selection's threshold π_thr, in Meinshausen & Bühlmann's range [0.6, 0.9]

  int seeds = 1;      // repetitions with other network seeds and minibatch orders
  int bootstrap = 0;  // repetitions on bootstrap resamples of the training trajectories
  int retrain_epochs = 0;
};

// Reads `discover:` (required). `contact` is the experiment's contact
// settings (null without contact).
DiscoverSpec read_discover_section(const Config& root, const Model<double>& model, const ContactSettings* contact);

}  // namespace neuralsim
