// Excitation design (excitation_design.hpp): Swevers' Fourier trajectory,
// the Fisher information of the base parameters, its exact gradient through
// the regressor on Jets, and Ceres' L-BFGS over the coefficients.
#include "neuralsim/estimate/excitation_design.hpp"

#include <ceres/gradient_problem.h>
#include <ceres/gradient_problem_solver.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <Eigen/Cholesky>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <random>

#include "neuralsim/core/dense.hpp"
#include "neuralsim/core/errors.hpp"
#include "neuralsim/core/scalar.hpp"
#include "neuralsim/dynamics/inverse_dynamics_regressor.hpp"
#include "neuralsim/dynamics/rnea.hpp"
#include "neuralsim/step/passive_forces.hpp"

namespace neuralsim {
namespace {

constexpr double kTwoPi = 6.283185307179586476925286766559;
constexpr double kNoLimit = 1e29;  // model limits at or above this are unset (joint.hpp defaults 1e30)

bool limited(double v) { return std::isfinite(v) && std::abs(v) < kNoLimit; }

// The basis of sample time t: q_j = φ_q · x_j, q̇_j = φ_qd · x_j, q̈_j =
// φ_qdd · x_j for joint j's block x_j = [q0, a_1..a_L, b_1..b_L].
struct FourierBasis {
  Eigen::VectorXd q, qd, qdd;
  FourierBasis(double omega, int L, double t) : q(1 + 2 * L), qd(1 + 2 * L), qdd(1 + 2 * L) {
    q[0] = 1;
    qd[0] = qdd[0] = 0;
    for (int l = 1; l <= L; ++l) {
      const double w = omega * l, s = std::sin(w * t), c = std::cos(w * t);
      q[l] = s / w;
      q[L + l] = -c / w;
      qd[l] = c;
      qd[L + l] = s;
      qdd[l] = -w * s;
      qdd[L + l] = w * c;
    }
  }
};

Eigen::VectorXd gear_ratios(const Model<double>& model) {
  Eigen::VectorXd g(model.nv);
  for (const Joint<double>& j : model.joints)
    for (int k = 0; k < j.nv; ++k) g[j.idx_v + k] = j.dynamics.gear_ratio;
  return g;
}

// The recorded command u = (RNEA − passive)/gear of every sample.
template <class S>
void model_command(const Model<S>& model, Data<S>& data, const VecX<S>& q, const VecX<S>& qd, const VecX<S>& qdd,
                   VecX<S>& u) {
  rnea(model, data, q, qd, qdd);
  passive_forces(model, data, q, qd);
  for (const Joint<S>& j : model.joints)
    for (int k = 0; k < j.nv; ++k) {
      const int i = j.idx_v + k;
      u[i] = (data.tau[i] - data.tau_passive[i]) / j.dynamics.gear_ratio;
    }
}

// ∂crit/∂F and crit for a positive-definite F; false otherwise.
bool criterion_of(ExcitationCriterion c, const Eigen::MatrixXd& F, double* value, Eigen::MatrixXd* dF) {
  if (c == ExcitationCriterion::kLogDet) {
    const Eigen::LLT<Eigen::MatrixXd> llt(F);
    if (llt.info() != Eigen::Success) return false;
    const Eigen::VectorXd d = Eigen::MatrixXd(llt.matrixL()).diagonal();
    if (!(d.minCoeff() > 0)) return false;
    *value = -2 * d.array().log().sum();
    if (dF) *dF = -llt.solve(Eigen::MatrixXd::Identity(F.rows(), F.cols()));
    return std::isfinite(*value);
  }
  const SymmetricEigen eig = symmetric_eigen(F, dF != nullptr);
  const Eigen::Index n = F.rows();
  const double lmin = eig.values[0], lmax = eig.values[n - 1];
  if (!(lmin > 0)) return false;
  *value = std::log(lmax) - std::log(lmin);
  if (dF) {
    const Eigen::VectorXd vmin = eig.vectors.col(0), vmax = eig.vectors.col(n - 1);
    *dF = vmax * vmax.transpose() / lmax - vmin * vmin.transpose() / lmin;
  }
  return std::isfinite(*value);
}

// The penalty of one value against a symmetric limit (ratio r = |x|/limit):
// w (r − (1 − margin))² beyond 1 − margin; adds ∂/∂x to *dx.
double limit_penalty(double x, double center, double half, double margin, double w, double* dx) {
  if (!limited(half)) return 0;
  const double r = std::abs(x - center) / half, e = r - (1 - margin);
  if (e <= 0) return 0;
  if (dx) *dx += 2 * w * e * (x >= center ? 1.0 : -1.0) / half;
  return w * e * e;
}

// A joint term's regressor entry (gear·u gains value × entry; passive_forces.hpp
// subtracts −d q̇ − offset + friction_torque, friction = −Fc·shape).
template <class S>
S joint_term_column(ExcitationJointTerm t, const JointDynamics<S>& d, const S& qd, const S& qdd) {
  switch (t) {
    case ExcitationJointTerm::kArmature: return qdd;
    case ExcitationJointTerm::kDamping: return qd;
    case ExcitationJointTerm::kFriction: return coulomb_friction_shape(d, qd);
    case ExcitationJointTerm::kTorqueOffset: return S(1);
  }
  return S(0);
}

class ExcitationFunction final : public ceres::FirstOrderFunction {
 public:
  explicit ExcitationFunction(const ExcitationObjective& o) : o_(o) {}
  bool Evaluate(const double* parameters, double* cost, double* gradient) const override {
    const Eigen::Map<const Eigen::VectorXd> z(parameters, o_.num_free());
    Eigen::VectorXd g;
    if (!o_.evaluate(z, cost, gradient ? &g : nullptr)) return false;
    if (gradient) Eigen::Map<Eigen::VectorXd>(gradient, o_.num_free()) = g;
    return true;
  }
  int NumParameters() const override { return o_.num_free(); }

 private:
  const ExcitationObjective& o_;
};

}  // namespace

double FourierTrajectory::base_frequency() const { return kTwoPi / period; }

void FourierTrajectory::evaluate(double t, Eigen::VectorXd& q, Eigen::VectorXd& qd, Eigen::VectorXd& qdd) const {
  const int n = joints(), L = harmonics();
  const FourierBasis phi(base_frequency(), L, t);
  q.resize(n);
  qd.resize(n);
  qdd.resize(n);
  const Eigen::VectorXd x = pack();
  for (int j = 0; j < n; ++j) {
    const auto block = x.segment(j * (1 + 2 * L), 1 + 2 * L);
    q[j] = phi.q.dot(block);
    qd[j] = phi.qd.dot(block);
    qdd[j] = phi.qdd.dot(block);
  }
}

Eigen::VectorXd FourierTrajectory::pack() const {
  const int n = joints(), L = harmonics(), m = 1 + 2 * L;
  Eigen::VectorXd x(n * m);
  for (int j = 0; j < n; ++j) {
    x[j * m] = q0[j];
    x.segment(j * m + 1, L) = a.row(j).transpose();
    x.segment(j * m + 1 + L, L) = b.row(j).transpose();
  }
  return x;
}

FourierTrajectory FourierTrajectory::unpack(double period, int joints, int harmonics, const Eigen::VectorXd& x) {
  const int L = harmonics, m = 1 + 2 * L;
  check_argument_size("FourierTrajectory::unpack", "x", x.size(), joints * m);
  FourierTrajectory f;
  f.period = period;
  f.q0.resize(joints);
  f.a.resize(joints, L);
  f.b.resize(joints, L);
  for (int j = 0; j < joints; ++j) {
    f.q0[j] = x[j * m];
    f.a.row(j) = x.segment(j * m + 1, L).transpose();
    f.b.row(j) = x.segment(j * m + 1 + L, L).transpose();
  }
  return f;
}

const char* excitation_criterion_name(ExcitationCriterion c) {
  return c == ExcitationCriterion::kLogDet ? "log_det" : "condition";
}

const char* excitation_joint_term_name(ExcitationJointTerm t) {
  switch (t) {
    case ExcitationJointTerm::kArmature: return "armature";
    case ExcitationJointTerm::kDamping: return "damping";
    case ExcitationJointTerm::kFriction: return "friction";
    case ExcitationJointTerm::kTorqueOffset: return "torque_offset";
  }
  return "";
}

void excitation_regressor(const Model<double>& model, Data<double>& data, const std::vector<ExcitationJointTerm>& terms,
                          const Eigen::VectorXd& q, const Eigen::VectorXd& qd, const Eigen::VectorXd& qdd,
                          Eigen::MatrixXd& Y) {
  const int nv = model.nv, nb = model.num_bodies(), T = static_cast<int>(terms.size());
  if (T == 0) {
    inverse_dynamics_regressor(model, data, q, qd, qdd, Y);
    return;
  }
  Eigen::MatrixXd R;
  inverse_dynamics_regressor(model, data, q, qd, qdd, R);
  Y.setZero(nv, 10 * nb + T * nv);
  Y.leftCols(10 * nb) = R;
  for (const Joint<double>& j : model.joints)
    for (int k = 0; k < j.nv; ++k) {
      const int i = j.idx_v + k;
      for (int t = 0; t < T; ++t) Y(i, 10 * nb + t * nv + i) = joint_term_column(terms[static_cast<size_t>(t)], j.dynamics, qd[i], qdd[i]);
    }
}

std::vector<int> excitation_coordinates(const Model<double>& model) {
  std::vector<int> c;
  for (const Joint<double>& j : model.joints) {
    if (j.type == JointType::kFree && &j == &model.joints.front()) continue;  // the mounted base
    if (j.nv == 0) continue;
    if (j.nv != 1 || j.nq != 1)
      throw InvalidArgument("excitation design: joint '" + j.name +
                            "' is a ball joint or a free joint below the root: "
                            "a design moves revolute and prismatic joints (a free root joint is held by a mount)");
    c.push_back(j.idx_v);
  }
  if (c.empty()) throw InvalidArgument("excitation design: the model has no revolute or prismatic joint to move");
  return c;
}

ExcitationLimits model_excitation_limits(const Model<double>& model) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<int> coords = excitation_coordinates(model);
  const int nd = static_cast<int>(coords.size());
  ExcitationLimits l;
  l.q_lower = Eigen::VectorXd::Constant(nd, -inf);
  l.q_upper = Eigen::VectorXd::Constant(nd, inf);
  l.qd = l.qdd = l.tau = Eigen::VectorXd::Constant(nd, inf);
  for (const Joint<double>& j : model.joints)
    for (int i = 0; i < nd; ++i) {
      if (coords[static_cast<size_t>(i)] != j.idx_v || j.nv != 1) continue;
      if (limited(j.lower) && limited(j.upper)) {
        l.q_lower[i] = j.lower;
        l.q_upper[i] = j.upper;
      }
      if (limited(j.velocity)) l.qd[i] = j.velocity;
      if (limited(j.effort)) l.tau[i] = j.effort;
    }
  return l;
}

// The observed rows (the designed joints' commands, then a mount's wrench),
// their scale (gear for a command, 1 for the wrench), weights 1/(scale σ)²
// and the mount's configuration.
void ExcitationObjective::setup_rows() {
  const Model<double>& model = model_;
  const ExcitationMount& mount = options_.mount;
  const int nd = static_cast<int>(coords_.size());
  const bool floating = model.joints.front().type == JointType::kFree;
  Eigen::VectorXd q0 = Eigen::VectorXd::Zero(model.nq);
  if (floating) {
    q0[6] = 1;  // identity quaternion (x y z w)
    if (mount.pose.size()) {
      check_argument_size("excitation design", "mount.pose", mount.pose.size(), 7);
      const double n = mount.pose.tail(4).norm();
      if (!mount.pose.allFinite() || !(std::abs(n - 1) < 1e-6))
        throw InvalidArgument(
            "excitation design: mount.pose must be finite with a unit quaternion (x y z qx qy qz qw), "
            "got a quaternion of norm " +
            std::to_string(n));
      q0.head(7) = mount.pose;
    }
  } else if (mount.wrench || mount.pose.size()) {
    throw InvalidArgument(
        "excitation design: mount is for a floating-base model (a free root joint); this model's "
        "root joint is '" +
        model.joints.front().name + "'");
  }
  mount_q_ = q0;
  const Eigen::VectorXd gear = gear_ratios(model);
  Eigen::VectorXd sigma = options_.noise.size() ? options_.noise : Eigen::VectorXd::Ones(nd);
  check_argument_size("excitation design", "noise", sigma.size(), nd);
  rows_ = coords_;
  std::vector<double> scale, s;
  for (int i = 0; i < nd; ++i) {
    scale.push_back(gear[coords_[static_cast<size_t>(i)]]);
    s.push_back(sigma[i]);
  }
  if (mount.wrench) {
    if (!(mount.force_noise > 0) || !(mount.torque_noise > 0))
      throw InvalidArgument("excitation design: mount force_noise and torque_noise must be positive");
    for (int k = 0; k < 6; ++k) {
      rows_.push_back(k);
      scale.push_back(1);
      s.push_back(k < 3 ? mount.torque_noise : mount.force_noise);
    }
  }
  row_scale_ = Eigen::Map<Eigen::VectorXd>(scale.data(), static_cast<Eigen::Index>(scale.size()));
  weights_.resize(row_scale_.size());
  for (Eigen::Index i = 0; i < weights_.size(); ++i)
    weights_[i] = 1 / std::pow(row_scale_[i] * s[static_cast<size_t>(i)], 2);
}

void ExcitationObjective::full_state(const Eigen::VectorXd& q, const Eigen::VectorXd& qd, const Eigen::VectorXd& qdd,
                                     Eigen::VectorXd& fq, Eigen::VectorXd& fqd, Eigen::VectorXd& fqdd) const {
  fq = mount_q_;
  fqd.setZero(model_.nv);
  fqdd.setZero(model_.nv);
  for (size_t c = 0; c < coords_.size(); ++c) {
    const int v = coords_[c], i = static_cast<int>(c);
    fq[q_index_[c]] = q[i];
    fqd[v] = qd[i];
    fqdd[v] = qdd[i];
  }
}

void ExcitationObjective::observation(Data<double>& data, ExcitationParameterJacobian::Workspace* ws,
                                      const Eigen::VectorXd& q, const Eigen::VectorXd& qd, const Eigen::VectorXd& qdd,
                                      Eigen::MatrixXd& A) const {
  const int p = static_cast<int>(columns_.size()), R = static_cast<int>(rows_.size());
  Eigen::MatrixXd Y;
  excitation_regressor(model_, data, options_.joint_terms, q, qd, qdd, Y);
  A.resize(R, size());
  for (int c = 0; c < p; ++c)
    for (int i = 0; i < R; ++i) A(i, c) = Y(rows_[static_cast<size_t>(i)], columns_[static_cast<size_t>(c)]);
  if (!named_ || named_->size() == 0) return;
  Eigen::MatrixXd J;
  named_->evaluate(*ws, q, qd, qdd, J);
  A.rightCols(named_->size()) = row_scale_.asDiagonal() * J;
}

// The named parameters: their columns at the random states beside β's;
// each kept when it adds a direction (the residual of its unit-norm column
// after projecting out the kept ones above 1e-7), else reported with the
// kept columns it is a combination of.
void ExcitationObjective::select_named(const Eigen::MatrixXd& Wb, const Eigen::MatrixXd& Wn,
                                       const ExcitationParameterJacobian& all, const Eigen::VectorXd& y_scale) {
  constexpr double kTol = 1e-7;
  std::vector<Eigen::VectorXd> basis;  // orthonormal
  std::vector<Eigen::VectorXd> kept_cols;
  for (Eigen::Index c = 0; c < Wb.cols(); ++c) kept_cols.push_back(Wb.col(c) / Wb.col(c).norm());
  auto orthogonalize = [&](Eigen::VectorXd v) {
    for (int pass = 0; pass < 2; ++pass)
      for (const Eigen::VectorXd& b : basis) v -= b.dot(v) * b;
    return v;
  };
  for (const Eigen::VectorXd& k : kept_cols) {
    Eigen::VectorXd v = orthogonalize(k);
    basis.push_back(v / v.norm());
  }
  for (int c = 0; c < all.size(); ++c) {
    const std::string& name = all.parameters()[static_cast<size_t>(c)].name;
    const double effect = Wn.col(c).norm() * std::max(1.0, std::abs(all.values()[static_cast<size_t>(c)]));
    if (!(effect > 1e-9 * y_scale.norm())) {
      unidentifiable_.push_back({name, {}});
      continue;
    }
    const Eigen::VectorXd u = Wn.col(c) / Wn.col(c).norm();
    const Eigen::VectorXd v = orthogonalize(u);
    if (v.norm() > kTol) {
      basis.push_back(v / v.norm());
      kept_cols.push_back(u);
      named_names_.push_back(name);
      continue;
    }
    // Which kept columns it is a combination of (least squares, largest first).
    Eigen::MatrixXd K(u.size(), static_cast<Eigen::Index>(kept_cols.size()));
    for (size_t k = 0; k < kept_cols.size(); ++k) K.col(static_cast<Eigen::Index>(k)) = kept_cols[k];
    const Eigen::VectorXd w = least_squares(K, u);
    std::vector<int> order(static_cast<size_t>(w.size()));
    for (size_t k = 0; k < order.size(); ++k) order[k] = static_cast<int>(k);
    std::sort(order.begin(), order.end(), [&](int a, int b) { return std::abs(w[a]) > std::abs(w[b]); });
    std::vector<int> with;
    for (size_t k = 0; k < std::min<size_t>(3, order.size()) && std::abs(w[order[k]]) > 1e-3 * std::abs(w[order[0]]);
         ++k)
      with.push_back(order[k]);
    unidentifiable_.push_back({name, with});
  }
}

ExcitationObjective::ExcitationObjective(const Model<double>& model, const ExcitationDesignOptions& options)
    : model_(model), options_(options) {
  const int nv = model.nv, L = options.harmonics, m = 1 + 2 * L, nb = model.num_bodies();
  coords_ = excitation_coordinates(model);
  const int nd = static_cast<int>(coords_.size());
  for (int v : coords_)
    for (const Joint<double>& j : model.joints)
      if (j.idx_v == v && j.nv == 1) q_index_.push_back(j.idx_q);
  if (L < 1 || (options.start_at_rest && L < 2))
    throw InvalidArgument("excitation design: harmonics must be ≥ 2 with start_at_rest (≥ 1 without), got " +
                          std::to_string(L));
  if (!(options.period > 0) || !(options.sample_rate > 0))
    throw InvalidArgument("excitation design: period and sample_rate must be positive");
  limits_ = model_excitation_limits(model);
  auto take = [&](const Eigen::VectorXd& given, Eigen::VectorXd& into, const char* what) {
    if (given.size() == 0) return;
    check_argument_size("excitation design", what, given.size(), nd);
    into = given;
  };
  take(options.limits.q_lower, limits_.q_lower, "q_lower");
  take(options.limits.q_upper, limits_.q_upper, "q_upper");
  take(options.limits.qd, limits_.qd, "qd");
  take(options.limits.qdd, limits_.qdd, "qdd");
  take(options.limits.tau, limits_.tau, "tau");
  for (int i = 0; i < nd; ++i) {
    const bool q_range = limited(limits_.q_lower[i]) && limited(limits_.q_upper[i]);
    if (q_range && !(limits_.q_upper[i] > limits_.q_lower[i]))
      throw InvalidArgument("excitation design: joint coordinate " + std::to_string(i) + " has q_upper ≤ q_lower");
    if (!q_range && !limited(limits_.qd[i]) && !limited(limits_.qdd[i]) && !limited(limits_.tau[i]))
      throw InvalidArgument("excitation design: velocity coordinate '" +
                            model.velocity_names()[static_cast<size_t>(coords_[static_cast<size_t>(i)])] +
                            "' has no finite limit (q range, qd, qdd or tau): its amplitude would grow without bound");
    torque_limited_ = torque_limited_ || limited(limits_.tau[i]);
  }
  setup_rows();
  const int R = static_cast<int>(rows_.size());
  std::vector<bool> command_rows(static_cast<size_t>(R));
  for (int i = 0; i < R; ++i) command_rows[static_cast<size_t>(i)] = i < nd;
  // The chosen bodies' columns, and their structural base parameters.
  std::vector<int> bodies = options.bodies;
  if (bodies.empty() && options.link_inertias)
    for (int b = 0; b < nb; ++b) bodies.push_back(b);
  for (int b : bodies) {
    if (b < 0 || b >= nb) throw InvalidArgument("excitation design: body index out of range");
    for (int c = 0; c < 10; ++c) selected_.push_back(10 * b + c);
  }
  const int T = static_cast<int>(options.joint_terms.size());
  for (int t = 0; t < T; ++t)
    for (int j : coords_) selected_.push_back(10 * nb + t * nv + j);
  joint_of_.assign(static_cast<size_t>(nv), -1);
  for (const Joint<double>& j : model.joints) {
    for (int k = 0; k < j.nv; ++k)
      joint_of_[static_cast<size_t>(j.idx_v + k)] = static_cast<int>(&j - model.joints.data());
    for (ExcitationJointTerm t : options.joint_terms)
      if (t == ExcitationJointTerm::kFriction && j.nv > 0 && j.dynamics.friction_law == FrictionLaw::kStribeck)
        throw InvalidArgument("excitation design: joint '" + j.name + "' has a Stribeck friction law, whose torque is "
                              "not linear in one friction level: the friction term covers the tanh, atan and sigmoid laws");
  }
  check_named_overlap(bodies);
  const ExcitationParameterJacobian all(model, options.parameters, rows_, command_rows);
  // The structural base parameters: the regressor at random states (as
  // random_state_regressor: q uniform in the limits, else ±3; q̇, q̈ ±2).
  const int cols = static_cast<int>(selected_.size()) + all.size();
  const int states = std::max(30, 3 * cols / R + 10);
  std::mt19937 rng(1991);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  Eigen::MatrixXd Ws(static_cast<Eigen::Index>(states) * R, static_cast<Eigen::Index>(selected_.size())), Y;
  Eigen::MatrixXd Wn(static_cast<Eigen::Index>(states) * R, all.size());
  Eigen::VectorXd ys(static_cast<Eigen::Index>(states) * R);
  Data<double> data(model);
  ExcitationParameterJacobian::Workspace ws(all);
  Eigen::VectorXd q(nd), qd(nd), qdd(nd), fq, fqd, fqdd, u(nv);
  Eigen::MatrixXd Jn;
  for (int r = 0; r < states; ++r) {
    for (int i = 0; i < nd; ++i) {
      const double lo = limits_.q_lower[i], hi = limits_.q_upper[i];
      q[i] = limited(lo) && limited(hi) ? lo + (hi - lo) * 0.5 * (1 + unit(rng)) : 3.0 * unit(rng);
      qd[i] = 2.0 * unit(rng);
      qdd[i] = 2.0 * unit(rng);
    }
    full_state(q, qd, qdd, fq, fqd, fqdd);
    excitation_regressor(model, data, options.joint_terms, fq, fqd, fqdd, Y);
    for (size_t c = 0; c < selected_.size(); ++c)
      for (int i = 0; i < R; ++i)
        Ws(r * R + i, static_cast<Eigen::Index>(c)) = Y(rows_[static_cast<size_t>(i)], selected_[c]);
    if (all.size() == 0) continue;
    all.evaluate(ws, fq, fqd, fqdd, Jn);
    Wn.middleRows(r * R, R) = row_scale_.asDiagonal() * Jn;
    model_command(model, data, fq, fqd, fqdd, u);
    for (int i = 0; i < R; ++i) ys[r * R + i] = row_scale_[i] * u[rows_[static_cast<size_t>(i)]];
  }
  if (!selected_.empty()) base_ = compute_base_parameters(Ws);
  for (int k : base_.independent) columns_.push_back(selected_[static_cast<size_t>(k)]);
  Eigen::MatrixXd Wb(Ws.rows(), static_cast<Eigen::Index>(base_.independent.size()));
  for (size_t k = 0; k < base_.independent.size(); ++k)
    Wb.col(static_cast<Eigen::Index>(k)) = Ws.col(base_.independent[k]);
  select_named(Wb, Wn, all, ys);
  if (size() == 0) throw InvalidArgument("excitation design: no chosen parameter acts on a torque");
  if (!named_names_.empty())
    named_ = std::make_unique<ExcitationParameterJacobian>(model, named_names_, rows_, command_rows);
  // P: x = P z. Under start_at_rest a_1 = −Σ_{l≥2} a_l, b_1 = −Σ_{l≥2} l b_l.
  const int mf = options.start_at_rest ? m - 2 : m;
  P_ = Eigen::MatrixXd::Zero(nd * m, nd * mf);
  for (int j = 0; j < nd; ++j) {
    const int r = j * m, c = j * mf;
    if (!options.start_at_rest) {
      P_.block(r, c, m, m).setIdentity();
      continue;
    }
    P_(r, c) = 1;  // q0
    for (int l = 2; l <= L; ++l) {
      P_(r + l, c + l - 1) = 1;                  // a_l
      P_(r + 1, c + l - 1) = -1;                 // a_1
      P_(r + L + l, c + L + l - 2) = 1;          // b_l
      P_(r + L + 1, c + L + l - 2) = -l;         // b_1
    }
  }
  const int N = std::max(2, static_cast<int>(std::lround(options.period * options.sample_rate)));
  grid_ = Eigen::VectorXd::LinSpaced(N, 0, options.period * (N - 1) / N);
}

// A named parameter that is already in F: a chosen link's inertial
// parameter (its base parameters hold it) or a joint term.
void ExcitationObjective::check_named_overlap(const std::vector<int>& bodies) const {
  using K = ParameterRef::Kind;
  for (const std::string& name : options_.parameters) {
    const std::optional<NamedParameter> p = resolve_named_parameter(name, model_, false);
    if (!p) continue;  // the Jacobian's constructor names it
    if (p->kind == ParameterKind::kLogCholesky)
      throw InvalidArgument("excitation design: '" + name +
                            "' is a log-Cholesky coordinate: a link's inertias enter "
                            "through links (their base parameters), or give its mass, com or inertia by name");
    if (p->kind != ParameterKind::kModel) continue;
    const K k = p->model.kind;
    if (k == K::kMass || k == K::kCom || k == K::kInertia)
      for (int b : bodies)
        if (b == p->model.index)
          throw InvalidArgument("excitation design: '" + name + "' is an inertial parameter of link '" +
                                model_.bodies[static_cast<size_t>(b)].name +
                                "', whose base parameters are already identified (links): leave the link out of links");
    const std::pair<K, ExcitationJointTerm> terms[4] = {{K::kArmature, ExcitationJointTerm::kArmature},
                                                        {K::kDamping, ExcitationJointTerm::kDamping},
                                                        {K::kFriction, ExcitationJointTerm::kFriction},
                                                        {K::kTorqueOffset, ExcitationJointTerm::kTorqueOffset}};
    for (const auto& [kind, term] : terms)
      for (ExcitationJointTerm t : options_.joint_terms)
        if (k == kind && t == term)
          throw InvalidArgument("excitation design: '" + name + "' is already identified as the joint term '" +
                                excitation_joint_term_name(t) + "'");
  }
  for (size_t a = 0; a < options_.parameters.size(); ++a)
    for (size_t b = 0; b < a; ++b)
      if (options_.parameters[a] == options_.parameters[b])
        throw InvalidArgument("excitation design: parameter '" + options_.parameters[a] + "' is listed twice");
}

ExcitationObjective::~ExcitationObjective() = default;

Eigen::VectorXd ExcitationObjective::free_variables(const Eigen::VectorXd& x) const {
  return least_squares(P_, x);
}

FourierTrajectory ExcitationObjective::trajectory(const Eigen::VectorXd& z) const {
  return FourierTrajectory::unpack(options_.period, static_cast<int>(coords_.size()), options_.harmonics, P_ * z);
}

// ∂(criterion + penalty)/∂state of sample k, added to dS's row k: the
// observation's derivative in the state (Jet8 lanes, ⌈3nd/8⌉ passes) paired
// with M = 2 Σ⁻¹ A ∂crit/∂F, and the torque penalty's.
void ExcitationObjective::state_gradient(const Model<Jet8>& jm, Data<Jet8>& jd,
                                         ExcitationParameterJacobian::Workspace* ws, const Eigen::RowVectorXd& s,
                                         const Eigen::MatrixXd* M, double* pen,
                                         Eigen::Ref<Eigen::RowVectorXd> dS) const {
  const int nd = static_cast<int>(coords_.size()), nv = model_.nv, nb = model_.num_bodies();
  const int p = static_cast<int>(columns_.size()), R = static_cast<int>(rows_.size());
  VecX<Jet8> q(model_.nq), qd(nv), qdd(nv), u(nv);
  MatX<Jet8> Yj, Jn;
  Eigen::VectorXd du(nd);  // ∂penalty/∂u of the sample
  const int passes = M ? (3 * nd + 7) / 8 : 1;
  for (int pass = 0; pass < passes; ++pass) {
    for (Eigen::Index i = 0; i < mount_q_.size(); ++i) q[i] = Jet8(mount_q_[i]);
    for (int i = 0; i < nv; ++i) qd[i] = qdd[i] = Jet8(0);
    for (int d = 0; d < 3 * nd; ++d) {
      Jet8 v(s[d]);
      if (M && d >= 8 * pass && d < 8 * pass + 8) v.v[d - 8 * pass] = 1;
      const size_t c = static_cast<size_t>(d % nd);
      (d < nd ? q[q_index_[c]] : d < 2 * nd ? qd[coords_[c]] : qdd[coords_[c]]) = v;
    }
    const int lanes = M ? std::min(8, 3 * nd - 8 * pass) : 0;
    if (M) {
      inverse_dynamics_regressor(jm, jd, q, qd, qdd, Yj);
      for (int c = 0; c < p; ++c) {
        const int col = columns_[static_cast<size_t>(c)];
        if (col < 10 * nb) {
          for (int l = 0; l < lanes; ++l) {
            double sum = 0;
            for (int i = 0; i < R; ++i) sum += (*M)(i, c) * Yj(rows_[static_cast<size_t>(i)], col).v[l];
            dS[8 * pass + l] += sum;
          }
          continue;
        }
        // A joint term: one entry, in the row of coordinate v (a designed joint's row i < nd).
        const int t = (col - 10 * nb) / nv, v = (col - 10 * nb) % nv;
        const int i = static_cast<int>(std::find(coords_.begin(), coords_.end(), v) - coords_.begin());
        const Jet8 e = joint_term_column(options_.joint_terms[static_cast<size_t>(t)],
                                         jm.joints[static_cast<size_t>(joint_of_[static_cast<size_t>(v)])].dynamics,
                                         qd[v], qdd[v]);
        for (int l = 0; l < lanes; ++l) dS[8 * pass + l] += (*M)(i, c) * e.v[l];
      }
      if (named_) {
        named_->state_derivative(*ws, q, qd, qdd, Jn);
        for (int c = 0; c < named_->size(); ++c)
          for (int i = 0; i < R; ++i)
            for (int l = 0; l < lanes; ++l) dS[8 * pass + l] += (*M)(i, p + c) * row_scale_[i] * Jn(i, c).v[l];
      }
    }
    if (!torque_limited_) continue;
    model_command(jm, jd, q, qd, qdd, u);
    if (pass == 0) {
      du.setZero();
      for (int j = 0; j < nd; ++j)
        *pen += limit_penalty(u[coords_[static_cast<size_t>(j)]].a, 0, limits_.tau[j], options_.margin,
                              options_.penalty, &du[j]);
    }
    for (int l = 0; l < lanes; ++l)
      for (int j = 0; j < nd; ++j) dS[8 * pass + l] += du[j] * u[coords_[static_cast<size_t>(j)]].v[l];
  }
}

bool ExcitationObjective::evaluate(const Eigen::VectorXd& z, double* value, Eigen::VectorXd* gradient) const {
  const int nd = static_cast<int>(coords_.size()), L = options_.harmonics, m = 1 + 2 * L;
  const int N = static_cast<int>(grid_.size()), P = size();
  const Eigen::VectorXd x = P_ * z;
  const double omega = kTwoPi / options_.period, margin = options_.margin, w = options_.penalty;
  // Pass 1 (double): every sample's state, A and F.
  std::vector<FourierBasis> basis;
  basis.reserve(static_cast<size_t>(N));
  Eigen::MatrixXd S(N, 3 * nd);  // rows: (q, q̇, q̈) of the designed coordinates
  for (int k = 0; k < N; ++k) {
    basis.emplace_back(omega, L, grid_[k]);
    for (int j = 0; j < nd; ++j) {
      const auto block = x.segment(j * m, m);
      S(k, j) = basis.back().q.dot(block);
      S(k, nd + j) = basis.back().qd.dot(block);
      S(k, 2 * nd + j) = basis.back().qdd.dot(block);
    }
  }
  // Samples in parallel (TBB, each into its own slot), sums in sample
  // order: the same bits at any thread count.
  constexpr int kGrain = 16;
  std::vector<Eigen::MatrixXd> A(static_cast<size_t>(N));
  tbb::parallel_for(tbb::blocked_range<int>(0, N, kGrain), [&](const tbb::blocked_range<int>& range) {
    Data<double> data(model_);
    std::unique_ptr<ExcitationParameterJacobian::Workspace> ws;
    if (named_) ws = std::make_unique<ExcitationParameterJacobian::Workspace>(*named_);
    Eigen::VectorXd fq, fqd, fqdd;
    for (int k = range.begin(); k < range.end(); ++k) {
      full_state(S.row(k).segment(0, nd).transpose(), S.row(k).segment(nd, nd).transpose(),
                 S.row(k).segment(2 * nd, nd).transpose(), fq, fqd, fqdd);
      observation(data, ws.get(), fq, fqd, fqdd, A[static_cast<size_t>(k)]);
    }
  });
  Eigen::MatrixXd F = Eigen::MatrixXd::Zero(P, P);
  for (int k = 0; k < N; ++k)
    F.noalias() += A[static_cast<size_t>(k)].transpose() * weights_.asDiagonal() * A[static_cast<size_t>(k)];
  double crit = 0;
  Eigen::MatrixXd dF;
  if (!criterion_of(options_.criterion, F, &crit, gradient ? &dF : nullptr)) return false;
  // The penalty and ∂/∂state of (criterion + penalty), per sample.
  Eigen::VectorXd pen = Eigen::VectorXd::Zero(N);
  RowMatrixXd dS = RowMatrixXd::Zero(N, 3 * nd);
  for (int k = 0; k < N; ++k)
    for (int j = 0; j < nd; ++j) {
      const double lo = limits_.q_lower[j], hi = limits_.q_upper[j];
      if (limited(lo) && limited(hi))
        pen[k] += limit_penalty(S(k, j), 0.5 * (lo + hi), 0.5 * (hi - lo), margin, w, gradient ? &dS(k, j) : nullptr);
      pen[k] += limit_penalty(S(k, nd + j), 0, limits_.qd[j], margin, w, gradient ? &dS(k, nd + j) : nullptr);
      pen[k] += limit_penalty(S(k, 2 * nd + j), 0, limits_.qdd[j], margin, w, gradient ? &dS(k, 2 * nd + j) : nullptr);
    }
  // Pass 2 (Jet8 over the state): dA and the torque penalty.
  if (gradient || torque_limited_) {
    const Model<Jet8> jm = model_.template cast<Jet8>();
    tbb::parallel_for(tbb::blocked_range<int>(0, N, kGrain), [&](const tbb::blocked_range<int>& range) {
      Data<Jet8> jd(jm);
      std::unique_ptr<ExcitationParameterJacobian::Workspace> ws;
      if (named_ && gradient) ws = std::make_unique<ExcitationParameterJacobian::Workspace>(*named_);
      Eigen::MatrixXd M;
      for (int k = range.begin(); k < range.end(); ++k) {
        if (gradient) M = 2.0 * weights_.asDiagonal() * A[static_cast<size_t>(k)] * dF;
        state_gradient(jm, jd, ws.get(), S.row(k), gradient ? &M : nullptr, &pen[k], dS.row(k));
      }
    });
  }
  *value = crit + pen.sum();
  if (gradient) {
    Eigen::VectorXd gx = Eigen::VectorXd::Zero(nd * m);
    for (int k = 0; k < N; ++k) {
      const FourierBasis& b = basis[static_cast<size_t>(k)];
      for (int j = 0; j < nd; ++j)
        gx.segment(j * m, m) += dS(k, j) * b.q + dS(k, nd + j) * b.qd + dS(k, 2 * nd + j) * b.qdd;
    }
    *gradient = P_.transpose() * gx;
  }
  return std::isfinite(*value);
}

// The samples of `f` on `times`.
void sample_trajectory(const FourierTrajectory& f, const Eigen::VectorXd& times, RowMatrixXd& q, RowMatrixXd& qd,
                       RowMatrixXd& qdd) {
  const Eigen::Index N = times.size(), nv = f.joints();
  q.resize(N, nv);
  qd.resize(N, nv);
  qdd.resize(N, nv);
  Eigen::VectorXd a, b, c;
  for (Eigen::Index k = 0; k < N; ++k) {
    f.evaluate(times[k], a, b, c);
    q.row(k) = a.transpose();
    qd.row(k) = b.transpose();
    qdd.row(k) = c.transpose();
  }
}

double ExcitationObjective::criterion(const Eigen::VectorXd& z) const {
  RowMatrixXd q, qd, qdd;
  sample_trajectory(trajectory(z), grid_, q, qd, qdd);
  const ExcitationInformation info = excitation_information(*this, q, qd, qdd);
  double crit = 0;
  if (!criterion_of(options_.criterion, info.fisher, &crit, nullptr)) return std::numeric_limits<double>::infinity();
  return crit;
}

double ExcitationObjective::penalty(const Eigen::VectorXd& z) const {
  double total = 0;
  if (!evaluate(z, &total, nullptr)) return std::numeric_limits<double>::quiet_NaN();
  return total - criterion(z);
}

ExcitationInformation excitation_information(const ExcitationObjective& o, const RowMatrixXd& q, const RowMatrixXd& qd,
                                             const RowMatrixXd& qdd) {
  const int p = o.size();
  ExcitationInformation info;
  info.fisher = Eigen::MatrixXd::Zero(p, p);
  Data<double> data(o.model());
  std::unique_ptr<ExcitationParameterJacobian::Workspace> ws;
  if (o.named_jacobian()) ws = std::make_unique<ExcitationParameterJacobian::Workspace>(*o.named_jacobian());
  Eigen::MatrixXd A;
  Eigen::VectorXd fq, fqd, fqdd;
  for (Eigen::Index k = 0; k < q.rows(); ++k) {
    o.full_state(q.row(k).transpose(), qd.row(k).transpose(), qdd.row(k).transpose(), fq, fqd, fqdd);
    o.observation(data, ws.get(), fq, fqd, fqdd, A);
    info.fisher.noalias() += A.transpose() * o.weights().asDiagonal() * A;
  }
  const SymmetricEigen eig = symmetric_eigen(info.fisher);
  const double lmin = eig.values[0], lmax = eig.values[p - 1];
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (lmin > 0) {
    info.log_det = eig.values.array().log().sum();
    info.condition = lmax / lmin;
    info.std_errors = (eig.vectors * eig.values.cwiseInverse().asDiagonal() * eig.vectors.transpose())
                          .diagonal()
                          .cwiseSqrt();
  } else {
    info.log_det = -std::numeric_limits<double>::infinity();
    info.condition = std::numeric_limits<double>::infinity();
    info.std_errors = Eigen::VectorXd::Constant(p, nan);
  }
  return info;
}

namespace {

// Each limit's ratio |x − centre| / half-width at every sample of `times`
// (q: the range's centre and half width; q̇, q̈, u: 0 and the bound), or
// the worst over all of them when `margins` is null.
double limit_ratio(const ExcitationObjective& o, const FourierTrajectory& f, const Eigen::VectorXd& times,
                   std::vector<ExcitationLimitMargin>* margins = nullptr) {
  const Model<double>& model = o.model();
  const ExcitationLimits& lim = o.limits();
  const int nd = f.joints();
  RowMatrixXd q, qd, qdd;
  sample_trajectory(f, times, q, qd, qdd);
  RowMatrixXd u(q.rows(), nd);
  bool torque = false;
  for (int j = 0; j < nd; ++j) torque = torque || limited(lim.tau[j]);
  if (torque) {
    Data<double> data(model);
    Eigen::VectorXd uk(model.nv), fq, fqd, fqdd;
    for (Eigen::Index k = 0; k < q.rows(); ++k) {
      o.full_state(q.row(k).transpose(), qd.row(k).transpose(), qdd.row(k).transpose(), fq, fqd, fqdd);
      model_command(model, data, fq, fqd, fqdd, uk);
      for (int j = 0; j < nd; ++j) u(k, j) = uk[o.coordinates()[static_cast<size_t>(j)]];
    }
  }
  double worst = 0;
  for (int j = 0; j < nd; ++j) {
    if (limited(lim.q_lower[j]) && limited(lim.q_upper[j])) {
      const double c = 0.5 * (lim.q_lower[j] + lim.q_upper[j]), h = 0.5 * (lim.q_upper[j] - lim.q_lower[j]);
      const double r = (q.col(j).array() - c).abs().maxCoeff() / h;
      worst = std::max(worst, r);
      if (margins) margins->push_back({"q", j, h, h * (1 - r), 1 - r});
    }
    const std::pair<const char*, const RowMatrixXd*> channels[3] = {{"qd", &qd}, {"qdd", &qdd}, {"tau", &u}};
    const double bounds[3] = {lim.qd[j], lim.qdd[j], lim.tau[j]};
    for (int c = 0; c < 3; ++c) {
      if (!limited(bounds[c])) continue;
      const double peak = channels[c].second->col(j).cwiseAbs().maxCoeff();
      worst = std::max(worst, peak / bounds[c]);
      if (margins) margins->push_back({channels[c].first, j, bounds[c], peak, 1 - peak / bounds[c]});
    }
  }
  return worst;
}

void describe_design(const ExcitationObjective& objective, const FourierTrajectory& initial,
                     const Eigen::VectorXd& check, ExcitationDesignResult& res);

FourierTrajectory scaled(FourierTrajectory f, double s) {
  f.a *= s;
  f.b *= s;
  return f;
}

}  // namespace

ExcitationDesignResult design_excitation(const Model<double>& model, const ExcitationDesignOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  const ExcitationObjective objective(model, options);
  const ExcitationLimits& lim = objective.limits();
  const int nv = static_cast<int>(objective.coordinates().size()), L = options.harmonics,
            mf = objective.num_free() / nv;
  const Eigen::VectorXd& grid = objective.grid();
  const int n_check = std::max(2, static_cast<int>(grid.size()) * std::max(1, options.check_refinement));
  const Eigen::VectorXd check = Eigen::VectorXd::LinSpaced(n_check, 0, options.period * (n_check - 1) / n_check);
  Eigen::VectorXd center = Eigen::VectorXd::Zero(nv);
  for (int j = 0; j < nv; ++j)
    if (limited(lim.q_lower[j]) && limited(lim.q_upper[j])) center[j] = 0.5 * (lim.q_lower[j] + lim.q_upper[j]);

  struct Start {
    FourierTrajectory initial, designed;
    double criterion = std::numeric_limits<double>::infinity(), scale = 1;
    int iterations = 0;
    std::string termination;
  };
  Start best;
  int chosen = -1;
  std::string last_failure;
  for (int r = 0; r < std::max(1, options.restarts); ++r) {
    // A random start: q0 at the ranges' centres, coefficients N(0, 1)/l,
    // scaled until the tightest limit is at `initial_fill`.
    std::seed_seq seq{static_cast<unsigned>(options.seed & 0xffffffffu), static_cast<unsigned>(options.seed >> 32),
                      static_cast<unsigned>(r)};
    std::mt19937_64 rng(seq);
    std::normal_distribution<double> normal;
    Eigen::VectorXd z(objective.num_free());
    for (int j = 0; j < nv; ++j) {
      z[j * mf] = center[j];
      const int first = options.start_at_rest ? 2 : 1;
      for (int l = first; l <= L; ++l) z[j * mf + 1 + l - first] = normal(rng) / l;
      for (int l = first; l <= L; ++l) z[j * mf + 1 + (L - first + 1) + l - first] = normal(rng) / l;
    }
    FourierTrajectory f = objective.trajectory(z);
    // Holding still at q0 already takes `rest` of some limit (gravity
    // against a torque limit): the start then goes halfway to the penalty.
    const double rest = limit_ratio(objective, scaled(f, 0), grid);
    if (!(rest < 1 - options.margin))
      throw InvalidArgument("excitation design: holding still at the ranges' centre already takes " +
                            std::to_string(100 * rest) + " % of a limit (the model's torque at rest against a torque "
                            "limit?): no room for motion");
    const double fill = rest < options.initial_fill ? options.initial_fill : 0.5 * (rest + 1 - options.margin);
    double s = fill / std::max(limit_ratio(objective, f, grid), 1e-300);
    for (int k = 0; k < 200 && limit_ratio(objective, scaled(f, s), grid) > fill; ++k) s *= 0.9;
    Start start;
    start.initial = scaled(f, s);
    z = objective.free_variables(start.initial.pack());
    ceres::GradientProblemSolver::Options solver;
    solver.line_search_direction_type = ceres::LBFGS;
    solver.max_num_iterations = options.max_iterations;
    solver.logging_type = ceres::SILENT;
    ceres::GradientProblemSolver::Summary summary;
    ceres::Solve(solver, ceres::GradientProblem(new ExcitationFunction(objective)), z.data(), &summary);
    start.iterations = static_cast<int>(summary.iterations.size()) - 1;
    start.termination = summary.message;
    // Repair: shrink the oscillation about q0 until every limit holds on the
    // fine grid.
    f = objective.trajectory(z);
    double scale = 1;
    for (int k = 0; k < 1000 && limit_ratio(objective, scaled(f, scale), check) > 1; ++k) scale *= 0.995;
    if (limit_ratio(objective, scaled(f, scale), check) > 1) {
      last_failure = "no scaling of start " + std::to_string(r) + " keeps every limit";
      continue;
    }
    start.designed = scaled(f, scale);
    start.scale = scale;
    start.criterion = objective.criterion(objective.free_variables(start.designed.pack()));
    if (chosen < 0 || start.criterion < best.criterion) {
      best = start;
      chosen = r;
    }
  }
  if (chosen < 0) throw NumericalError("excitation design: " + last_failure);

  ExcitationDesignResult res;
  res.trajectory = best.designed;
  res.repair_scale = best.scale;
  res.iterations = best.iterations;
  res.chosen_start = chosen;
  res.termination = best.termination;
  describe_design(objective, best.initial, check, res);
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return res;
}

namespace {

// The result's names, model values, samples, information and margins.
void describe_design(const ExcitationObjective& objective, const FourierTrajectory& initial,
                     const Eigen::VectorXd& check, ExcitationDesignResult& res) {
  const Model<double>& model = objective.model();
  const ExcitationDesignOptions& options = objective.options();
  const int nv = model.nv, nd = static_cast<int>(objective.coordinates().size());
  res.base = objective.base();
  res.columns = objective.columns();
  res.coordinates = objective.coordinates();
  res.named = objective.named();
  if (objective.named_jacobian()) res.named_values = objective.named_jacobian()->values();
  // Names and model values of the columns: π's, then the joint terms'.
  std::vector<std::string> all = standard_parameter_names(model);
  const int T = static_cast<int>(options.joint_terms.size());
  Eigen::VectorXd pi_all(10 * model.num_bodies() + T * nv);
  pi_all.head(10 * model.num_bodies()) = model_inertial_parameters(model);
  const std::vector<std::string> coordinates = model.velocity_names();
  for (int t = 0; t < T; ++t)
    for (const Joint<double>& j : model.joints)
      for (int k = 0; k < j.nv; ++k) {
        const int i = j.idx_v + k;
        const JointDynamics<double>& d = j.dynamics;
        const ExcitationJointTerm term = options.joint_terms[static_cast<size_t>(t)];
        all.push_back(coordinates[static_cast<size_t>(i)] + "." + excitation_joint_term_name(term));
        pi_all[10 * model.num_bodies() + t * nv + i] =
            term == ExcitationJointTerm::kArmature ? d.armature
            : term == ExcitationJointTerm::kDamping ? d.damping
            : term == ExcitationJointTerm::kFriction ? d.coulomb_friction
                                                     : d.torque_offset;
      }
  std::vector<std::string> names;
  Eigen::VectorXd pi(static_cast<Eigen::Index>(objective.selected().size()));
  for (size_t c = 0; c < objective.selected().size(); ++c) {
    names.push_back(all[static_cast<size_t>(objective.selected()[c])]);
    pi[static_cast<Eigen::Index>(c)] = pi_all[objective.selected()[c]];
  }
  for (int k = 0; k < res.base.rank; ++k) res.parameter_names.push_back(base_parameter_expression(res.base, k, names));
  // Why each left-out named parameter is: no effect, or the columns it is a combination of.
  for (const auto& [name, with] : objective.unidentifiable()) {
    std::string why = with.empty() ? "it has no effect on any observed torque or wrench"
                                   : "its effect on the torques is a combination of those of ";
    for (size_t k = 0; k < with.size(); ++k) {
      const int c = with[k];
      why += (k ? "; " : "") + (c < res.base.rank ? "the base parameter " + res.parameter_names[static_cast<size_t>(c)]
                                                  : res.named[static_cast<size_t>(c - res.base.rank)]);
    }
    res.unidentifiable.push_back({name, why});
  }
  res.base_values = res.base.base_values(pi);
  // The sampled result: `periods` periods at output_rate, both ends.
  const double rate = options.output_rate > 0 ? options.output_rate : options.sample_rate;
  const int per_period = std::max(2, static_cast<int>(std::lround(options.period * rate)));
  const int n = per_period * std::max(1, options.periods) + 1;
  res.time = Eigen::VectorXd::LinSpaced(n, 0, options.period * std::max(1, options.periods));
  sample_trajectory(res.trajectory, res.time, res.q, res.qd, res.qdd);
  res.tau.resize(n, nd);
  res.model_q.resize(n, model.nq);
  res.model_qd.resize(n, nv);
  res.model_tau.resize(n, nv);
  const bool mounted = model.joints.front().type == JointType::kFree;
  if (mounted) res.wrench.resize(n, 6);
  Data<double> data(model);
  Eigen::VectorXd uk(nv), fq, fqd, fqdd;
  for (int k = 0; k < n; ++k) {
    objective.full_state(res.q.row(k).transpose(), res.qd.row(k).transpose(), res.qdd.row(k).transpose(), fq, fqd,
                         fqdd);
    model_command(model, data, fq, fqd, fqdd, uk);
    for (int j = 0; j < nd; ++j) res.tau(k, j) = uk[res.coordinates[static_cast<size_t>(j)]];
    if (mounted) res.wrench.row(k) = data.tau.head(6).transpose();  // RNEA's free-joint rows: the stand's wrench
    res.model_q.row(k) = fq.transpose();
    res.model_qd.row(k) = fqd.transpose();
    res.model_tau.row(k) = uk.transpose();
    if (mounted) res.model_tau.row(k).head(6) = res.wrench.row(k);
  }
  res.designed = excitation_information(objective, res.q, res.qd, res.qdd);
  RowMatrixXd q0, qd0, qdd0;
  sample_trajectory(initial, res.time, q0, qd0, qdd0);
  res.initial = excitation_information(objective, q0, qd0, qdd0);
  limit_ratio(objective, res.trajectory, check, &res.margins);
}

}  // namespace

}  // namespace neuralsim
