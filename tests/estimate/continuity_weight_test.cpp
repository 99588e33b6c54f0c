// Multiple shooting's continuity residuals (issue #41): the gaps the
// problem reports are the state mismatch a simulation of a segment leaves
// at the next segment's start, and on short segments of noisy q-only data
// the default (weights in the data's units and a penalty schedule) joins
// the segments and recovers the damping that made the data.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "neuralsim/estimate/estimation_problem.hpp"
#include "support/fit_support.hpp"

namespace neuralsim {
namespace {

// q with Gaussian noise σ and q̇ its central difference (a video tracker's
// recording: no velocity sensor).
Trajectory continuity_tracked(const Trajectory& truth, double sigma, unsigned seed) {
  Trajectory tr = truth;
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0.0, sigma);
  for (Eigen::Index k = 0; k < tr.q.rows(); ++k)
    for (Eigen::Index i = 0; i < tr.q.cols(); ++i) tr.q(k, i) += noise(rng);
  const Eigen::Index n = tr.q.rows();
  for (Eigen::Index k = 0; k < n; ++k) {
    const Eigen::Index a = std::max<Eigen::Index>(k - 1, 0), b = std::min<Eigen::Index>(k + 1, n - 1);
    tr.qd.row(k) = (tr.q.row(b) - tr.q.row(a)) / (tr.time[b] - tr.time[a]);
  }
  return tr;
}

// The damped double pendulum (joint 1 at 0.3, lengths 3 and 4) swinging
// freely from (2, −1) rad at rest, RK4 at 10 ms: a chaotic motion, and
// exactly the simulation a segment replays (no controls to hold).
struct ContinuitySwing : testing::DampedPendulumFit {
  explicit ContinuitySwing(int steps) : DampedPendulumFit(1, 2, 1) {
    testing::SinusoidRun run{Eigen::Vector2d(2.0, -1.0), Eigen::Vector2d::Zero(), Eigen::Vector2d(0.5, 1.1)};
    data = testing::record_sinusoids(truth, testing::rk4_step(0.01), {run}, steps);
    train = {&data[0]};
  }
  std::vector<double> truth_variables() const {
    return {params.variable(0, 3.0), params.variable(1, 4.0), params.variable(2, 0.3)};
  }
};

ProblemOptions continuity_segments(int window) {
  ProblemOptions po;
  po.formulation = Formulation::kMultipleShooting;
  po.window = window;
  return po;
}

// The reported gap at the first joint is |q_sim(end of segment 0) − q(start
// of segment 1)|, the segment simulated here from the recorded state with
// the recorded controls; the noise-free recording at the true values joins
// exactly (it is the same simulation).
TEST(ContinuityWeight, GapIsTheSimulatedMismatchAtTheJoint) {
  ContinuitySwing setup(20);
  const Trajectory& tr = setup.data[0];
  EstimationProblem problem(setup.ctx(), setup.train, continuity_segments(10));
  const std::vector<double> truth = setup.truth_variables();
  const ContinuityReport exact = problem.continuity(truth);
  ASSERT_EQ(exact.joins, 1);
  EXPECT_LT(exact.gap_q_max, 1e-12);
  EXPECT_LT(exact.gap_qd_max, 1e-12);

  Model<double> longer = setup.truth;
  set_parameter(longer, resolve_parameter(longer, "link.link1.length"), 3.3);
  std::vector<double> x = truth;
  x[0] = setup.params.variable(0, 3.3);
  Stepper<double> stepper(longer, testing::rk4_step(0.01));
  Eigen::VectorXd q = tr.q.row(0).transpose(), qd = tr.qd.row(0).transpose();
  const Eigen::VectorXd u = Eigen::VectorXd::Zero(2);
  for (int k = 0; k < 10; ++k) stepper.step(q, qd, u, tr.time[k], tr.time[k + 1] - tr.time[k]);
  const Eigen::VectorXd dq = q - tr.q.row(10).transpose();
  const Eigen::VectorXd dqd = qd - tr.qd.row(10).transpose();
  const ContinuityReport moved = problem.continuity(x);
  EXPECT_NEAR(moved.gap_q_max, dq.cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_NEAR(moved.gap_qd_max, dqd.cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_GT(moved.gap_q_max, 1e-4);  // the perturbation is seen at all
  // Auto weights (w0 = 1): how firmly the segment's N = 10 samples over
  // T = 0.1 s hold its start, √N on q and T·√(N/3) on q̇.
  EXPECT_NEAR(moved.weight_q, std::sqrt(10.0), 1e-12);
  EXPECT_NEAR(moved.weight_qd, 0.1 * std::sqrt(10.0 / 3.0), 1e-12);
}

// 0.1 s segments (10 samples) over 3 s of the swinging pendulum, q
// observed with noise σ = 1 mrad, q̇ only as the central difference of q
// (the segments' velocities start 0.14 rad/s off): the default converges,
// joins the segments to a tenth of the misfit, whose RMS is then the noise's,
// and recovers the damping of 0.3 and both lengths.
TEST(ContinuityWeight, AutoWeightJoinsShortSegmentsAndRecoversTheDamping) {
  ContinuitySwing setup(300);
  const double sigma = 1e-3;
  const Trajectory tracked = continuity_tracked(setup.data[0], sigma, 3);
  EstimationProblem problem(setup.ctx(), {&tracked}, continuity_segments(10));
  SolverOptions so;
  so.max_iterations = 30;
  const LocalResult r = problem.solve(setup.params.initial_variables(), so);
  ASSERT_TRUE(r.usable) << r.report;
  EXPECT_NE(r.report.find("Termination: CONVERGENCE"), std::string::npos) << r.report;
  EXPECT_LT(r.iterations, 30) << r.report;
  const ContinuityReport& c = r.continuity;
  EXPECT_EQ(c.joins, 29);
  EXPECT_TRUE(c.joined()) << c.gap_rms << " vs " << c.misfit_rms;
  EXPECT_LE(c.gap_rms, 0.1 * c.misfit_rms);
  // The misfit of a fit that recovers the truth is the noise (29·4 + 3 of
  // 600 degrees of freedom taken by the states and parameters).
  EXPECT_NEAR(c.misfit_rms, sigma, 0.15 * sigma);
  EXPECT_NEAR(setup.params.physical<double>(0, r.x[0]), 3.0, 3e-3);
  EXPECT_NEAR(setup.params.physical<double>(1, r.x[1]), 4.0, 3e-3);
  EXPECT_NEAR(setup.params.physical<double>(2, r.x[2]), 0.3, 0.03);
}

// The fixed weight is in rad and rad/s whatever the data's weight: with q
// weighted 0.001 (the same fit as q weighted 1 and w = 10⁴: the cost only
// scales), w = 10 holds the 0.1 s segments' velocities ρ = 10 / (0.001 ·
// 0.1 s · √(10/3)) ≈ 55 000 times stiffer than their data do, and LM does
// not converge in 30 iterations; the default's weights scale with the q
// weight, and it converges to the lengths that made the data.
TEST(ContinuityWeight, FixedWeightStiffAgainstTheDataDoesNotConvergeWhereAutoDoes) {
  ContinuitySwing setup(250);
  const Trajectory tracked = continuity_tracked(setup.data[0], 1e-3, 3);
  ResidualContext ctx = setup.ctx();
  ctx.observe.q_weight = 0.001;
  SolverOptions so;
  so.max_iterations = 30;
  ProblemOptions fixed = continuity_segments(10);
  fixed.continuity_weight = 10;
  EstimationProblem stiff(ctx, {&tracked}, fixed);
  const LocalResult old = stiff.solve(setup.params.initial_variables(), so);
  EXPECT_EQ(old.report.find("Termination: CONVERGENCE"), std::string::npos) << old.report;
  EXPECT_GE(old.iterations, 30);

  EstimationProblem scaled(ctx, {&tracked}, continuity_segments(10));
  const LocalResult r = scaled.solve(setup.params.initial_variables(), so);
  EXPECT_NE(r.report.find("Termination: CONVERGENCE"), std::string::npos) << r.report;
  EXPECT_TRUE(r.continuity.joined());
  EXPECT_NEAR(setup.params.physical<double>(0, r.x[0]), 3.0, 3e-3);
  EXPECT_NEAR(setup.params.physical<double>(1, r.x[1]), 4.0, 3e-3);
}

// The misfit the schedule compares the gaps with is the q rows' alone:
// observing q̇ too (a tracker's noisy differences) leaves it unchanged. A
// continuity weight of 0 leaves the joints' rows 0 whatever the gap: the
// gaps are not measured (NaN), and the segments do not count as joined.
TEST(ContinuityWeight, MisfitIsTheQRowsAndAZeroWeightLeavesTheGapsUnmeasured) {
  ContinuitySwing setup(40);
  setup.data[0] = continuity_tracked(setup.data[0], 0.01, 5);
  const std::vector<double> truth = setup.truth_variables();
  auto report = [&](double qd_weight, double continuity) {
    ResidualContext ctx = setup.ctx();
    ctx.observe.qd_weight = qd_weight;
    ProblemOptions po = continuity_segments(10);
    po.continuity_weight = continuity;
    EstimationProblem problem(ctx, setup.train, po);
    return problem.continuity(truth);
  };
  const ContinuityReport q_only = report(0, 10), with_qd = report(1, 10);
  EXPECT_GT(q_only.misfit_rms, 1e-3);
  EXPECT_EQ(with_qd.misfit_rms, q_only.misfit_rms);
  const ContinuityReport untied = report(0, 0);
  EXPECT_TRUE(std::isnan(untied.gap_q_max) && std::isnan(untied.gap_qd_rms) && std::isnan(untied.gap_rms));
  EXPECT_FALSE(untied.joined());
}

}  // namespace
}  // namespace neuralsim
