// The convex MPC (Di Carlo et al. 2018) against mechanics: standing still,
// its forces carry the weight with no net moment about the CoM; the
// friction pyramid and normal-force bounds hold; swing feet carry nothing;
// the condensed prediction equals a forward simulation of the continuous
// single-rigid-body model (integrated independently here, by RK4, which is
// exact for its polynomial solutions).
#include <gtest/gtest.h>

#include <random>

#include "neuralsim/control/centroidal_mpc.hpp"
#include "neuralsim/core/errors.hpp"

namespace neuralsim {
namespace {

constexpr double kG = 9.81;

CentroidalMpcParameters laikago_like() {
  CentroidalMpcParameters p;
  p.mass = 25.0;
  p.inertia << 0.35, 0.01, 0.02, 0.01, 1.1, 0.0, 0.02, 0.0, 1.2;
  p.horizon = 10;
  p.dt = 0.03;
  p.friction = 0.6;
  p.fz_min = 0.0;
  p.fz_max = 300.0;
  return p;
}

// A standing robot at rest, CoM at (0, 0, h), feet on the ground around it
// (off centre, so front and rear feet must carry different loads).
CentroidalMpcInput standing_input(int N, double h) {
  CentroidalMpcInput in(N);
  in.x0.setZero();
  in.x0[5] = h;
  in.x0[12] = -kG;
  for (int k = 0; k < N; ++k) in.x_ref.col(k) = in.x0;
  in.feet.col(0) << 0.25, -0.13, 0;   // FR
  in.feet.col(1) << 0.25, 0.15, 0;    // FL
  in.feet.col(2) << -0.17, -0.13, 0;  // RR
  in.feet.col(3) << -0.17, 0.15, 0;   // RL
  in.contact.setOnes();
  return in;
}

Eigen::Matrix3d skew(const Eigen::Vector3d& v) {
  Eigen::Matrix3d m;
  m << 0, -v.z(), v.y(), v.z(), 0, -v.x(), -v.y(), v.x(), 0;
  return m;
}

TEST(CentroidalMpcTest, StandingForcesCarryTheWeightWithNoMomentAboutTheCom) {
  const CentroidalMpcParameters p = laikago_like();
  CentroidalMpc mpc(p);
  const CentroidalMpcInput in = standing_input(p.horizon, 0.3);
  ASSERT_EQ(mpc.solve(in), QpStatus::kOptimal);
  const Eigen::Vector3d com = in.x0.segment<3>(3);
  // The first half of the horizon: the last intervals' forces barely move
  // the weighted states before the horizon ends (no terminal cost), so R
  // pulls them down there, as in any finite-horizon MPC. Only the first
  // interval's forces are ever applied.
  for (int k = 0; k < p.horizon / 2; ++k) {
    Eigen::Vector3d F = Eigen::Vector3d::Zero(), M = Eigen::Vector3d::Zero();
    for (int i = 0; i < 4; ++i) {
      const Eigen::Vector3d f = mpc.forces().segment<3>(12 * k + 3 * i);
      F += f;
      M += (in.feet.col(i) - com).cross(f);
      EXPECT_GT(f.z(), 0.0);
    }
    // Holding still needs Σf = m g e_z and Σ r × f = 0. The force weight R
    // trades a tiny sag against force: with R/Q ~ 1e-7 the deviation it buys
    // is below 0.1 % of the weight (and 0.05 N m) here.
    const double W = p.mass * kG;
    EXPECT_NEAR(F.z(), W, 1e-3 * W) << "interval " << k;
    EXPECT_NEAR(F.x(), 0.0, 1e-3 * W);
    EXPECT_NEAR(F.y(), 0.0, 1e-3 * W);
    EXPECT_LT(M.norm(), 1e-3 * W * 0.2) << "interval " << k << " moment " << M.transpose();
  }
  // Off-centre CoM: the rear feet (closer to it) carry more than the front ones.
  const auto f0 = mpc.first_forces();
  EXPECT_GT(f0(2, 2) + f0(2, 3), 1.3 * (f0(2, 0) + f0(2, 1)));
  // Lever rule about the CoM along x: front·0.25 = rear·0.17.
  EXPECT_NEAR((f0(2, 0) + f0(2, 1)) * 0.25, (f0(2, 2) + f0(2, 3)) * 0.17, 2e-3 * p.mass * kG * 0.2);
}

TEST(CentroidalMpcTest, FrictionPyramidNormalBoundsAndSwingFeetHold) {
  CentroidalMpcParameters p = laikago_like();
  p.fz_min = 10.0;
  p.fz_max = 120.0;
  CentroidalMpc mpc(p);
  CentroidalMpcInput in = standing_input(p.horizon, 0.3);
  // A large commanded velocity (2 m/s forward, 1 m/s left) demands more
  // horizontal force than friction allows; a trot table leaves two feet
  // in swing in every interval.
  for (int k = 0; k < p.horizon; ++k) {
    in.x_ref(9, k) = 2.0;
    in.x_ref(10, k) = 1.0;
    in.x_ref(3, k) = 2.0 * 0.03 * (k + 1);
    in.x_ref(4, k) = 1.0 * 0.03 * (k + 1);
    const bool a = (k / 5) % 2 == 0;
    in.contact.col(k) << a, !a, !a, a;
  }
  ASSERT_EQ(mpc.solve(in), QpStatus::kOptimal);
  const double mu = p.friction;
  int active_pyramid = 0, stance = 0;
  for (int k = 0; k < p.horizon; ++k)
    for (int i = 0; i < 4; ++i) {
      const Eigen::Vector3d f = mpc.forces().segment<3>(12 * k + 3 * i);
      if (in.contact(i, k) < 0.5) {
        EXPECT_EQ(f.norm(), 0.0) << "swing foot " << i << " interval " << k;
        continue;
      }
      ++stance;
      const double tol = 1e-7 * (1 + f.z());
      EXPECT_LE(std::abs(f.x()), mu * f.z() + tol);
      EXPECT_LE(std::abs(f.y()), mu * f.z() + tol);
      EXPECT_GE(f.z(), p.fz_min - tol);
      EXPECT_LE(f.z(), p.fz_max + tol);
      if (std::abs(std::abs(f.x()) - mu * f.z()) < 1e-6 * (1 + f.z())) ++active_pyramid;
    }
  EXPECT_EQ(stance, 2 * p.horizon);
  EXPECT_GT(active_pyramid, 0) << "the demand should saturate the pyramid somewhere";
}

// x' = A_c x + B_c f, built here from the single-rigid-body equations.
void continuous_model(const CentroidalMpcParameters& p, double psi, const Eigen::Vector3d& com,
                      const Eigen::Matrix<double, 3, 4>& feet, Eigen::Matrix<double, 13, 13>& A,
                      Eigen::Matrix<double, 13, 12>& B) {
  const Eigen::Matrix3d Rz = Eigen::AngleAxisd(psi, Eigen::Vector3d::UnitZ()).toRotationMatrix();
  const Eigen::Matrix3d Iw = Rz * p.inertia * Rz.transpose();
  A.setZero();
  A.block<3, 3>(0, 6) = Rz.transpose();  // Θ̇ = Rz(ψ)ᵀ ω
  A.block<3, 3>(3, 9).setIdentity();     // ṗ
  A(11, 12) = 1.0;                       // p̈_z += g
  B.setZero();
  for (int i = 0; i < 4; ++i) {
    B.block<3, 3>(6, 3 * i) = Iw.inverse() * skew(feet.col(i) - com);  // I_w ω̇ = Σ r × f
    B.block<3, 3>(9, 3 * i) = Eigen::Matrix3d::Identity() / p.mass;     // m p̈ = Σ f + m g
  }
}

TEST(CentroidalMpcTest, CondensedPredictionMatchesSimulatingTheLinearModel) {
  CentroidalMpcParameters p = laikago_like();
  p.horizon = 12;
  CentroidalMpc mpc(p);
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  CentroidalMpcInput in(p.horizon);
  for (int i = 0; i < 12; ++i) in.x0[i] = 0.3 * u(rng);
  in.x0[2] = 0.8;  // a yaw away from zero
  in.x0[5] = 0.3;
  in.x0[12] = -kG;
  for (int k = 0; k < p.horizon; ++k) {
    for (int i = 0; i < 12; ++i) in.x_ref(i, k) = 0.3 * u(rng);
    in.x_ref(2, k) = 0.8 + 0.05 * (k + 1);  // turning reference: ψ varies along the horizon
    in.x_ref(12, k) = -kG;
  }
  for (int i = 0; i < 4; ++i) in.feet.col(i) << 0.3 * u(rng), 0.2 * u(rng), 0.0;
  Eigen::VectorXd U(12 * p.horizon);
  for (int i = 0; i < U.size(); ++i) U[i] = 40 * u(rng) + (i % 3 == 2 ? 60 : 0);

  mpc.condense(in);
  Eigen::VectorXd X(13 * p.horizon);
  mpc.predict(in.x0, U, X);

  // RK4 with the force held over each interval; the linearization point of
  // interval k is the state that starts it (x0, then the reference).
  Eigen::Matrix<double, 13, 1> x = in.x0;
  const int sub = 50;
  const double h = p.dt / sub;
  double worst = 0;
  for (int k = 0; k < p.horizon; ++k) {
    const double psi = k == 0 ? in.x0[2] : in.x_ref(2, k - 1);
    const Eigen::Vector3d com = k == 0 ? Eigen::Vector3d(in.x0.segment<3>(3)) : Eigen::Vector3d(in.x_ref.col(k - 1).segment<3>(3));
    Eigen::Matrix<double, 13, 13> A;
    Eigen::Matrix<double, 13, 12> B;
    continuous_model(p, psi, com, in.feet, A, B);
    const Eigen::Matrix<double, 12, 1> f = U.segment<12>(12 * k);
    auto rhs = [&](const Eigen::Matrix<double, 13, 1>& s) -> Eigen::Matrix<double, 13, 1> { return A * s + B * f; };
    for (int s = 0; s < sub; ++s) {
      const auto k1 = rhs(x), k2 = rhs(x + 0.5 * h * k1), k3 = rhs(x + 0.5 * h * k2), k4 = rhs(x + h * k3);
      x += h / 6 * (k1 + 2 * k2 + 2 * k3 + k4);
    }
    worst = std::max(worst, (X.segment<13>(13 * k) - x).cwiseAbs().maxCoeff());
  }
  EXPECT_LT(worst, 1e-10);
  // The prediction actually moves: a wrong B would not be hidden by zeros.
  EXPECT_GT((X.tail<13>() - in.x0).norm(), 0.1);
}

// The MPC's cost, from its definition: Σ_k ‖x_k - x_ref,k‖²_Q + R ‖U‖²,
// with the states predicted by the (RK4-checked) condensed model.
double mpc_cost(const CentroidalMpc& mpc, const CentroidalMpcInput& in, const Eigen::VectorXd& U) {
  const auto& p = mpc.parameters();
  Eigen::VectorXd X(13 * p.horizon);
  mpc.predict(in.x0, U, X);
  double J = p.force_weight * U.squaredNorm();
  for (int k = 0; k < p.horizon; ++k) {
    const Eigen::Matrix<double, 13, 1> e = X.segment<13>(13 * k) - in.x_ref.col(k);
    J += e.dot(p.state_weights.cwiseProduct(e));
  }
  return J;
}

TEST(CentroidalMpcTest, NoFeasibleForceSequenceHasALowerCost) {
  // Optimality of a convex problem: U* is the minimizer iff no feasible V
  // improves on it along the segment U* + λ (V - U*). Random feasible V
  // (inside the pyramid and the f_z bounds, swing feet at 0), a demanding
  // command so that constraints are active.
  CentroidalMpcParameters p = laikago_like();
  p.fz_max = 150;
  CentroidalMpc mpc(p);
  CentroidalMpcInput in = standing_input(p.horizon, 0.3);
  in.x0[9] = -0.3;
  in.x0[6] = 0.5;  // rolling
  for (int k = 0; k < p.horizon; ++k) {
    in.x_ref(9, k) = 1.0;
    in.x_ref(3, k) = 1.0 * 0.03 * (k + 1);
    in.x_ref(2, k) = 0.3 * 0.03 * (k + 1);
    in.x_ref(8, k) = 0.3;
    const bool a = (k / 4) % 2 == 0;
    in.contact.col(k) << a, !a, !a, a;
  }
  ASSERT_EQ(mpc.solve(in), QpStatus::kOptimal);
  const Eigen::VectorXd U = mpc.forces();
  const double J = mpc_cost(mpc, in, U);
  std::mt19937 rng(17);
  std::uniform_real_distribution<double> u(0, 1);
  int trials = 0;
  for (int t = 0; t < 200; ++t) {
    Eigen::VectorXd V = Eigen::VectorXd::Zero(U.size());
    for (int k = 0; k < p.horizon; ++k)
      for (int i = 0; i < 4; ++i) {
        if (in.contact(i, k) < 0.5) continue;
        const double fz = p.fz_min + (p.fz_max - p.fz_min) * u(rng);
        V.segment<3>(12 * k + 3 * i) << p.friction * fz * (2 * u(rng) - 1), p.friction * fz * (2 * u(rng) - 1), fz;
      }
    for (double lambda : {1e-4, 1e-3, 1e-2, 0.1, 1.0}) {
      const double Jv = mpc_cost(mpc, in, U + lambda * (V - U));
      EXPECT_GE(Jv, J - 1e-9 * (1 + J)) << "trial " << t << " lambda " << lambda;
      ++trials;
    }
  }
  EXPECT_EQ(trials, 1000);
  // A perturbation off the optimum costs more.
  Eigen::VectorXd W = U;
  W[2] += 1.0;
  EXPECT_GT(mpc_cost(mpc, in, W), J);
}

TEST(CentroidalMpcTest, WarmStartDoesNotChangeTheAnswer) {
  const CentroidalMpcParameters p = laikago_like();
  CentroidalMpc warm(p);
  CentroidalMpcInput in = standing_input(p.horizon, 0.3);
  ASSERT_EQ(warm.solve(in), QpStatus::kOptimal);
  for (int k = 0; k < p.horizon; ++k) in.x_ref(9, k) = 0.3;
  in.x0[9] = 0.1;
  in.contact.rightCols(5).row(1).setZero();
  ASSERT_EQ(warm.solve(in, true), QpStatus::kOptimal);
  EXPECT_TRUE(warm.qp_result().warm_started);
  CentroidalMpc cold(p);
  ASSERT_EQ(cold.solve(in, false), QpStatus::kOptimal);
  EXPECT_LT((warm.forces() - cold.forces()).cwiseAbs().maxCoeff(), 1e-6);
}

TEST(CentroidalMpcTest, RejectsInvalidParametersAndInput) {
  auto bad = [](auto edit) {
    CentroidalMpcParameters p = laikago_like();
    edit(p);
    return p;
  };
  EXPECT_THROW(CentroidalMpc(bad([](auto& p) { p.mass = -1; })), InvalidArgument);
  EXPECT_THROW(CentroidalMpc(bad([](auto& p) { p.mass = std::nan(""); })), InvalidArgument);
  EXPECT_THROW(CentroidalMpc(bad([](auto& p) { p.inertia(0, 0) = -1; })), InvalidArgument);
  EXPECT_THROW(CentroidalMpc(bad([](auto& p) { p.inertia(0, 1) = 0.3; })), InvalidArgument);  // unsymmetric
  EXPECT_THROW(CentroidalMpc(bad([](auto& p) { p.friction = 0; })), InvalidArgument);
  EXPECT_THROW(CentroidalMpc(bad([](auto& p) { p.fz_max = p.fz_min; })), InvalidArgument);
  EXPECT_THROW(CentroidalMpc(bad([](auto& p) { p.horizon = 0; })), InvalidArgument);
  EXPECT_THROW(CentroidalMpc(bad([](auto& p) { p.dt = 0; })), InvalidArgument);
  EXPECT_THROW(CentroidalMpc(bad([](auto& p) { p.state_weights[3] = -1; })), InvalidArgument);
  EXPECT_THROW(CentroidalMpc(bad([](auto& p) { p.force_weight = 0; })), InvalidArgument);
  CentroidalMpc mpc(laikago_like());
  CentroidalMpcInput wrong(5);
  EXPECT_THROW(mpc.solve(wrong), InvalidArgument);
  CentroidalMpcInput nan_input = standing_input(10, 0.3);
  nan_input.feet(0, 0) = std::nan("");
  EXPECT_THROW(mpc.solve(nan_input), InvalidArgument);
}

}  // namespace
}  // namespace neuralsim
