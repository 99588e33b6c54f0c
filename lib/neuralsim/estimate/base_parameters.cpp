#include "neuralsim/estimate/base_parameters.hpp"

#include <Eigen/QR>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>

#include "neuralsim/core/dense.hpp"
#include "neuralsim/core/errors.hpp"
#include "neuralsim/dynamics/inverse_dynamics_regressor.hpp"
#include "neuralsim/estimate/inertia_prior.hpp"
#include "neuralsim/model/configuration.hpp"
#include "neuralsim/parameters/named_parameter.hpp"

namespace neuralsim {

Eigen::MatrixXd BaseParameters::combination_matrix(int n) const {
  Eigen::MatrixXd B = Eigen::MatrixXd::Zero(rank, n);
  for (int k = 0; k < rank; ++k) {
    B(k, independent[k]) = 1;
    for (size_t d = 0; d < dependent.size(); ++d) B(k, dependent[d]) = K(k, static_cast<Eigen::Index>(d));
  }
  return B;
}

Eigen::VectorXd BaseParameters::base_values(const Eigen::VectorXd& pi) const {
  Eigen::VectorXd beta(rank);
  for (int k = 0; k < rank; ++k) {
    beta[k] = pi[independent[k]];
    for (size_t d = 0; d < dependent.size(); ++d) beta[k] += K(k, static_cast<Eigen::Index>(d)) * pi[dependent[d]];
  }
  return beta;
}

BaseParameters compute_base_parameters(const Eigen::MatrixXd& W, double tolerance) {
  const Eigen::Index m = W.rows(), n = W.cols();
  BaseParameters out;
  out.tolerance = tolerance > 0 ? tolerance
                                : 100.0 * static_cast<double>(std::max(m, n)) * std::numeric_limits<double>::epsilon();
  // Unit-norm columns. Columns at the rounding level of the largest (a
  // parameter whose effect cancels exactly in theory, e.g. the first moment
  // along the second axis of an arm whose first axis is vertical: 1e-17 of
  // the largest column) are zero: scaled to unit norm their noise would
  // pass for an independent direction.
  Eigen::VectorXd norm = W.colwise().norm().transpose();
  const double largest = n > 0 ? norm.maxCoeff() : 0.0;
  for (Eigen::Index c = 0; c < n; ++c)
    if (norm[c] <= out.tolerance * largest) norm[c] = 0;
  std::vector<int> seen;
  for (Eigen::Index c = 0; c < n; ++c)
    if (norm[c] > 0) seen.push_back(static_cast<int>(c));
  Eigen::MatrixXd Ws(m, static_cast<Eigen::Index>(seen.size()));
  for (size_t k = 0; k < seen.size(); ++k) Ws.col(static_cast<Eigen::Index>(k)) = W.col(seen[k]) / norm[seen[k]];
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(Ws);
  const Eigen::MatrixXd R = qr.matrixR().template triangularView<Eigen::Upper>();
  const Eigen::Index diag = std::min(R.rows(), R.cols());
  const double r11 = diag > 0 ? std::abs(R(0, 0)) : 0.0;
  int rank = 0;
  while (rank < diag && std::abs(R(rank, rank)) > out.tolerance * r11) ++rank;
  out.rank = rank;
  const auto& perm = qr.colsPermutation().indices();
  for (int k = 0; k < rank; ++k) out.independent.push_back(seen[static_cast<size_t>(perm[k])]);
  std::vector<std::pair<int, int>> dep;  // (π column, position among R's columns, or -1 for a zero column)
  for (Eigen::Index k = rank; k < static_cast<Eigen::Index>(seen.size()); ++k)
    dep.emplace_back(seen[static_cast<size_t>(perm[k])], static_cast<int>(k));
  for (Eigen::Index c = 0; c < n; ++c)
    if (!(norm[c] > 0)) dep.emplace_back(static_cast<int>(c), -1);
  std::sort(dep.begin(), dep.end());
  out.K = Eigen::MatrixXd::Zero(rank, static_cast<Eigen::Index>(dep.size()));
  if (rank > 0) {
    const auto R1 = R.topLeftCorner(rank, rank).template triangularView<Eigen::Upper>();
    for (size_t d = 0; d < dep.size(); ++d) {
      out.dependent.push_back(dep[d].first);
      if (dep[d].second < 0) continue;
      // Scaled: Ws_2 = Ws_1 K_s; unscaled K = D_1⁻¹ K_s D_2.
      Eigen::VectorXd ks = R1.solve(R.col(dep[d].second).head(rank));
      for (int k = 0; k < rank; ++k)
        out.K(k, static_cast<Eigen::Index>(d)) = ks[k] * norm[dep[d].first] / norm[out.independent[k]];
    }
  } else {
    for (const auto& d : dep) out.dependent.push_back(d.first);
  }
  return out;
}

Eigen::MatrixXd random_state_regressor(const Model<double>& model, int count, unsigned seed) {
  if (count < 1) throw InvalidArgument("random_state_regressor: count must be positive");
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const int nv = model.nv;
  Eigen::MatrixXd W(static_cast<Eigen::Index>(count) * nv, 10 * model.num_bodies());
  Data<double> data(model);
  Eigen::MatrixXd Y;
  Eigen::VectorXd q(model.nq), qd(nv), qdd(nv);
  for (int s = 0; s < count; ++s) {
    for (int i = 0; i < model.nq; ++i) q[i] = 3.0 * u(rng);
    for (const Joint<double>& j : model.joints) {
      if (j.nq != 1 || !(j.lower > -1e29 && j.upper < 1e29)) continue;
      q[j.idx_q] = j.lower + (j.upper - j.lower) * 0.5 * (1.0 + u(rng));
    }
    normalize_configuration(model, q);
    for (int i = 0; i < nv; ++i) qd[i] = 2.0 * u(rng);
    for (int i = 0; i < nv; ++i) qdd[i] = 2.0 * u(rng);
    inverse_dynamics_regressor(model, data, q, qd, qdd, Y);
    W.middleRows(static_cast<Eigen::Index>(s) * nv, nv) = Y;
  }
  return W;
}

std::vector<std::string> standard_parameter_names(const Model<double>& model) {
  static const char* coord[10] = {"m", "hx", "hy", "hz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz"};
  std::vector<std::string> out;
  for (const Body<double>& b : model.bodies)
    for (const char* c : coord) out.push_back(b.name + "." + c);
  return out;
}

std::string base_parameter_expression(const BaseParameters& base, int k, const std::vector<std::string>& names) {
  std::string s = names.at(static_cast<size_t>(base.independent.at(static_cast<size_t>(k))));
  const double largest = base.K.size() > 0 ? base.K.row(k).cwiseAbs().maxCoeff() : 0.0;
  for (size_t d = 0; d < base.dependent.size(); ++d) {
    const double c = base.K(k, static_cast<Eigen::Index>(d));
    if (!(std::abs(c) > 1e-9 * std::max(1.0, largest))) continue;  // rounding of the model's geometry
    char buf[64];
    std::snprintf(buf, sizeof buf, " %s %.6g·", c < 0 ? "-" : "+", std::abs(c));
    s += buf + names.at(static_cast<size_t>(base.dependent[d]));
  }
  return s;
}

}  // namespace neuralsim

namespace neuralsim {

BaseParameterFit fit_base_parameters(const Model<double>& model, const ParameterSet& params,
                                     const std::vector<double>& x,
                                     const std::vector<const InverseDynamicsSamples*>& samples,
                                     const Eigen::Ref<const Eigen::MatrixXd>& data_jacobian, double residual_variance,
                                     const std::vector<int>& columns) {
  BaseParameterFit out;
  const std::vector<int> bodies = inertial_bodies(params);
  if (bodies.empty()) return out;
  for (int b : bodies) out.links.push_back(model.bodies[static_cast<size_t>(b)].name);
  const int f = static_cast<int>(bodies.size()), nv = model.nv;
  out.standard = 10 * f;
  Eigen::Index rows = 0;
  for (const InverseDynamicsSamples* s : samples) rows += s->q.rows() * nv;
  const Eigen::Index variables = data_jacobian.cols();
  if (rows > data_jacobian.rows())
    throw InvalidArgument("fit_base_parameters: the Jacobian has " + std::to_string(data_jacobian.rows()) +
                          " rows, fewer than the samples' " + std::to_string(rows));
  if (columns.empty() ? variables != params.size() : static_cast<int>(columns.size()) != params.size())
    throw InvalidArgument("fit_base_parameters: " + std::to_string(params.size()) + " parameters against " +
                          std::to_string(columns.empty() ? variables : static_cast<Eigen::Index>(columns.size())) +
                          " Jacobian columns");
  for (int c : columns)
    if (c < 0 || c >= variables)
      throw InvalidArgument("fit_base_parameters: column " + std::to_string(c) + " outside the Jacobian's " +
                            std::to_string(variables));
  Eigen::MatrixXd W(rows, out.standard);
  Data<double> data(model);
  Eigen::MatrixXd Y;
  Eigen::Index row = 0;
  for (const InverseDynamicsSamples* s : samples)
    for (Eigen::Index k = 0; k < s->q.rows(); ++k, row += nv) {
      inverse_dynamics_regressor(model, data, Eigen::VectorXd(s->q.row(k).transpose()),
                                 Eigen::VectorXd(s->qd.row(k).transpose()), Eigen::VectorXd(s->qdd.row(k).transpose()),
                                 Y);
      for (int c = 0; c < f; ++c) W.block(row, 10 * c, nv, 10) = Y.middleCols(10 * bodies[static_cast<size_t>(c)], 10);
    }
  out.base = compute_base_parameters(W);
  Model<double> fitted = model;
  params.apply(x.data(), fitted);
  Eigen::VectorXd pi(out.standard);
  for (int c = 0; c < f; ++c)
    pi.segment<10>(10 * c) = inertial_parameters(fitted.bodies[static_cast<size_t>(bodies[static_cast<size_t>(c)])].inertia);
  const Eigen::VectorXd beta = out.base.base_values(pi);
  W.resize(0, 0);
  // G = ∂β/∂x = B ∂π/∂x, ∂π/∂x by forward-mode Jets over x (8 per pass).
  const int P = params.size(), rank = out.base.rank;
  const Eigen::MatrixXd B = out.base.combination_matrix(out.standard);
  Eigen::MatrixXd dpi = Eigen::MatrixXd::Zero(out.standard, P);
  const Model<Jet8> jet_model = model.template cast<Jet8>();
  std::vector<Jet8> xj(static_cast<size_t>(P));
  for (int pass = 0; pass < P; pass += 8) {
    for (int i = 0; i < P; ++i) {
      xj[static_cast<size_t>(i)] = Jet8(x[static_cast<size_t>(i)]);
      if (i >= pass && i < pass + 8) xj[static_cast<size_t>(i)].v[i - pass] = 1;
    }
    Model<Jet8> m = jet_model;
    params.apply(xj.data(), m);
    for (int c = 0; c < f; ++c) {
      const Eigen::Matrix<Jet8, 10, 1> p = inertial_parameters(m.bodies[static_cast<size_t>(bodies[static_cast<size_t>(c)])].inertia);
      for (int k = 0; k < 10; ++k)
        for (int l = 0; l < 8 && pass + l < P; ++l) dpi(10 * c + k, pass + l) = p[k].v[l];
    }
  }
  // G in the Jacobian's variables (a joint fit: params' columns scattered).
  Eigen::MatrixXd G = Eigen::MatrixXd::Zero(rank, variables);
  const Eigen::MatrixXd G_local = B * dpi;
  for (int i = 0; i < P; ++i) G.col(columns.empty() ? i : columns[static_cast<size_t>(i)]) += G_local.col(i);
  // Σ_x = s² (JᵀJ)⁺ on the column-equilibrated data rows (the pseudo-inverse:
  // log-Cholesky coordinates have directions no torque sees, and every
  // generalized inverse gives an estimable β the same variance).
  Eigen::MatrixXd JtJ = Eigen::MatrixXd::Zero(variables, variables);
  JtJ.selfadjointView<Eigen::Lower>().rankUpdate(data_jacobian.transpose());
  JtJ = JtJ.selfadjointView<Eigen::Lower>();
  Eigen::VectorXd norm = JtJ.diagonal().cwiseSqrt();
  for (Eigen::Index c = 0; c < norm.size(); ++c)
    if (!(norm[c] > 0)) norm[c] = 1;
  const Eigen::MatrixXd JtJs = norm.cwiseInverse().asDiagonal() * JtJ * norm.cwiseInverse().asDiagonal();
  const SymmetricEigen eig = symmetric_eigen(JtJs);
  const Eigen::VectorXd& ev = eig.values;
  const double cut = 1e-12 * std::max(ev.maxCoeff(), 0.0);
  Eigen::VectorXd inv = Eigen::VectorXd::Zero(ev.size());
  for (Eigen::Index k = 0; k < ev.size(); ++k)
    if (ev[k] > cut) inv[k] = 1 / ev[k];
  const Eigen::MatrixXd Gs = G * norm.cwiseInverse().asDiagonal();  // G in the equilibrated variables
  const Eigen::MatrixXd GV = Gs * eig.vectors;
  // G's part outside J's row space is not determined: NaN.
  const Eigen::MatrixXd unseen = GV * (inv.array() > 0).select(Eigen::VectorXd::Zero(ev.size()), 1.0).asDiagonal();
  const std::vector<std::string> names = standard_parameter_names(model);
  std::vector<std::string> fitted_names;
  for (int b : bodies)
    for (int k = 0; k < 10; ++k) fitted_names.push_back(names[static_cast<size_t>(10 * b + k)]);
  for (int k = 0; k < rank; ++k) {
    BaseParameterEstimate e;
    e.expression = base_parameter_expression(out.base, k, fitted_names);
    e.value = beta[k];
    const double var = residual_variance * (GV.row(k).array().square() * inv.transpose().array()).sum();
    const bool determined = unseen.row(k).norm() <= 1e-8 * std::max(GV.row(k).norm(), 1e-300);
    e.std_error = determined ? std::sqrt(var) : std::numeric_limits<double>::quiet_NaN();
    out.estimates.push_back(e);
  }
  return out;
}

}  // namespace neuralsim
