// discover: where an augmentation belongs and which physical quantities it
// needs, found from the data (NeuralSim §IV-C; the work of the `discover`
// tool; docs/discover.md).
//
// Every candidate site gets one network whose first layer sees all of the
// site's candidate inputs. The objective is the hybrid model's trajectory
// loss (train-augment's windows) plus
//   λ Σ_g c_g ‖w_g‖   over one group per input value (its first-layer column)
//                     and one per site (its output layer: the site switches off)
//   + an L2 penalty (decoupled weight decay) on the layers after the first,
// minimized by Adam with a proximal group soft threshold after every step
// (train/group_lasso.hpp), so that unneeded groups are exactly zero.
//
// Top to bottom, per repetition (seed or bootstrap resample):
//   1. the candidate networks, output layers zero (the hybrid starts as the
//      analytical model), inputs normalized by their mean and deviation on
//      the training recordings;
//   2. the dense fit (λ = 0);
//   3. the penalty path, decreasing from λ_max (auto: the KKT bound at which
//      every site's output is zero given the dense first layers,
//      max_site ‖∇_out L‖ / c_out with every output layer zeroed; glmnet's
//      λ_max), solved from the smallest penalty upwards, each point
//      warm-started from the last. Dense-to-sparse because a network at
//      exact zero is a saddle (no gradient reaches a first layer whose
//      output layer is zero), so the glmnet order never leaves zero; the
//      same direction as LassoNet (Lemhadri et al., JMLR 2021);
//   4. the analytical model as the path's last point (λ = ∞);
//   5. each penalized point's support refitted without penalty (relaxed
//      lasso, Meinshausen 2007), so that points compare supports rather
//      than shrinkage;
//   6. the point chosen by validation: the largest penalty that keeps
//      1 − tolerance (0.99) of the best point's improvement over the
//      analytical model, V ≤ V_min + tolerance (V_analytical − V_min) (or,
//      by selection.rule, the one-standard-error rule of Hastie, Tibshirani
//      & Friedman, ESL §7.10, or the minimum); nothing is selected when it
//      lowers the analytical model's validation loss by less than
//      min_improvement. Differences between relaxed fits that all explain
//      most of the residual are dominated by how well each fit converged,
//      which the one-SE rule (an error bar over windows) does not see.
// Then: selection frequencies over the repetitions (stability selection,
// Meinshausen & Bühlmann 2010), importances at repetition 0's chosen point
// (group norm, validation loss with the group removed), entry points on its
// path, the pruned augmentation, and optionally its retrain without penalty.
//
// Resume: a checkpoint after every path point (one process) or every round
// of repetitions (processes); resumed runs give the same bits. Processes:
// repetition r runs on rank r mod size.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "neuralsim/augment/blueprint.hpp"
#include "neuralsim/io/config.hpp"
#include "neuralsim/tools/run_context.hpp"
#include "neuralsim/tools/training_setup.hpp"

namespace neuralsim {

struct DiscoverRequest {
  Config config;       // the experiment (docs/discover.md), overrides applied
  long long seed = 0;  // minibatch orders and bootstrap resamples
};

// A group of the penalty: one value of a site's input, or a site's output.
struct DiscoverGroup {
  int site = 0;           // index into DiscoverResult::sites
  std::string input;      // input name; "" for the site's output group
  int value = -1;         // the value of a multi-valued input (-1: one-valued input or output)
  std::string label;      // "joint.elbow.torque <- joint.elbow.qd", "joint.elbow.torque (output)"
  double norm = 0;        // ‖w_g‖ at repetition 0's chosen point
  double removal_increase = 0;  // relative increase of the validation loss when the group is zeroed there
  double entry_lambda = 0;      // largest penalty of repetition 0's path where it is selected (0: only dense; NaN: never)
  int entry_rank = 0;           // 1 = first to enter as the penalty decreases; 0 = never
  double frequency = 0;         // fraction of repetitions that select it
  bool selected = false;        // frequency ≥ selection.frequency (and the site's output group too)
};

struct DiscoverPathPoint {
  double lambda = 0;  // 0: dense; +inf: the analytical model
  double train_loss = 0, validation_loss = 0;
  double validation_se = 0;  // standard error of validation_loss over the validation windows
  int selected_groups = 0;   // non-zero input groups of non-zero sites, plus non-zero sites
  std::vector<double> norms;  // per group
};

struct DiscoverRepetition {
  std::string kind;  // "seed" or "bootstrap"
  int index = 0;     // seed offset or resample number
  double lambda_max = 0;
  std::vector<DiscoverPathPoint> points;  // dense, the path in increasing λ, analytical
  int chosen = -1;                        // index into points
  std::vector<char> selected;             // per group
  double explained = 0;  // 1 − V(chosen) / V(analytical)
};

struct DiscoverResult : RunReport {
  std::string model_name;
  std::vector<std::string> sites;  // described (joint.elbow.torque, ...)
  std::vector<DiscoverGroup> groups;
  std::vector<DiscoverRepetition> repetitions;  // completed ones
  int planned_repetitions = 0;
  // Validation losses (train-augment's normalized loss on validation windows).
  double analytical_validation_loss = 0, dense_validation_loss = 0, chosen_validation_loss = 0;
  double chosen_lambda = 0;
  double explained = 0;  // repetition 0
  bool explained_by_candidates = false;
  std::string verdict;   // one sentence
  // The selected sites with their selected inputs, as train-augment
  // blueprints (input normalization from the training data); with a
  // retrain, their trained weights.
  std::vector<AugmentBlueprint> pruned;
  std::string augment_yaml;  // `augment:` of the pruned blueprints, for a train-augment config
  std::optional<double> retrained_validation_loss;
  std::optional<RolloutEvaluation> analytical_rollouts, retrained_rollouts;  // validation recordings
  // data.test (with a retrain): the retrained pruned model scored once on
  // recordings held out of training, selection and early stopping, with the
  // reference rows (the analytical model, no motion).
  std::optional<RolloutEvaluation> test;
  std::optional<ReferenceEvaluations> test_reference;
  int num_train_trajectories = 0, num_validation_trajectories = 0, num_test_trajectories = 0, num_parameters = 0;
};

DiscoverResult discover(const DiscoverRequest& request, const RunContext& context = {});

}  // namespace neuralsim
