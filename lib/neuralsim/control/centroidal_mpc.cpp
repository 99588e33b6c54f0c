// Convex MPC on the single-rigid-body model (Di Carlo et al., IROS 2018);
// see centroidal_mpc.hpp for the model, the discretization and the QP.
#include "neuralsim/control/centroidal_mpc.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "neuralsim/core/dense.hpp"
#include "neuralsim/core/errors.hpp"

namespace neuralsim {

namespace {

constexpr double kUnbounded = std::numeric_limits<double>::infinity();
constexpr int kF = 3 * kNumLegs;  // forces per interval

[[noreturn]] void fail_mpc(const std::string& what) { throw InvalidArgument("CentroidalMpcParameters: " + what); }

void check_positive(const char* name, double v) {
  if (!std::isfinite(v) || v <= 0) fail_mpc(std::string(name) + " must be finite and > 0, got " + std::to_string(v));
}

Eigen::Matrix3d skew(const Eigen::Vector3d& v) {
  Eigen::Matrix3d m;
  m << 0, -v.z(), v.y(), v.z(), 0, -v.x(), -v.y(), v.x(), 0;
  return m;
}

}  // namespace

Eigen::Matrix3d yaw_rotation(double psi) {
  const double c = std::cos(psi), s = std::sin(psi);
  Eigen::Matrix3d R;
  R << c, -s, 0, s, c, 0, 0, 0, 1;
  return R;
}

void CentroidalMpcParameters::check() const {
  check_positive("mass", mass);
  if (!inertia.allFinite()) fail_mpc("inertia has a non-finite entry");
  if ((inertia - inertia.transpose()).cwiseAbs().maxCoeff() > 1e-9 * (1.0 + inertia.cwiseAbs().maxCoeff()))
    fail_mpc("inertia is not symmetric");
  if (symmetric_eigenvalues(inertia).minCoeff() <= 0)
    fail_mpc("inertia is not positive definite");
  check_positive("friction", friction);
  if (!std::isfinite(fz_min) || fz_min < 0) fail_mpc("fz_min must be finite and >= 0, got " + std::to_string(fz_min));
  if (!std::isfinite(fz_max) || fz_max <= fz_min)
    fail_mpc("fz_max must be finite and > fz_min (" + std::to_string(fz_min) + "), got " + std::to_string(fz_max));
  if (horizon < 1 || horizon > 100) fail_mpc("horizon must be in [1, 100], got " + std::to_string(horizon));
  check_positive("dt", dt);
  check_positive("gravity", gravity);
  for (int i = 0; i < kMpcStates; ++i)
    if (!std::isfinite(state_weights[i]) || state_weights[i] < 0)
      fail_mpc("state_weights[" + std::to_string(i) + "] must be finite and >= 0, got " +
           std::to_string(state_weights[i]));
  check_positive("force_weight", force_weight);
}

CentroidalMpcInput::CentroidalMpcInput(int horizon)
    : x0(MpcState::Zero()),
      x_ref(Eigen::Matrix<double, kMpcStates, Eigen::Dynamic>::Zero(kMpcStates, horizon)),
      feet(Eigen::Matrix<double, 3, kNumLegs>::Zero()),
      contact(Eigen::Matrix<double, kNumLegs, Eigen::Dynamic>::Ones(kNumLegs, horizon)) {}

CentroidalMpc::CentroidalMpc(const CentroidalMpcParameters& parameters)
    : p_((parameters.check(), parameters)),
      inertia_inv_(parameters.inertia.inverse()),
      qp_(kF * parameters.horizon, 0, 4 * kNumLegs * parameters.horizon, parameters.qp) {
  const int N = p_.horizon, n = kF * N, m = 4 * kNumLegs * N;
  Phi_.setZero(kMpcStates * N, kMpcStates);
  Gamma_.setZero(kMpcStates * N, n);
  W_.setZero(kMpcStates * N, n);
  H_.setZero(n, n);
  g_.setZero(n);
  err_.setZero(kMpcStates * N);
  lo_.setZero(n);
  hi_.setZero(n);
  U_.setZero(n);
  // Friction pyramid rows, constant: for each force (fx, fy, fz),
  //   fx - μ fz ≤ 0,  fx + μ fz ≥ 0,  fy - μ fz ≤ 0,  fy + μ fz ≥ 0.
  C_.setZero(m, n);
  c_lo_.setZero(m);
  c_hi_.setZero(m);
  const double mu = p_.friction;
  for (int f = 0; f < kNumLegs * N; ++f) {
    for (int a = 0; a < 2; ++a) {
      const int r = 4 * f + 2 * a;
      C_(r, 3 * f + a) = 1.0;
      C_(r, 3 * f + 2) = -mu;
      c_lo_[r] = -kUnbounded;
      c_hi_[r] = 0.0;
      C_(r + 1, 3 * f + a) = 1.0;
      C_(r + 1, 3 * f + 2) = mu;
      c_lo_[r + 1] = 0.0;
      c_hi_[r + 1] = kUnbounded;
    }
  }
  qp_.update_inequalities(C_, c_lo_, c_hi_);
}

void CentroidalMpc::check_input(const CentroidalMpcInput& in) const {
  const int N = p_.horizon;
  if (in.x_ref.cols() != N || in.contact.cols() != N)
    throw InvalidArgument("CentroidalMpc::solve: input sized for horizon " + std::to_string(in.x_ref.cols()) +
                          " (x_ref) / " + std::to_string(in.contact.cols()) + " (contact), the MPC's is " +
                          std::to_string(N));
  if (!in.x0.allFinite() || !in.x_ref.allFinite() || !in.feet.allFinite() || !in.contact.allFinite())
    throw InvalidArgument("CentroidalMpc::solve: the input has a non-finite value (x0, x_ref, feet or contact)");
}

void CentroidalMpc::discretize(const CentroidalMpcInput& in, int k, Mat13& A, Mat13x12& B) const {
  using I = MpcIndex;
  // Linearization point of interval k: the state at its start (x0, then the
  // reference), as DC §IV-C.
  const double psi = k == 0 ? in.x0[2] : in.x_ref(2, k - 1);
  const Eigen::Vector3d com =
      k == 0 ? Eigen::Vector3d(in.x0.segment<3>(I::kPosition)) : Eigen::Vector3d(in.x_ref.col(k - 1).segment<3>(I::kPosition));
  const Eigen::Matrix3d Rz = yaw_rotation(psi);
  const Eigen::Matrix3d Iw_inv = Rz * inertia_inv_ * Rz.transpose();

  Mat13 Ac = Mat13::Zero();
  Ac.block<3, 3>(I::kTheta, I::kOmega) = Rz.transpose();
  Ac.block<3, 3>(I::kPosition, I::kVelocity).setIdentity();
  Ac(I::kVelocity + 2, I::kGravity) = 1.0;
  Mat13x12 Bc = Mat13x12::Zero();
  for (int i = 0; i < kNumLegs; ++i) {
    const Eigen::Vector3d r = in.feet.col(i) - com;
    Bc.block<3, 3>(I::kOmega, 3 * i) = Iw_inv * skew(r);
    Bc.block<3, 3>(I::kVelocity, 3 * i) = Eigen::Matrix3d::Identity() / p_.mass;
  }
  const double h = p_.dt;
  A = Mat13::Identity() + Ac * h + (Ac * Ac) * (0.5 * h * h);
  B = (Bc * h + Ac * Bc * (0.5 * h * h)).eval();
}

void CentroidalMpc::condense(const CentroidalMpcInput& in) {
  check_input(in);
  const int N = p_.horizon;
  constexpr int S = kMpcStates;
  // Row block k of Φ, Γ predicts x_{k+1} = A_k x_k + B_k f(k):
  //   Φ_k = A_k Φ_{k-1},  Γ_{k,j} = A_k Γ_{k-1,j} (j < k),  Γ_{k,k} = B_k.
  for (int k = 0; k < N; ++k) {
    discretize(in, k, A_, B_);
    if (k == 0) {
      Phi_.block<S, S>(0, 0) = A_;
    } else {
      Phi_.block<S, S>(S * k, 0).noalias() = A_ * Phi_.block<S, S>(S * (k - 1), 0);
      for (int j = 0; j < k; ++j)
        Gamma_.block<S, kF>(S * k, kF * j).noalias() = A_ * Gamma_.block<S, kF>(S * (k - 1), kF * j);
    }
    Gamma_.block<S, kF>(S * k, kF * k) = B_;
  }
}

void CentroidalMpc::predict(const MpcState& x0, const Eigen::Ref<const Eigen::VectorXd>& U,
                            Eigen::Ref<Eigen::VectorXd> X) const {
  X.noalias() = Phi_ * x0;
  X.noalias() += Gamma_ * U;
}

QpStatus CentroidalMpc::solve(const CentroidalMpcInput& in, bool warm_start) {
  condense(in);
  const int N = p_.horizon;
  constexpr int S = kMpcStates;
  const MpcState& q = p_.state_weights;
  // W = Q̄^½ Γ (its nonzero, lower block triangle), then H = WᵀW + R̄ by
  // blocks: H_{ij} = Σ_{k ≥ max(i,j)} W_{k,i}ᵀ W_{k,j} (fixed-size blocks, no heap).
  const MpcState q_sqrt = q.cwiseSqrt();
  for (int k = 0; k < N; ++k)
    for (int j = 0; j <= k; ++j)
      W_.block<S, kF>(S * k, kF * j) = q_sqrt.asDiagonal() * Gamma_.block<S, kF>(S * k, kF * j);
  for (int i = 0; i < N; ++i) {
    for (int j = 0; j <= i; ++j) {
      Eigen::Matrix<double, kF, kF> h = Eigen::Matrix<double, kF, kF>::Zero();
      for (int k = i; k < N; ++k)
        h.noalias() += W_.block<S, kF>(S * k, kF * i).transpose() * W_.block<S, kF>(S * k, kF * j);
      H_.block<kF, kF>(kF * i, kF * j) = h;
      if (i != j) H_.block<kF, kF>(kF * j, kF * i) = h.transpose();
    }
  }
  H_.diagonal().array() += p_.force_weight;
  // g = Γᵀ Q̄ (Φ x0 - X_ref).
  for (int k = 0; k < N; ++k)
    err_.segment<S>(S * k) =
        q.cwiseProduct(Phi_.block<S, S>(S * k, 0) * in.x0 - in.x_ref.col(k));
  for (int j = 0; j < N; ++j) {
    Eigen::Matrix<double, kF, 1> gj = Eigen::Matrix<double, kF, 1>::Zero();
    for (int k = j; k < N; ++k) gj.noalias() += Gamma_.block<S, kF>(S * k, kF * j).transpose() * err_.segment<S>(S * k);
    g_.segment<kF>(kF * j) = gj;
  }
  // Bounds: stance feet fz ∈ [fmin, fmax], fx, fy free (the pyramid bounds
  // them). Swing feet: f = 0, imposed by decoupling instead of by equality
  // bounds (which would cost GI one Householder step per variable, O(n²),
  // at every solve since H changes): their rows and columns of H are
  // cleared but for the diagonal and their g is 0, so the QP separates
  // exactly into the stance QP (the same H_ss, g_s as with f_w = 0
  // substituted) and min ½ h f_w² whose minimizer is f_w = 0; their
  // pyramid rows hold at f_w = 0. The returned swing forces are set to 0.
  for (int k = 0; k < N; ++k)
    for (int i = 0; i < kNumLegs; ++i) {
      const int v = kF * k + 3 * i;
      if (in.contact(i, k) > 0.5) {
        lo_.segment<2>(v).setConstant(-kUnbounded);
        hi_.segment<2>(v).setConstant(kUnbounded);
        lo_[v + 2] = p_.fz_min;
        hi_[v + 2] = p_.fz_max;
      } else {
        lo_.segment<3>(v).setConstant(-kUnbounded);
        hi_.segment<3>(v).setConstant(kUnbounded);
        for (int a = 0; a < 3; ++a) {
          const double d = H_(v + a, v + a);
          H_.row(v + a).setZero();
          H_.col(v + a).setZero();
          H_(v + a, v + a) = d;
          g_[v + a] = 0.0;
        }
      }
    }
  if (!qp_.update_hessian(H_)) return QpStatus::kNotConvex;
  qp_.update_gradient(g_);
  qp_.update_bounds(lo_, hi_);
  const QpStatus status = (warm_start && has_solution_) ? qp_.solve(qp_.result().active_set) : qp_.solve();
  if (status == QpStatus::kOptimal) {
    // Onto the bounds exactly (the solver meets them to its tolerance);
    // swing feet carry exactly nothing.
    U_ = qp_.result().x.cwiseMax(lo_).cwiseMin(hi_);
    for (int k = 0; k < N; ++k)
      for (int i = 0; i < kNumLegs; ++i)
        if (in.contact(i, k) <= 0.5) U_.segment<3>(kF * k + 3 * i).setZero();
    has_solution_ = true;
  }
  return status;
}

Eigen::Matrix<double, 3, kNumLegs> CentroidalMpc::first_forces() const {
  Eigen::Matrix<double, 3, kNumLegs> f;
  for (int i = 0; i < kNumLegs; ++i) f.col(i) = U_.segment<3>(3 * i);
  return f;
}

}  // namespace neuralsim
