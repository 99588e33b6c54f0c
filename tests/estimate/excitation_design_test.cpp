// Excitation design (estimate/excitation_design.hpp) on the geared two-link
// arm (configs/models/geared_arm.yaml: gear ratios 3 and −5, rotors):
//  - the Fourier trajectory's analytic q̇, q̈ are the derivatives of its q
//    (central differences), and start_at_rest gives q̇(0) = q̈(0) = 0;
//  - the exact gradient of criterion + penalty (through the regressor on
//    Jets) matches central differences of the same function, for both
//    criteria, with every penalty (q, q̇, q̈, torque) active and every joint
//    term (armature, damping, friction, offset) in F;
//  - the design keeps every limit at every sample of a grid 10× finer than
//    the optimization grid, with the torque recomputed by RNEA;
//  - it improves log det F and cond F over its random start;
//  - the predicted standard errors are the spread of least-squares
//    estimates: 80 noisy recordings of the designed trajectory (Gaussian
//    noise σ on the recorded command) fitted by weighted least squares on
//    the regressor's β columns (link inertias, damping, friction, offset)
//    give an empirical spread within 25 % of √diag F⁻¹.
#include "neuralsim/estimate/excitation_design.hpp"

#include <gtest/gtest.h>

#include <random>

#include "neuralsim/dynamics/inverse_dynamics_regressor.hpp"
#include "neuralsim/dynamics/rnea.hpp"
#include "neuralsim/io/yaml_model.hpp"
#include "neuralsim/step/passive_forces.hpp"
#include "support/excitation_support.hpp"
#include "support/files.hpp"

namespace neuralsim {
namespace excitation_design_test {
namespace {

Model<double> excitation_arm() { return load_yaml_model(testing::source_path("configs/models/geared_arm.yaml")); }

ExcitationDesignOptions excitation_small_options() { return testing::two_link_excitation_options(); }

TEST(ExcitationDesign, FourierDerivativesAreCentralDifferencesOfQ) {
  std::mt19937 rng(3);
  std::normal_distribution<double> n;
  FourierTrajectory f;
  f.period = 1.7;
  f.q0 = Eigen::Vector2d(0.2, -0.4);
  f.a.resize(2, 4);
  f.b.resize(2, 4);
  for (int i = 0; i < 8; ++i) {
    f.a(i % 2, i / 2) = n(rng);
    f.b(i % 2, i / 2) = n(rng);
  }
  const double h = 1e-4;
  Eigen::VectorXd q, qd, qdd, qp, qm, d1, d2;
  for (double t : {0.0, 0.3, 1.1, 1.69}) {
    f.evaluate(t, q, qd, qdd);
    f.evaluate(t + h, qp, d1, d2);
    f.evaluate(t - h, qm, d1, d2);
    EXPECT_LE(((qp - qm) / (2 * h) - qd).cwiseAbs().maxCoeff(), 1e-6 * (1 + qd.norm()));
    EXPECT_LE(((qp - 2 * q + qm) / (h * h) - qdd).cwiseAbs().maxCoeff(), 1e-4 * (1 + qdd.norm()));
    // Periodic: the same state one period later.
    f.evaluate(t + f.period, qp, d1, d2);
    EXPECT_LE((qp - q).cwiseAbs().maxCoeff(), 1e-12);
    EXPECT_LE((d1 - qd).cwiseAbs().maxCoeff(), 1e-11);
  }
  // start_at_rest: any free variables give q̇(0) = q̈(0) = 0.
  const Model<double> model = excitation_arm();
  const ExcitationObjective objective(model, excitation_small_options());
  Eigen::VectorXd z(objective.num_free());
  for (Eigen::Index i = 0; i < z.size(); ++i) z[i] = n(rng);
  objective.trajectory(z).evaluate(0.0, q, qd, qdd);
  EXPECT_LE(qd.cwiseAbs().maxCoeff(), 1e-13);
  EXPECT_LE(qdd.cwiseAbs().maxCoeff(), 1e-12);
}

// Limits at 90 % of what the trajectory of z reaches (q: its range shrunk
// by 10 % about the centre), so that every penalty is active.
ExcitationLimits excitation_active_limits(const Model<double>& model, const FourierTrajectory& f,
                                          const Eigen::VectorXd& times) {
  RowMatrixXd q, qd, qdd;
  sample_trajectory(f, times, q, qd, qdd);
  Data<double> data(model);
  Eigen::VectorXd u_max = Eigen::VectorXd::Zero(2);
  for (Eigen::Index k = 0; k < times.size(); ++k) {
    const Eigen::VectorXd qk = q.row(k).transpose(), qdk = qd.row(k).transpose();
    rnea(model, data, qk, qdk, Eigen::VectorXd(qdd.row(k).transpose()));
    passive_forces(model, data, qk, qdk);
    for (int j = 0; j < 2; ++j)
      u_max[j] = std::max(u_max[j], std::abs((data.tau[j] - data.tau_passive[j]) /
                                             model.joints[static_cast<size_t>(j)].dynamics.gear_ratio));
  }
  ExcitationLimits l;
  const Eigen::VectorXd lo = q.colwise().minCoeff().transpose(), hi = q.colwise().maxCoeff().transpose();
  l.q_lower = 0.5 * (lo + hi) - 0.45 * (hi - lo);
  l.q_upper = 0.5 * (lo + hi) + 0.45 * (hi - lo);
  l.qd = 0.9 * qd.cwiseAbs().colwise().maxCoeff().transpose();
  l.qdd = 0.9 * qdd.cwiseAbs().colwise().maxCoeff().transpose();
  l.tau = 0.9 * u_max;
  return l;
}

TEST(ExcitationDesign, GradientMatchesCentralDifferences) {
  const Model<double> model = excitation_arm();
  for (ExcitationCriterion c : {ExcitationCriterion::kLogDet, ExcitationCriterion::kCondition}) {
    ExcitationDesignOptions o = excitation_small_options();
    o.criterion = c;
    o.sample_rate = 15;
    o.penalty = 10;  // every penalty active, without drowning the criterion
    o.joint_terms = {ExcitationJointTerm::kArmature, ExcitationJointTerm::kDamping, ExcitationJointTerm::kFriction,
                     ExcitationJointTerm::kTorqueOffset};
    std::mt19937 rng(11);
    std::normal_distribution<double> n;
    Eigen::VectorXd z;
    {
      const ExcitationObjective first(model, o);
      z.resize(first.num_free());
      for (Eigen::Index i = 0; i < z.size(); ++i) z[i] = 0.8 * n(rng);
      o.limits = excitation_active_limits(model, first.trajectory(z), first.grid());
    }
    const ExcitationObjective objective(model, o);
    double value = 0;
    Eigen::VectorXd g;
    ASSERT_TRUE(objective.evaluate(z, &value, &g));
    // Each kind of limit alone contributes (the others switched off).
    for (int kind = 0; kind < 4; ++kind) {
      ExcitationDesignOptions one = o;
      const Eigen::VectorXd none = Eigen::VectorXd::Constant(2, std::numeric_limits<double>::infinity());
      if (kind != 0) one.limits.q_lower = -none, one.limits.q_upper = none;
      if (kind != 1) one.limits.qd = none;
      if (kind != 2) one.limits.qdd = none;
      if (kind != 3) one.limits.tau = none;
      EXPECT_GT(ExcitationObjective(model, one).penalty(z), 0) << "limit kind " << kind;
    }
    const Eigen::VectorXd fd = testing::excitation_central_differences(objective, z);
    for (Eigen::Index i = 0; i < z.size(); ++i)
      EXPECT_NEAR(g[i], fd[i], 1e-5 * (1 + g.cwiseAbs().maxCoeff()))
          << excitation_criterion_name(c) << " variable " << i;
  }
}

TEST(ExcitationDesign, DesignKeepsEveryLimitOnATenTimesFinerGridAndImprovesF) {
  const Model<double> model = excitation_arm();
  ExcitationDesignOptions o = excitation_small_options();
  o.check_refinement = 10;
  const ExcitationDesignResult r = design_excitation(model, o);
  // 10× the optimization grid (25 Hz), evaluated here with RNEA.
  const Eigen::VectorXd fine = Eigen::VectorXd::LinSpaced(501, 0, o.period);
  RowMatrixXd q, qd, qdd;
  sample_trajectory(r.trajectory, fine, q, qd, qdd);
  Data<double> data(model);
  double worst_tau = 0;
  for (Eigen::Index k = 0; k < fine.size(); ++k) {
    const Eigen::VectorXd qk = q.row(k).transpose(), qdk = qd.row(k).transpose();
    rnea(model, data, qk, qdk, Eigen::VectorXd(qdd.row(k).transpose()));
    passive_forces(model, data, qk, qdk);
    for (int j = 0; j < 2; ++j) {
      const double u = (data.tau[j] - data.tau_passive[j]) / model.joints[static_cast<size_t>(j)].dynamics.gear_ratio;
      EXPECT_LE(std::abs(u), o.limits.tau[j]) << "t " << fine[k] << " joint " << j;
      worst_tau = std::max(worst_tau, std::abs(u) / o.limits.tau[j]);
      EXPECT_GE(q(k, j), o.limits.q_lower[j]);
      EXPECT_LE(q(k, j), o.limits.q_upper[j]);
      EXPECT_LE(std::abs(qd(k, j)), o.limits.qd[j]);
      EXPECT_LE(std::abs(qdd(k, j)), o.limits.qdd[j]);
    }
  }
  // The design uses the room it has: some limit is within 10 % of active.
  double smallest = 1;
  for (const ExcitationLimitMargin& m : r.margins) smallest = std::min(smallest, m.margin);
  EXPECT_LT(smallest, 0.1);
  EXPECT_GE(smallest, 0.0);
  // The output's torque is the recorded command of the same model.
  EXPECT_EQ(r.tau.rows(), r.time.size());
  // Starts at rest, ends where it started.
  EXPECT_LE(r.qd.row(0).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_LE((r.q.row(r.q.rows() - 1) - r.q.row(0)).cwiseAbs().maxCoeff(), 1e-12);
  // Better than the random start by both measures.
  EXPECT_EQ(r.base.rank, 6);  // the planar two-link arm
  EXPECT_GT(r.designed.log_det, r.initial.log_det + 1);
  EXPECT_LT(r.designed.condition, r.initial.condition);
  std::printf("excitation design: cond F %.4g -> %.4g, log det F %.4g -> %.4g, %d iterations, %.3f s, worst "
              "torque ratio %.4f\n",
              r.initial.condition, r.designed.condition, r.initial.log_det, r.designed.log_det, r.iterations,
              r.seconds, worst_tau);
}

TEST(ExcitationDesign, PredictedStandardErrorsAreTheSpreadOfNoisyFits) {
  const Model<double> model = excitation_arm();
  ExcitationDesignOptions o = excitation_small_options();
  o.max_iterations = 20;
  o.joint_terms = {ExcitationJointTerm::kDamping, ExcitationJointTerm::kFriction, ExcitationJointTerm::kTorqueOffset};
  const ExcitationDesignResult r = design_excitation(model, o);
  EXPECT_EQ(r.base.rank, 12);  // 6 of the links, 3 per joint
  // Recordings: the model's command plus N(0, σ_j²), fitted by least
  // squares on the regressor's β columns (weights 1/(gear σ)², as the
  // inverse-dynamics fit's residuals gear·u − τ(β)). The terms without β
  // (rotors, armature, passive) are the model's own: subtracted exactly.
  const int p = r.base.rank, nv = 2, N = static_cast<int>(r.time.size());
  Data<double> data(model);
  Eigen::MatrixXd Y, A(N * nv, p);
  Eigen::VectorXd known(N * nv), gear(nv), sigma = o.noise;
  for (int j = 0; j < nv; ++j) gear[j] = model.joints[static_cast<size_t>(j)].dynamics.gear_ratio;
  const Eigen::VectorXd beta = r.base_values;
  for (int k = 0; k < N; ++k) {
    excitation_regressor(model, data, o.joint_terms, Eigen::VectorXd(r.q.row(k).transpose()),
                         Eigen::VectorXd(r.qd.row(k).transpose()), Eigen::VectorXd(r.qdd.row(k).transpose()), Y);
    for (int c = 0; c < p; ++c) A.block(k * nv, c, nv, 1) = Y.col(r.columns[static_cast<size_t>(c)]);
    // gear·u − Y₁β: what the β-free terms contribute (base parameters reproduce Yπ exactly).
    for (int j = 0; j < nv; ++j) known[k * nv + j] = gear[j] * r.tau(k, j) - A.row(k * nv + j).dot(beta);
  }
  Eigen::VectorXd w(N * nv);
  for (int k = 0; k < N; ++k)
    for (int j = 0; j < nv; ++j) w[k * nv + j] = 1 / (gear[j] * sigma[j]);
  const Eigen::MatrixXd Aw = w.asDiagonal() * A;
  std::mt19937 rng(2024);
  std::normal_distribution<double> n;
  const int seeds = 80;
  Eigen::MatrixXd estimates(seeds, p);
  for (int s = 0; s < seeds; ++s) {
    Eigen::VectorXd y(N * nv);
    for (int k = 0; k < N; ++k)
      for (int j = 0; j < nv; ++j) y[k * nv + j] = gear[j] * (r.tau(k, j) + sigma[j] * n(rng)) - known[k * nv + j];
    estimates.row(s) = Aw.colPivHouseholderQr().solve(Eigen::VectorXd(w.asDiagonal() * y)).transpose();
  }
  for (int c = 0; c < p; ++c) {
    const Eigen::VectorXd e = estimates.col(c);
    const double mean = e.mean();
    const double spread = std::sqrt((e.array() - mean).square().sum() / (seeds - 1));
    // The sample standard deviation of 80 draws is within ±25 % of σ with
    // probability 0.998 (χ² with 79 degrees of freedom: ±3.1 of its standard deviations).
    EXPECT_NEAR(spread / r.designed.std_errors[c], 1.0, 0.25) << r.parameter_names[static_cast<size_t>(c)];
    EXPECT_NEAR(mean, beta[c], 4 * r.designed.std_errors[c] / std::sqrt(double(seeds)));
  }
}

}  // namespace
}  // namespace excitation_design_test
}  // namespace neuralsim
