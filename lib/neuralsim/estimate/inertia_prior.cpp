#include "neuralsim/estimate/inertia_prior.hpp"

#include <Eigen/Cholesky>

#include <algorithm>
#include <cmath>
#include <limits>

#include "neuralsim/core/dense.hpp"
#include "neuralsim/core/errors.hpp"
#include "neuralsim/model/parameterization.hpp"

namespace neuralsim {

namespace {

Vec10 svec(const Eigen::Matrix4d& S) {
  const double r2 = std::sqrt(2.0);
  Vec10 v;
  v << S(0, 0), S(1, 1), S(2, 2), S(3, 3), r2 * S(0, 1), r2 * S(0, 2), r2 * S(0, 3), r2 * S(1, 2), r2 * S(1, 3),
      r2 * S(2, 3);
  return v;
}

// (log a − log b)/(a − b) for a, b > 0, accurate when a ≈ b (1/b at a = b).
double log_divided_difference(double a, double b) {
  const double t = (a - b) / b;
  if (std::abs(t) < 1e-8) return (1 - 0.5 * t) / b;
  return std::log1p(t) / (a - b);
}

}  // namespace

GeometricInertiaDistance::GeometricInertiaDistance(const Eigen::Matrix4d& J0) {
  const Eigen::LLT<Eigen::Matrix4d> llt(J0);
  if (!J0.allFinite() || (J0 - J0.transpose()).norm() > 1e-12 * J0.norm() || llt.info() != Eigen::Success ||
      !(llt.matrixL().toDenseMatrix().diagonal().minCoeff() > 0))
    throw InvalidArgument("GeometricInertiaDistance: the model's pseudo-inertia is not positive definite (the "
                          "link's inertia is not physically consistent)");
  L0_inverse_ = llt.matrixL().solve(Eigen::Matrix4d::Identity());
}

bool GeometricInertiaDistance::residual(const Eigen::Matrix4d& J, Vec10* r, const std::vector<Eigen::Matrix4d>& dJ,
                                        std::vector<Vec10>* dr) const {
  if (!J.allFinite()) return false;
  Eigen::Matrix4d A = L0_inverse_ * J * L0_inverse_.transpose();
  A = 0.5 * (A + A.transpose()).eval();
  const SymmetricEigen eig = symmetric_eigen(A);  // core/dense.hpp: compiled once for every caller
  if (!eig.converged) return false;
  const Eigen::Vector4d l = eig.values;
  if (!(l.minCoeff() > 0)) return false;
  const Eigen::Matrix4d V = eig.vectors;
  *r = svec(V * l.array().log().matrix().asDiagonal() * V.transpose());
  if (!dr) return true;
  Eigen::Matrix4d F;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) F(i, j) = log_divided_difference(l[i], l[j]);
  dr->resize(dJ.size());
  for (size_t k = 0; k < dJ.size(); ++k) {
    const Eigen::Matrix4d dA = V.transpose() * L0_inverse_ * dJ[k] * L0_inverse_.transpose() * V;
    (*dr)[k] = svec(V * F.cwiseProduct(0.5 * (dA + dA.transpose())) * V.transpose());
  }
  return true;
}

double GeometricInertiaDistance::distance(const Eigen::Matrix4d& J) const {
  Vec10 r;
  return residual(J, &r) ? r.norm() : std::numeric_limits<double>::infinity();
}

int inertial_body(const EstimatedParameter& p) {
  if (p.kind() == ParameterKind::kLogCholesky) return p.target.body;
  if (p.kind() != ParameterKind::kModel) return -1;
  using K = ParameterRef::Kind;
  const K k = p.target.model.kind;
  return k == K::kMass || k == K::kCom || k == K::kInertia ? p.target.model.index : -1;
}

std::vector<int> inertial_bodies(const ParameterSet& params) {
  std::vector<int> bodies;
  for (int i = 0; i < params.size(); ++i) {
    const int b = inertial_body(params[i]);
    if (b >= 0 && std::find(bodies.begin(), bodies.end(), b) == bodies.end()) bodies.push_back(b);
  }
  std::sort(bodies.begin(), bodies.end());
  return bodies;
}

LinkInertiaPrior::LinkInertiaPrior(const Model<double>& model, const ParameterSet& params, int body, double weight)
    : params_(params),
      model_(model.template cast<Jet8>()),
      body_(body),
      sqrt_weight_(std::sqrt(weight)),
      distance_(pseudo_inertia(model.bodies.at(static_cast<size_t>(body)).inertia)) {
  if (!(weight > 0) || !std::isfinite(weight))
    throw InvalidArgument("LinkInertiaPrior: expected a finite weight > 0, got " + std::to_string(weight));
  for (int i = 0; i < params.size(); ++i)
    if (inertial_body(params[i]) == body) variables_.push_back(i);
}

bool LinkInertiaPrior::evaluate(const double* x, double* r, double* jacobian) const {
  const int P = params_.size(), n = static_cast<int>(variables_.size());
  std::vector<Jet8> xj(static_cast<size_t>(P));
  Eigen::Matrix4d J;
  std::vector<Eigen::Matrix4d> dJ(static_cast<size_t>(n));
  // ∂J/∂x over the link's variables, 8 per pass of forward-mode Jets (one
  // pass without a Jacobian).
  for (int pass = 0; pass < std::max(n, 1); pass += 8) {
    for (int i = 0; i < P; ++i) xj[static_cast<size_t>(i)] = Jet8(x[i]);
    for (int l = 0; l < 8 && pass + l < n; ++l) xj[static_cast<size_t>(variables_[static_cast<size_t>(pass + l)])].v[l] = 1;
    Model<Jet8> m = model_;
    params_.apply(xj.data(), m);
    const Eigen::Matrix<Jet8, 4, 4> Jj = pseudo_inertia(m.bodies[static_cast<size_t>(body_)].inertia);
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 4; ++b) {
        J(a, b) = Jj(a, b).a;
        for (int l = 0; l < 8 && pass + l < n; ++l) dJ[static_cast<size_t>(pass + l)](a, b) = Jj(a, b).v[l];
      }
    if (!jacobian) break;
  }
  Vec10 res;
  std::vector<Vec10> dres;
  if (!distance_.residual(J, &res, jacobian ? dJ : std::vector<Eigen::Matrix4d>{}, jacobian ? &dres : nullptr))
    return false;
  for (int k = 0; k < 10; ++k) r[k] = sqrt_weight_ * res[k];
  if (!jacobian) return true;
  std::fill(jacobian, jacobian + 10 * static_cast<size_t>(P), 0.0);
  for (int l = 0; l < n; ++l)
    for (int k = 0; k < 10; ++k)
      jacobian[static_cast<size_t>(k) * P + variables_[static_cast<size_t>(l)]] = sqrt_weight_ * dres[static_cast<size_t>(l)][k];
  return true;
}

}  // namespace neuralsim
