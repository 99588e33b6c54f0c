// Group lasso for sparse augmentations (the penalty of `discover`, NeuralSim
// §IV-C): groups of network parameters that the data does not need are
// driven to exactly zero by a proximal step after each optimizer step.
//
// Penalty  λ Σ_g c_g ‖w_g‖₂  (Yuan & Lin, "Model selection and estimation in
// regression with grouped variables", JRSS-B 2006), c_g = √|g| by default so
// that groups of different sizes compete fairly. Its proximal operator with
// step t is the group soft threshold (Parikh & Boyd, "Proximal algorithms",
// 2014, §6.5.4):
//   w_g ← max(0, 1 − t λ c_g / ‖w_g‖) · w_g,
// exactly zero when ‖w_g‖ ≤ t λ c_g. A zero group stays zero after a
// gradient step g followed by the prox as long as ‖g_g‖ ≤ λ c_g, the
// optimality condition of a zero group; so zeros are exact and stable.
//
// After an Adam step x ← x − α m̂/(√v̂ + ε) the prox belongs to the same
// metric D = diag(√v̂ + ε) (Yun, Lozano & Yang, "Adaptive proximal gradient
// methods for structured neural networks", NeurIPS 2021). Under a diagonal
// metric the group prox has no closed form; adam_group_soft_threshold uses
// one scalar per group, d_g = √(mean_{i∈g} v̂_i) + ε, i.e. the step
// t_g = α / d_g. With it a group stays zero when ‖m̂_g‖ ≲ λ c_g, the group
// lasso's optimality condition in gradient units. The plain threshold α λ c_g
// (t = α for every group) does not have that meaning: Adam's step has the
// same size whatever the gradient's, so zeros would depend on λ alone.
//
// Groups over a network (nn::Mlp's flat parameter layout): one per input
// value (its column of the first layer's weights: the input is unused when
// the group is zero), and one over the output layer (weights and bias: the
// site's output is zero when the group is zero).
#pragma once

#include <Eigen/Core>

#include <string>
#include <vector>

#include "neuralsim/nn/mlp.hpp"
#include "neuralsim/train/optimizer.hpp"

namespace neuralsim {

struct ParameterGroup {
  std::string name;          // e.g. "drag0.input.3", "drag0.output"
  std::vector<int> indices;  // into the parameter vector; disjoint from other groups
  double weight = 1;         // c_g
};

// Checks that every index is in [0, size), groups are non-empty and
// disjoint, and weights finite and ≥ 0; InvalidArgument naming the group.
void check_groups(const std::vector<ParameterGroup>& groups, Eigen::Index size);

// λ Σ_g c_g ‖x_g‖.
double group_lasso_penalty(const Eigen::VectorXd& x, const std::vector<ParameterGroup>& groups, double lambda);

// The proximal operator of step `step` of the penalty, in place; returns the
// number of groups that are exactly zero afterwards.
int group_soft_threshold(Eigen::VectorXd& x, const std::vector<ParameterGroup>& groups, double lambda, double step);

// group_soft_threshold with the step α / d_g of each group under Adam's
// metric (see above; d_g from adam's v and t; before the first step, α).
int adam_group_soft_threshold(Eigen::VectorXd& x, const std::vector<ParameterGroup>& groups, double lambda,
                              double learning_rate, const Adam& adam);

// ‖x_g‖ per group, in order.
std::vector<double> group_norms(const Eigen::VectorXd& x, const std::vector<ParameterGroup>& groups);

// The smallest λ at which x = 0 on every group is optimal for a loss with
// gradient `gradient_at_zero` there: max_g ‖∇_g‖ / c_g (groups with c_g = 0
// are skipped). A regularization path starts here (glmnet's λ_max).
double group_lasso_lambda_max(const Eigen::VectorXd& gradient_at_zero, const std::vector<ParameterGroup>& groups);

// `count` penalties from lambda_max down to lambda_max · ratio, evenly
// spaced in log (Friedman, Hastie & Tibshirani, "Regularization paths for
// generalized linear models via coordinate descent", J. Stat. Softw. 2010).
// InvalidArgument unless lambda_max > 0 finite, 0 < ratio < 1, count ≥ 2.
std::vector<double> regularization_path(double lambda_max, double ratio, int count);

// The input groups and the output group of `net`, whose parameters start at
// `offset` in the parameter vector; named "<prefix>.input.<i>" and
// "<prefix>.output", weights √|g|.
std::vector<ParameterGroup> network_groups(const nn::Mlp& net, int offset, const std::string& prefix);

}  // namespace neuralsim
