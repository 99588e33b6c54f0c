#include "neuralsim/train/group_lasso.hpp"

#include <cmath>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/core/format.hpp"

namespace neuralsim {
namespace {

double norm_of(const Eigen::VectorXd& x, const ParameterGroup& g) {
  double s = 0;
  for (int i : g.indices) s += x[i] * x[i];
  return std::sqrt(s);
}

// w_g ← max(0, 1 − threshold/‖w_g‖) w_g; true when the group is zero after.
bool shrink_group(Eigen::VectorXd& x, const ParameterGroup& g, double threshold) {
  const double norm = norm_of(x, g);
  if (norm <= threshold) {
    for (int i : g.indices) x[i] = 0.0;
    return true;
  }
  const double factor = 1.0 - threshold / norm;
  for (int i : g.indices) x[i] *= factor;
  return false;
}

}  // namespace

void check_groups(const std::vector<ParameterGroup>& groups, Eigen::Index size) {
  std::vector<char> taken(static_cast<std::size_t>(size), 0);
  for (const ParameterGroup& g : groups) {
    if (g.indices.empty()) throw InvalidArgument("group lasso: group '" + g.name + "' is empty");
    if (!std::isfinite(g.weight) || g.weight < 0)
      throw InvalidArgument("group lasso: group '" + g.name + "' has weight " + format_number(g.weight) +
                            " (expected finite, >= 0)");
    for (int i : g.indices) {
      if (i < 0 || i >= size)
        throw InvalidArgument("group lasso: group '" + g.name + "' holds index " + std::to_string(i) +
                              " outside the " + std::to_string(size) + " parameters");
      if (taken[static_cast<std::size_t>(i)]++)
        throw InvalidArgument("group lasso: parameter " + std::to_string(i) + " is in group '" + g.name +
                              "' and in an earlier group (groups must be disjoint)");
    }
  }
}

double group_lasso_penalty(const Eigen::VectorXd& x, const std::vector<ParameterGroup>& groups, double lambda) {
  double p = 0;
  for (const ParameterGroup& g : groups) p += g.weight * norm_of(x, g);
  return lambda * p;
}

int group_soft_threshold(Eigen::VectorXd& x, const std::vector<ParameterGroup>& groups, double lambda, double step) {
  if (!(lambda >= 0) || !(step >= 0) || !std::isfinite(lambda * step))
    throw InvalidArgument("group_soft_threshold: lambda " + format_number(lambda) + " and step " +
                          format_number(step) + " must be finite and >= 0");
  int zeros = 0;
  for (const ParameterGroup& g : groups) zeros += shrink_group(x, g, step * lambda * g.weight);
  return zeros;
}

int adam_group_soft_threshold(Eigen::VectorXd& x, const std::vector<ParameterGroup>& groups, double lambda,
                              double learning_rate, const Adam& adam) {
  if (!(lambda >= 0) || !(learning_rate >= 0) || !std::isfinite(lambda * learning_rate))
    throw InvalidArgument("adam_group_soft_threshold: lambda " + format_number(lambda) + " and learning rate " +
                          format_number(learning_rate) + " must be finite and >= 0");
  const Eigen::VectorXd& v = adam.v();
  const double correction = adam.t() > 0 ? 1.0 - std::pow(adam.options().beta2, static_cast<double>(adam.t())) : 0.0;
  int zeros = 0;
  for (const ParameterGroup& g : groups) {
    double step = learning_rate;
    if (correction > 0) {
      double mean_v = 0;
      for (int i : g.indices) mean_v += v[i];
      mean_v /= static_cast<double>(g.indices.size()) * correction;
      step = learning_rate / (std::sqrt(mean_v) + adam.options().epsilon);
    }
    zeros += shrink_group(x, g, step * lambda * g.weight);
  }
  return zeros;
}

std::vector<double> group_norms(const Eigen::VectorXd& x, const std::vector<ParameterGroup>& groups) {
  std::vector<double> n;
  n.reserve(groups.size());
  for (const ParameterGroup& g : groups) n.push_back(norm_of(x, g));
  return n;
}

double group_lasso_lambda_max(const Eigen::VectorXd& gradient_at_zero, const std::vector<ParameterGroup>& groups) {
  double m = 0;
  for (const ParameterGroup& g : groups)
    if (g.weight > 0) m = std::max(m, norm_of(gradient_at_zero, g) / g.weight);
  return m;
}

std::vector<double> regularization_path(double lambda_max, double ratio, int count) {
  if (!(lambda_max > 0) || !std::isfinite(lambda_max))
    throw InvalidArgument("regularization_path: lambda_max " + format_number(lambda_max) + " (expected finite, > 0)");
  if (!(ratio > 0 && ratio < 1))
    throw InvalidArgument("regularization_path: ratio " + format_number(ratio) + " (expected in (0, 1))");
  if (count < 2) throw InvalidArgument("regularization_path: count " + std::to_string(count) + " (expected >= 2)");
  std::vector<double> path(static_cast<std::size_t>(count));
  for (int k = 0; k < count; ++k)
    path[static_cast<std::size_t>(k)] = lambda_max * std::pow(ratio, static_cast<double>(k) / (count - 1));
  return path;
}

std::vector<ParameterGroup> network_groups(const nn::Mlp& net, int offset, const std::string& prefix) {
  if (net.num_layers() == 0) throw InvalidArgument("network_groups: '" + prefix + "' has no layers");
  std::vector<ParameterGroup> groups;
  const int n0 = static_cast<int>(net.input_dim()), n1 = static_cast<int>(net.layer_output_dim(0));
  const int w0 = offset + static_cast<int>(net.weight_offset(0));
  for (int i = 0; i < n0; ++i) {
    ParameterGroup g;
    g.name = prefix + ".input." + std::to_string(i);
    for (int r = 0; r < n1; ++r) g.indices.push_back(w0 + r * n0 + i);  // column i of W_0 (row-major)
    g.weight = std::sqrt(static_cast<double>(n1));
    groups.push_back(std::move(g));
  }
  // The output layer: all of it when the network has hidden layers; with one
  // layer its weights are the input groups already, so only the bias.
  const int last = static_cast<int>(net.num_layers()) - 1;
  ParameterGroup out;
  out.name = prefix + ".output";
  const int first = offset + static_cast<int>(last > 0 ? net.weight_offset(last) : net.bias_offset(last));
  const int end = offset + static_cast<int>(net.bias_offset(last) + net.layer_output_dim(last));
  for (int i = first; i < end; ++i) out.indices.push_back(i);
  out.weight = std::sqrt(static_cast<double>(out.indices.size()));
  groups.push_back(std::move(out));
  return groups;
}

}  // namespace neuralsim
