// Excitation design (excitation_design.hpp): Swevers' Fourier trajectory,
// the Fisher information of the base parameters, its exact gradient through
// the regressor on Jets, and Ceres' L-BFGS over the coefficients.
#include "neuralsim/estimate/excitation_design.hpp"

#include <ceres/gradient_problem.h>
#include <ceres/gradient_problem_solver.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <Eigen/Cholesky>
#include <chrono>
#include <cmath>
#include <limits>
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

ExcitationLimits model_excitation_limits(const Model<double>& model) {
  const double inf = std::numeric_limits<double>::infinity();
  ExcitationLimits l;
  l.q_lower = Eigen::VectorXd::Constant(model.nv, -inf);
  l.q_upper = Eigen::VectorXd::Constant(model.nv, inf);
  l.qd = l.qdd = l.tau = Eigen::VectorXd::Constant(model.nv, inf);
  for (const Joint<double>& j : model.joints)
    for (int k = 0; k < j.nv; ++k) {
      const int i = j.idx_v + k;
      if (limited(j.lower) && limited(j.upper)) {
        l.q_lower[i] = j.lower;
        l.q_upper[i] = j.upper;
      }
      if (limited(j.velocity)) l.qd[i] = j.velocity;
      if (limited(j.effort)) l.tau[i] = j.effort;
    }
  return l;
}

ExcitationObjective::ExcitationObjective(const Model<double>& model, const ExcitationDesignOptions& options)
    : model_(model), options_(options) {
  const int nv = model.nv, L = options.harmonics, m = 1 + 2 * L, nb = model.num_bodies();
  if (model.nq != nv) throw InvalidArgument("excitation design: the model has ball or free joints (nq ≠ nv)");
  if (nv < 1) throw InvalidArgument("excitation design: the model has no moving joint");
  if (L < 1 || (options.start_at_rest && L < 2))
    throw InvalidArgument("excitation design: harmonics must be ≥ 2 with start_at_rest (≥ 1 without), got " +
                          std::to_string(L));
  if (!(options.period > 0) || !(options.sample_rate > 0))
    throw InvalidArgument("excitation design: period and sample_rate must be positive");
  limits_ = model_excitation_limits(model);
  auto take = [&](const Eigen::VectorXd& given, Eigen::VectorXd& into, const char* what) {
    if (given.size() == 0) return;
    check_argument_size("excitation design", what, given.size(), nv);
    into = given;
  };
  take(options.limits.q_lower, limits_.q_lower, "q_lower");
  take(options.limits.q_upper, limits_.q_upper, "q_upper");
  take(options.limits.qd, limits_.qd, "qd");
  take(options.limits.qdd, limits_.qdd, "qdd");
  take(options.limits.tau, limits_.tau, "tau");
  for (int i = 0; i < nv; ++i) {
    const bool q_range = limited(limits_.q_lower[i]) && limited(limits_.q_upper[i]);
    if (q_range && !(limits_.q_upper[i] > limits_.q_lower[i]))
      throw InvalidArgument("excitation design: joint coordinate " + std::to_string(i) + " has q_upper ≤ q_lower");
    if (!q_range && !limited(limits_.qd[i]) && !limited(limits_.qdd[i]) && !limited(limits_.tau[i]))
      throw InvalidArgument("excitation design: velocity coordinate '" + model.velocity_names()[i] +
                            "' has no finite limit (q range, qd, qdd or tau): its amplitude would grow without bound");
    torque_limited_ = torque_limited_ || limited(limits_.tau[i]);
  }
  // Σ⁻¹ of the residual gear·u: 1/(gear σ)².
  Eigen::VectorXd sigma = options.noise.size() ? options.noise : Eigen::VectorXd::Ones(nv);
  check_argument_size("excitation design", "noise", sigma.size(), nv);
  weights_ = (gear_ratios(model).array() * sigma.array()).square().inverse().matrix();
  // The chosen bodies' columns, and their structural base parameters.
  std::vector<int> bodies = options.bodies;
  if (bodies.empty())
    for (int b = 0; b < nb; ++b) bodies.push_back(b);
  std::vector<int>& selected = selected_;
  for (int b : bodies) {
    if (b < 0 || b >= nb) throw InvalidArgument("excitation design: body index out of range");
    for (int c = 0; c < 10; ++c) selected.push_back(10 * b + c);
  }
  const int T = static_cast<int>(options.joint_terms.size());
  for (int t = 0; t < T; ++t)
    for (int j = 0; j < nv; ++j) selected.push_back(10 * nb + t * nv + j);
  for (const Joint<double>& j : model.joints) {
    for (int k = 0; k < j.nv; ++k) joint_of_.push_back(static_cast<int>(&j - model.joints.data()));
    for (ExcitationJointTerm t : options.joint_terms)
      if (t == ExcitationJointTerm::kFriction && j.nv > 0 && j.dynamics.friction_law == FrictionLaw::kStribeck)
        throw InvalidArgument("excitation design: joint '" + j.name + "' has a Stribeck friction law, whose torque is "
                              "not linear in one friction level: the friction term covers the tanh, atan and sigmoid laws");
  }
  // The structural base parameters: the regressor at random states (as
  // random_state_regressor: q uniform in the limits, else ±3; q̇, q̈ ±2).
  const int states = std::max(30, 3 * static_cast<int>(selected.size()) / nv + 10);
  std::mt19937 rng(1991);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  Eigen::MatrixXd Ws(static_cast<Eigen::Index>(states) * nv, static_cast<Eigen::Index>(selected.size())), Y;
  Data<double> data(model);
  Eigen::VectorXd q(nv), qd(nv), qdd(nv);
  for (int r = 0; r < states; ++r) {
    for (int i = 0; i < nv; ++i) {
      const double lo = limits_.q_lower[i], hi = limits_.q_upper[i];
      q[i] = limited(lo) && limited(hi) ? lo + (hi - lo) * 0.5 * (1 + unit(rng)) : 3.0 * unit(rng);
      qd[i] = 2.0 * unit(rng);
      qdd[i] = 2.0 * unit(rng);
    }
    excitation_regressor(model, data, options.joint_terms, q, qd, qdd, Y);
    for (size_t c = 0; c < selected.size(); ++c) Ws.block(r * nv, static_cast<Eigen::Index>(c), nv, 1) = Y.col(selected[c]);
  }
  base_ = compute_base_parameters(Ws);
  if (base_.rank == 0) throw InvalidArgument("excitation design: no chosen parameter acts on a torque");
  for (int k : base_.independent) columns_.push_back(selected[static_cast<size_t>(k)]);
  // P: x = P z. Under start_at_rest a_1 = −Σ_{l≥2} a_l, b_1 = −Σ_{l≥2} l b_l.
  const int mf = options.start_at_rest ? m - 2 : m;
  P_ = Eigen::MatrixXd::Zero(nv * m, nv * mf);
  for (int j = 0; j < nv; ++j) {
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

ExcitationObjective::~ExcitationObjective() = default;

Eigen::VectorXd ExcitationObjective::free_variables(const Eigen::VectorXd& x) const {
  return P_.colPivHouseholderQr().solve(x);
}

FourierTrajectory ExcitationObjective::trajectory(const Eigen::VectorXd& z) const {
  return FourierTrajectory::unpack(options_.period, model_.nv, options_.harmonics, P_ * z);
}

bool ExcitationObjective::evaluate(const Eigen::VectorXd& z, double* value, Eigen::VectorXd* gradient) const {
  const int nv = model_.nv, L = options_.harmonics, m = 1 + 2 * L, N = static_cast<int>(grid_.size());
  const int p = static_cast<int>(columns_.size()), nb = model_.num_bodies();
  const Eigen::VectorXd x = P_ * z;
  const double omega = kTwoPi / options_.period, margin = options_.margin, w = options_.penalty;
  // Pass 1 (double): every sample's state, Y₁ and F.
  std::vector<FourierBasis> basis;
  basis.reserve(static_cast<size_t>(N));
  Eigen::MatrixXd S(N, 3 * nv);  // rows: (q, q̇, q̈)
  for (int k = 0; k < N; ++k) {
    basis.emplace_back(omega, L, grid_[k]);
    for (int j = 0; j < nv; ++j) {
      const auto block = x.segment(j * m, m);
      S(k, j) = basis.back().q.dot(block);
      S(k, nv + j) = basis.back().qd.dot(block);
      S(k, 2 * nv + j) = basis.back().qdd.dot(block);
    }
  }
  // Samples in parallel (TBB, each into its own slot), sums in sample
  // order: the same bits at any thread count.
  constexpr int kGrain = 16;
  Eigen::MatrixXd F = Eigen::MatrixXd::Zero(p, p);
  std::vector<Eigen::MatrixXd> Y1(static_cast<size_t>(N), Eigen::MatrixXd(nv, p));
  tbb::parallel_for(tbb::blocked_range<int>(0, N, kGrain), [&](const tbb::blocked_range<int>& range) {
    Data<double> data(model_);
    Eigen::MatrixXd Y;
    for (int k = range.begin(); k < range.end(); ++k) {
      const Eigen::VectorXd q = S.row(k).segment(0, nv).transpose(), qd = S.row(k).segment(nv, nv).transpose(),
                            qdd = S.row(k).segment(2 * nv, nv).transpose();
      excitation_regressor(model_, data, options_.joint_terms, q, qd, qdd, Y);
      Eigen::MatrixXd& y1 = Y1[static_cast<size_t>(k)];
      for (int c = 0; c < p; ++c) y1.col(c) = Y.col(columns_[static_cast<size_t>(c)]);
    }
  });
  for (int k = 0; k < N; ++k) F.noalias() += Y1[static_cast<size_t>(k)].transpose() * weights_.asDiagonal() * Y1[static_cast<size_t>(k)];
  double crit = 0;
  Eigen::MatrixXd dF;
  if (!criterion_of(options_.criterion, F, &crit, gradient ? &dF : nullptr)) return false;
  // The penalty and ∂/∂state of (criterion + penalty), per sample.
  Eigen::VectorXd pen = Eigen::VectorXd::Zero(N);
  Eigen::MatrixXd dS = Eigen::MatrixXd::Zero(N, 3 * nv);
  for (int k = 0; k < N; ++k)
    for (int j = 0; j < nv; ++j) {
      const double lo = limits_.q_lower[j], hi = limits_.q_upper[j];
      if (limited(lo) && limited(hi))
        pen[k] += limit_penalty(S(k, j), 0.5 * (lo + hi), 0.5 * (hi - lo), margin, w, gradient ? &dS(k, j) : nullptr);
      pen[k] += limit_penalty(S(k, nv + j), 0, limits_.qd[j], margin, w, gradient ? &dS(k, nv + j) : nullptr);
      pen[k] += limit_penalty(S(k, 2 * nv + j), 0, limits_.qdd[j], margin, w, gradient ? &dS(k, 2 * nv + j) : nullptr);
    }
  // Pass 2 (Jet8 over the state, ⌈3nv/8⌉ passes per sample): dY₁ and du.
  if (gradient || torque_limited_) {
    const Model<Jet8> jm = model_.template cast<Jet8>();
    tbb::parallel_for(tbb::blocked_range<int>(0, N, kGrain), [&](const tbb::blocked_range<int>& range) {
      Data<Jet8> jd(jm);
      MatX<Jet8> Yj;
      VecX<Jet8> q(nv), qd(nv), qdd(nv), u(nv);
      Eigen::MatrixXd M;
      Eigen::VectorXd du(nv);  // ∂penalty/∂u of the sample
      for (int k = range.begin(); k < range.end(); ++k) {
        if (gradient) M = 2.0 * weights_.asDiagonal() * Y1[static_cast<size_t>(k)] * dF;
        const int passes = gradient ? (3 * nv + 7) / 8 : 1;
        for (int pass = 0; pass < passes; ++pass) {
          for (int d = 0; d < 3 * nv; ++d) {
            Jet8 v(S(k, d));
            if (gradient && d >= 8 * pass && d < 8 * pass + 8) v.v[d - 8 * pass] = 1;
            (d < nv ? q[d] : d < 2 * nv ? qd[d - nv] : qdd[d - 2 * nv]) = v;
          }
          const int lanes = gradient ? std::min(8, 3 * nv - 8 * pass) : 0;
          if (gradient) {
            inverse_dynamics_regressor(jm, jd, q, qd, qdd, Yj);
            for (int c = 0; c < p; ++c) {
              const int col = columns_[static_cast<size_t>(c)];
              if (col < 10 * nb) {
                for (int l = 0; l < lanes; ++l) {
                  double sum = 0;
                  for (int i = 0; i < nv; ++i) sum += M(i, c) * Yj(i, col).v[l];
                  dS(k, 8 * pass + l) += sum;
                }
                continue;
              }
              // A joint term: one entry, in row i.
              const int t = (col - 10 * nb) / nv, i = (col - 10 * nb) % nv;
              const Jet8 e = joint_term_column(options_.joint_terms[static_cast<size_t>(t)],
                                               jm.joints[static_cast<size_t>(joint_of_[static_cast<size_t>(i)])].dynamics,
                                               qd[i], qdd[i]);
              for (int l = 0; l < lanes; ++l) dS(k, 8 * pass + l) += M(i, c) * e.v[l];
            }
          }
          if (!torque_limited_) continue;
          model_command(jm, jd, q, qd, qdd, u);
          if (pass == 0) {
            du.setZero();
            for (int j = 0; j < nv; ++j) pen[k] += limit_penalty(u[j].a, 0, limits_.tau[j], margin, w, &du[j]);
          }
          for (int l = 0; l < lanes; ++l)
            for (int j = 0; j < nv; ++j) dS(k, 8 * pass + l) += du[j] * u[j].v[l];
        }
      }
    });
  }
  *value = crit + pen.sum();
  if (gradient) {
    Eigen::VectorXd gx = Eigen::VectorXd::Zero(nv * m);
    for (int k = 0; k < N; ++k)
      for (int j = 0; j < nv; ++j)
        gx.segment(j * m, m) += dS(k, j) * basis[static_cast<size_t>(k)].q + dS(k, nv + j) * basis[static_cast<size_t>(k)].qd +
                                dS(k, 2 * nv + j) * basis[static_cast<size_t>(k)].qdd;
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
  const ExcitationInformation info = excitation_information(model_, options_.joint_terms, columns_, weights_, q, qd, qdd);
  double crit = 0;
  if (!criterion_of(options_.criterion, info.fisher, &crit, nullptr)) return std::numeric_limits<double>::infinity();
  return crit;
}

double ExcitationObjective::penalty(const Eigen::VectorXd& z) const {
  double total = 0;
  if (!evaluate(z, &total, nullptr)) return std::numeric_limits<double>::quiet_NaN();
  return total - criterion(z);
}

ExcitationInformation excitation_information(const Model<double>& model, const std::vector<ExcitationJointTerm>& terms,
                                             const std::vector<int>& columns,
                                             const Eigen::VectorXd& weights, const RowMatrixXd& q,
                                             const RowMatrixXd& qd, const RowMatrixXd& qdd) {
  const int p = static_cast<int>(columns.size());
  ExcitationInformation info;
  info.fisher = Eigen::MatrixXd::Zero(p, p);
  Data<double> data(model);
  Eigen::MatrixXd Y, y1(model.nv, p);
  for (Eigen::Index k = 0; k < q.rows(); ++k) {
    excitation_regressor(model, data, terms, Eigen::VectorXd(q.row(k).transpose()), Eigen::VectorXd(qd.row(k).transpose()),
                         Eigen::VectorXd(qdd.row(k).transpose()), Y);
    for (int c = 0; c < p; ++c) y1.col(c) = Y.col(columns[static_cast<size_t>(c)]);
    info.fisher.noalias() += y1.transpose() * weights.asDiagonal() * y1;
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
double limit_ratio(const Model<double>& model, const ExcitationLimits& lim, const FourierTrajectory& f,
                   const Eigen::VectorXd& times, std::vector<ExcitationLimitMargin>* margins = nullptr) {
  const int nv = model.nv;
  RowMatrixXd q, qd, qdd;
  sample_trajectory(f, times, q, qd, qdd);
  RowMatrixXd u(q.rows(), nv);
  bool torque = false;
  for (int j = 0; j < nv; ++j) torque = torque || limited(lim.tau[j]);
  if (torque) {
    Data<double> data(model);
    Eigen::VectorXd uk(nv);
    for (Eigen::Index k = 0; k < q.rows(); ++k) {
      model_command(model, data, Eigen::VectorXd(q.row(k).transpose()), Eigen::VectorXd(qd.row(k).transpose()),
                    Eigen::VectorXd(qdd.row(k).transpose()), uk);
      u.row(k) = uk.transpose();
    }
  }
  double worst = 0;
  for (int j = 0; j < nv; ++j) {
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
  const int nv = model.nv, L = options.harmonics, mf = objective.num_free() / nv;
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
    const double rest = limit_ratio(model, lim, scaled(f, 0), grid);
    if (!(rest < 1 - options.margin))
      throw InvalidArgument("excitation design: holding still at the ranges' centre already takes " +
                            std::to_string(100 * rest) + " % of a limit (the model's torque at rest against a torque "
                            "limit?): no room for motion");
    const double fill = rest < options.initial_fill ? options.initial_fill : 0.5 * (rest + 1 - options.margin);
    double s = fill / std::max(limit_ratio(model, lim, f, grid), 1e-300);
    for (int k = 0; k < 200 && limit_ratio(model, lim, scaled(f, s), grid) > fill; ++k) s *= 0.9;
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
    for (int k = 0; k < 1000 && limit_ratio(model, lim, scaled(f, scale), check) > 1; ++k) scale *= 0.995;
    if (limit_ratio(model, lim, scaled(f, scale), check) > 1) {
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
  res.base = objective.base();
  res.columns = objective.columns();
  res.repair_scale = best.scale;
  res.iterations = best.iterations;
  res.chosen_start = chosen;
  res.termination = best.termination;
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
  res.base_values = res.base.base_values(pi);
  // The sampled result: `periods` periods at output_rate, both ends.
  const double rate = options.output_rate > 0 ? options.output_rate : options.sample_rate;
  const int per_period = std::max(2, static_cast<int>(std::lround(options.period * rate)));
  const int n = per_period * std::max(1, options.periods) + 1;
  res.time = Eigen::VectorXd::LinSpaced(n, 0, options.period * std::max(1, options.periods));
  sample_trajectory(res.trajectory, res.time, res.q, res.qd, res.qdd);
  res.tau.resize(n, nv);
  Data<double> data(model);
  Eigen::VectorXd uk(nv);
  for (int k = 0; k < n; ++k) {
    model_command(model, data, Eigen::VectorXd(res.q.row(k).transpose()), Eigen::VectorXd(res.qd.row(k).transpose()),
                  Eigen::VectorXd(res.qdd.row(k).transpose()), uk);
    res.tau.row(k) = uk.transpose();
  }
  res.designed = excitation_information(model, options.joint_terms, res.columns, objective.weights(), res.q, res.qd, res.qdd);
  RowMatrixXd q0, qd0, qdd0;
  sample_trajectory(best.initial, res.time, q0, qd0, qdd0);
  res.initial = excitation_information(model, options.joint_terms, res.columns, objective.weights(), q0, qd0, qdd0);
  limit_ratio(model, lim, res.trajectory, check, &res.margins);
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return res;
}

}  // namespace neuralsim
