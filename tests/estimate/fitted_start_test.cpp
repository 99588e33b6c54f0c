// Fitted starting states (estimate.residual.fit_initial_state): recordings
// whose first sample is off (a marker tracker's first frame) are fitted with
// each window's start as a nuisance parameter block. Checked against the
// engine's own data (the true starts and parameters are known), against the
// joint problem's covariance in closed form, and against central
// differences for the tangent parametrization of quaternion joints.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/estimate/covariance.hpp"
#include "neuralsim/estimate/estimation_problem.hpp"
#include "neuralsim/estimate/identifiability.hpp"
#include "neuralsim/experiment/estimation_config.hpp"
#include "neuralsim/io/yaml_model.hpp"
#include "neuralsim/model/configuration.hpp"
#include "neuralsim/step/link_poses.hpp"
#include "neuralsim/step/simulate.hpp"
#include "support/fit_support.hpp"
#include "support/test_models.hpp"

namespace neuralsim {
namespace fitted_start_test {

using testing::rk4_step;

// A free swing from (q0, qd0), `steps` steps.
Trajectory free_swing(const Model<double>& model, const StepOptions& step, const Eigen::VectorXd& q0,
                      const Eigen::VectorXd& qd0, int steps, const std::string& name) {
  Stepper<double> stepper(model, step);
  ZeroControl<double> zero;
  Trajectory tr = simulate(stepper, q0, qd0, zero, steps, [] { return false; });
  tr.name = name;
  return tr;
}

// The recorded first sample as a tracker gives it: the true start moved by
// `dq` (tangent) and `dqd`. Every other sample is exact.
void perturb_first_sample(const Model<double>& model, Trajectory& tr, const Eigen::VectorXd& dq,
                          const Eigen::VectorXd& dqd) {
  Eigen::VectorXd q = tr.q.row(0).transpose(), moved(model.nq);
  integrate_configuration(model, q, dq, moved);
  normalize_configuration(model, moved);
  tr.q.row(0) = moved.transpose();
  tr.qd.row(0) += dqd.transpose();
}

struct StartFit {
  LocalResult result;
  std::vector<StartStates> starts;
  std::vector<double> physical;
};

StartFit fit_with_starts(const Model<double>& model, const ParameterSet& params, const StepOptions& step,
                         const std::vector<Trajectory>& data, int window, StartStateFit fit,
                         const ObservationSpec& observe = ObservationSpec{}) {
  std::vector<const Trajectory*> train;
  for (const Trajectory& t : data) train.push_back(&t);
  const ResidualContext ctx{&model, &params, step, observe};
  ProblemOptions po;
  po.window = window;
  po.fit_initial_state = fit;
  EstimationProblem problem(ctx, train, po);
  SolverOptions so;
  so.max_iterations = 60;
  StartFit f;
  f.result = problem.solve(params.initial_variables(), so);
  f.starts = problem.start_states();
  for (int i = 0; i < params.size(); ++i) f.physical.push_back(params.physical<double>(i, f.result.x[i]));
  return f;
}

ParameterSet pendulum_lengths(const Model<double>& model) {
  return read_parameter_set(Config::parse("p: [{name: link.link1.length, initial: 2.8, bounds: [0.1, 10]},"
                                          " {name: link.link2.length, initial: 4.3, bounds: [0.1, 10]}]",
                                          "test.yaml"),
                            "p", model);
}

// Three free swings of the double pendulum (l = 3, 4) whose recorded first
// samples are 0.05 rad and 0.05 rad/s off. With each window's start fitted,
// the lengths and every true start come back to solver precision; with the
// recorded starts, the lengths are biased.
TEST(FittedStartStates, RecoverEachStartAndTheLengthsThatNoisyStartsBias) {
  const Model<double> truth = load_yaml_model(testing::source_path("configs/models/double_pendulum.yaml"));
  const StepOptions step = rk4_step(0.01);
  std::mt19937 rng(41);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<Trajectory> exact, data;
  for (int k = 0; k < 3; ++k) {
    const Eigen::Vector2d q0(u(rng), u(rng)), qd0(u(rng), u(rng));
    exact.push_back(free_swing(truth, step, q0, qd0, 80, "swing" + std::to_string(k)));
    data.push_back(exact.back());
    const Eigen::Vector2d noise_q(0.05 * (k % 2 ? 1 : -1), 0.05), noise_qd(-0.05, 0.05 * (k % 2 ? -1 : 1));
    perturb_first_sample(truth, data.back(), noise_q, noise_qd);
  }
  const ParameterSet params = pendulum_lengths(truth);
  // Windows of 40 samples: two starts per trajectory, at samples 0 and 40
  // (the second one's recording is exact).
  const StartFit fitted = fit_with_starts(truth, params, step, data, 40, {true, true});
  ASSERT_TRUE(fitted.result.usable) << fitted.result.report;
  EXPECT_NEAR(fitted.physical[0], 3.0, 1e-6);
  EXPECT_NEAR(fitted.physical[1], 4.0, 1e-6);
  ASSERT_EQ(fitted.starts.size(), data.size());
  EXPECT_EQ(fitted.result.states.size(), 3u * 2u * 4u);
  for (size_t t = 0; t < data.size(); ++t) {
    const StartStates& s = fitted.starts[t];
    ASSERT_EQ(s.samples, (std::vector<int>{0, 40}));
    for (int w = 0; w < 2; ++w) {
      const int k = s.samples[static_cast<size_t>(w)];
      EXPECT_LT((s.q.row(w) - exact[t].q.row(k)).cwiseAbs().maxCoeff(), 1e-6) << t << " " << w;
      EXPECT_LT((s.qd.row(w) - exact[t].qd.row(k)).cwiseAbs().maxCoeff(), 1e-5) << t << " " << w;
    }
  }
  // The recorded starts: the fit absorbs the starts' error into the lengths.
  const StartFit recorded = fit_with_starts(truth, params, step, data, 40, {});
  ASSERT_TRUE(recorded.result.usable) << recorded.result.report;
  EXPECT_TRUE(recorded.starts.empty());
  EXPECT_GT(std::max(std::abs(recorded.physical[0] - 3.0), std::abs(recorded.physical[1] - 4.0)), 0.05);
}

// Issue #41's video-tracked pendulum, on data from our own engine: three
// free swings of 1 s at 100 Hz from seeded random states, seen through
// `markers` with `sigma` of noise per axis (positions only: the quaternion
// columns NaN); the recorded q and q̇ are a tracker's guesses (every sample
// 0.05 rad and 0.2 rad/s off).
struct MarkedSwings {
  std::vector<Trajectory> exact, data;
};
MarkedSwings marked_swings(const Model<double>& truth, const StepOptions& step, const std::vector<LinkRef>& markers,
                           double sigma) {
  std::mt19937 rng(29);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::normal_distribution<double> unit;
  MarkedSwings s;
  for (int k = 0; k < 3; ++k) {
    s.exact.push_back(free_swing(truth, step, Eigen::Vector2d(u(rng), u(rng)), Eigen::Vector2d(u(rng), u(rng)), 100,
                                 "swing" + std::to_string(k)));
    record_link_poses(truth, markers, s.exact.back());
    Trajectory d = s.exact.back();
    for (auto& [name, pose] : d.link_poses) {
      pose.leftCols<3>() += sigma * RowMatrixXd::NullaryExpr(pose.rows(), 3, [&] { return unit(rng); });
      pose.rightCols<4>().setConstant(std::nan(""));  // positions only
    }
    d.q += 0.05 * RowMatrixXd::NullaryExpr(d.q.rows(), d.q.cols(), [&] { return unit(rng) > 0 ? 1.0 : -1.0; });
    d.qd += 0.2 * RowMatrixXd::NullaryExpr(d.qd.rows(), d.qd.cols(), [&] { return unit(rng) > 0 ? 1.0 : -1.0; });
    s.data.push_back(std::move(d));
  }
  return s;
}

// Issue #41's video-tracked pendulum, on data from our own engine: the
// double pendulum (l = 3, 4, point masses) seen only through two markers, at
// the elbow and at the tip (a massless frame at the end of link 2), with
// 5 mm of noise; q and q̇ in the file are a tracker's guesses (every sample
// 0.05 rad and 0.2 rad/s off) and only seed the fitted starts. With each
// swing's starting state fitted, the lengths and the true starts come back
// and the free prediction from the fitted start stays at the markers' noise
// over the whole second; from the recorded start it does not.
TEST(FittedStartStates, MarkersAloneRecoverEachStartAndPredictAtEveryHorizon) {
  const std::string yaml =
      "model:\n  name: marked_double_pendulum\n  bodies:\n"
      "    - {name: link1, joint: {name: joint1, axis: [0, 1, 0]}, mass: 1, length: {value: 3, com_fraction: 1}}\n"
      "    - {name: link2, parent: link1, joint: {name: joint2, axis: [0, 1, 0], origin: parent_length}, mass: 1,"
      " length: {value: 4, com_fraction: 1}}\n"
      "    - {name: tip, parent: link2, joint: {name: marker, type: fixed, origin: parent_length}, mass: 0}\n";
  const Model<double> truth = parse_yaml_model(yaml, "marked.yaml");
  const StepOptions step = rk4_step(0.01);
  std::vector<LinkRef> markers;
  for (const char* name : {"link2", "tip"}) markers.push_back(*find_link(truth, name));
  const double sigma = 0.005;  // m
  const MarkedSwings swings = marked_swings(truth, step, markers, sigma);
  const std::vector<Trajectory>& exact = swings.exact;
  const std::vector<Trajectory>& data = swings.data;
  const ParameterSet params = pendulum_lengths(truth);
  ObservationSpec observe;
  observe.q_weight = 0;
  for (const char* name : {"link2", "tip"}) {
    LinkPositionChannel marker;
    marker.link = name;
    marker.body = truth.body_index(name);
    observe.link_positions.push_back(marker);
  }
  const StartFit fitted = fit_with_starts(truth, params, step, data, 100, {true, true}, observe);
  ASSERT_TRUE(fitted.result.usable) << fitted.result.report;
  EXPECT_NEAR(fitted.physical[0], 3.0, 0.01);
  EXPECT_NEAR(fitted.physical[1], 4.0, 0.01);
  const StartFit recorded = fit_with_starts(truth, params, step, data, 100, {}, observe);
  ASSERT_TRUE(recorded.result.usable) << recorded.result.report;
  // The marker error of a free prediction from each start, at horizons of
  // 10, 50 and 100 steps (pooled over the swings: RMS over markers, axes and
  // swings at that sample).
  auto marker_error = [&](const StartFit& f, bool fitted_start, int horizon) {
    Model<double> model = truth;
    params.apply(f.result.x.data(), model);
    double sum = 0;
    int n = 0;
    for (size_t t = 0; t < data.size(); ++t) {
      const Eigen::VectorXd q0 = fitted_start ? Eigen::VectorXd(f.starts[t].q.row(0).transpose())
                                              : Eigen::VectorXd(data[t].q.row(0).transpose());
      const Eigen::VectorXd qd0 = fitted_start ? Eigen::VectorXd(f.starts[t].qd.row(0).transpose())
                                               : Eigen::VectorXd(data[t].qd.row(0).transpose());
      Trajectory p = free_swing(model, step, q0, qd0, horizon, "prediction");
      record_link_poses(model, markers, p);
      for (const auto& [name, pose] : p.link_poses) {
        sum += (pose.row(horizon).head<3>() - exact[t].link_poses.at(name).row(horizon).head<3>()).squaredNorm();
        n += 3;
      }
    }
    return std::sqrt(sum / n);
  };
  std::printf("[ measured ] markers alone: lengths %.5f %.5f (truth 3, 4); recorded %.5f %.5f\n", fitted.physical[0],
              fitted.physical[1], recorded.physical[0], recorded.physical[1]);
  for (size_t t = 0; t < data.size(); ++t) {
    std::printf("[ measured ] swing %zu: fitted start off by %.2g rad, %.2g rad/s\n", t,
                (fitted.starts[t].q.row(0) - exact[t].q.row(0)).cwiseAbs().maxCoeff(),
                (fitted.starts[t].qd.row(0) - exact[t].qd.row(0)).cwiseAbs().maxCoeff());
    EXPECT_LT((fitted.starts[t].q.row(0) - exact[t].q.row(0)).cwiseAbs().maxCoeff(), 0.005) << t;
    EXPECT_LT((fitted.starts[t].qd.row(0) - exact[t].qd.row(0)).cwiseAbs().maxCoeff(), 0.02) << t;
  }
  for (int horizon : {10, 50, 100}) {
    const double with = marker_error(fitted, true, horizon), without = marker_error(recorded, false, horizon);
    std::printf("[ measured ] markers alone: error at %d steps %.4g m from the fitted starts, %.4g m from the "
                "recorded ones (noise %.3g m)\n", horizon, with, without, sigma);
    EXPECT_LT(with, sigma) << horizon;
    EXPECT_GT(without, 5 * with) << horizon;
  }
}

// The same markers without a frame in the model (issue #41: a marker is a
// point fixed on its link, `{link: link2, point: [0, 0, -4], data: tip}`)
// against a massless `tip` frame fixed 4 m down link 2: the same data, the
// same fit, to rounding. The frame's model has one more body, massless,
// which changes no dynamics; only the marker's world position is computed
// differently (the frame's composed transform against r + R·point).
TEST(FittedStartStates, AMarkerPointFitsAsAMarkerFrame) {
  const std::string links =
      "model:\n  name: marked_double_pendulum\n  bodies:\n"
      "    - {name: link1, joint: {name: joint1, axis: [0, 1, 0]}, mass: 1, length: {value: 3, com_fraction: 1}}\n"
      "    - {name: link2, parent: link1, joint: {name: joint2, axis: [0, 1, 0], origin: parent_length}, mass: 1,"
      " length: {value: 4, com_fraction: 1}}\n";
  const Model<double> framed = parse_yaml_model(
      links +
          "    - {name: tip, parent: link2, joint: {name: marker, type: fixed, origin: {xyz: [0, 0, -4]}}, mass: 0}\n",
      "framed.yaml");
  const Model<double> bare = parse_yaml_model(links, "bare.yaml");
  const StepOptions step = rk4_step(0.01);
  const MarkedSwings swings =
      marked_swings(framed, step, {*find_link(framed, "link2"), *find_link(framed, "tip")}, 0.005);
  const char* channels[] = {"{q: 0, link_positions: [{link: link2}, {link: tip}]}",
                            "{q: 0, link_positions: [{link: link2}, {link: link2, point: [0, 0, -4], data: tip}]}"};
  const StartFit frame = fit_with_starts(framed, pendulum_lengths(framed), step, swings.data, 100, {true, true},
                                         read_observation(Config::parse(channels[0], "c.yaml"), framed));
  const StartFit point = fit_with_starts(bare, pendulum_lengths(bare), step, swings.data, 100, {true, true},
                                         read_observation(Config::parse(channels[1], "c.yaml"), bare));
  ASSERT_TRUE(frame.result.usable) << frame.result.report;
  ASSERT_TRUE(point.result.usable) << point.result.report;
  std::printf(
      "[ measured ] marker point vs frame: lengths %.12f %.12f vs %.12f %.12f (differences %.2g, %.2g), "
      "cost %.12g vs %.12g\n",
      point.physical[0], point.physical[1], frame.physical[0], frame.physical[1], point.physical[0] - frame.physical[0],
      point.physical[1] - frame.physical[1], point.result.cost, frame.result.cost);
  EXPECT_NEAR(frame.physical[0], 3.0, 0.01);
  EXPECT_NEAR(frame.physical[1], 4.0, 0.01);
  for (int i = 0; i < 2; ++i) EXPECT_NEAR(point.physical[i], frame.physical[i], 1e-9) << i;
  EXPECT_NEAR(point.result.cost, frame.result.cost, 1e-9 * frame.result.cost);
  for (size_t t = 0; t < swings.data.size(); ++t) {
    EXPECT_LT((point.starts[t].q - frame.starts[t].q).cwiseAbs().maxCoeff(), 1e-9) << t;
    EXPECT_LT((point.starts[t].qd - frame.starts[t].qd).cwiseAbs().maxCoeff(), 1e-8) << t;
  }
}

// A spherical pendulum (a ball joint: q is a quaternion) released with a
// spin: the start is fitted as a rotation vector about the recorded
// orientation, and the true orientation, angular velocity and the centre of
// mass's distance come back.
TEST(FittedStartStates, TangentStartOfABallJointIsRecovered) {
  Model<double> truth;
  truth.name = "spherical_pendulum";
  Joint<double> ball;
  ball.type = JointType::kSpherical;
  truth.add_body("bob", -1, ball,
                 Inertia<double>::from_com(1.0, Eigen::Vector3d(0, 0, -0.5),
                                           Eigen::Vector3d(0.02, 0.03, 0.01).asDiagonal().toDenseMatrix()));
  truth.gravity = Eigen::Vector3d(0, 0, -9.81);
  const StepOptions step = rk4_step(0.01);
  Eigen::VectorXd q0(4), qd0(3);
  q0 << std::sin(0.3) * Eigen::Vector3d(1, 0.5, 0).normalized(), std::cos(0.3);
  qd0 << 0.5, -1.0, 2.0;
  const Trajectory exact = free_swing(truth, step, q0, qd0, 60, "spin");
  Trajectory data = exact;
  perturb_first_sample(truth, data, Eigen::Vector3d(0.05, -0.04, 0.03), Eigen::Vector3d(0.05, 0.05, -0.05));
  const ParameterSet params = read_parameter_set(
      Config::parse("p: [{name: link.bob.com.z, initial: -0.45, bounds: [-2, -0.1]}]", "test.yaml"), "p", truth);
  const StartFit f = fit_with_starts(truth, params, step, {data}, 60, {true, true});
  ASSERT_TRUE(f.result.usable) << f.result.report;
  EXPECT_NEAR(f.physical[0], -0.5, 1e-6);
  ASSERT_EQ(f.starts.size(), 1u);
  Eigen::VectorXd q_fit = f.starts[0].q.row(0).transpose(), dq(3);
  difference_configuration(truth, q0, q_fit, dq);
  EXPECT_LT(dq.norm(), 1e-6);
  EXPECT_NEAR(q_fit.norm(), 1.0, 1e-12);
  EXPECT_LT((f.starts[0].qd.row(0).transpose() - qd0).norm(), 1e-5);
}

// The Jacobian of a window's residuals with respect to its start block
// (Ceres' Jets through q = q_rec ⊕ δ) against central differences, at
// δ = 0 and away from it, on a tree with free, spherical, revolute and
// prismatic joints.
TEST(FittedStartStates, StartJacobianMatchesCentralDifferencesOnEveryJointType) {
  const Model<double> model = testing::mixed_joint_model();
  const StepOptions step = rk4_step(0.005);
  std::mt19937 rng(3);
  Eigen::VectorXd q0, qd0;
  testing::random_state(model, rng, q0, qd0);
  const Trajectory tr = free_swing(model, step, q0, qd0, 6, "mixed");
  const ParameterSet params = read_parameter_set(
      Config::parse("p: [{name: gravity.z, initial: -9.81}]", "test.yaml"), "p", model);
  const ResidualContext ctx{&model, &params, step, ObservationSpec{}};
  const StartStateFit fit{true, true};
  std::unique_ptr<ceres::CostFunction> cost(make_single_shooting_cost(ctx, Window{&tr, 0, 6}, fit));
  const int n = fit.size(model.nv), m = cost->num_residuals();
  ASSERT_EQ(cost->parameter_block_sizes(), (std::vector<int32_t>{1, n}));
  std::vector<double> theta = params.initial_variables();
  for (const double scale : {0.0, 0.1}) {
    std::vector<double> start(static_cast<size_t>(n));
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (int i = 0; i < model.nv; ++i) start[static_cast<size_t>(i)] = scale * u(rng);
    for (int i = 0; i < model.nv; ++i) start[static_cast<size_t>(model.nv + i)] = qd0[i] + scale * u(rng);
    std::vector<double> r(static_cast<size_t>(m)), j_theta(static_cast<size_t>(m)),
        j_start(static_cast<size_t>(m * n));
    const double* blocks[] = {theta.data(), start.data()};
    double* jacobians[] = {j_theta.data(), j_start.data()};
    ASSERT_TRUE(cost->Evaluate(blocks, r.data(), jacobians));
    const double h = 1e-6;
    double worst = 0, largest = 0;
    for (int c = 0; c < n; ++c) {
      std::vector<double> plus = start, minus = start, rp(r.size()), rm(r.size());
      plus[static_cast<size_t>(c)] += h;
      minus[static_cast<size_t>(c)] -= h;
      const double* bp[] = {theta.data(), plus.data()};
      const double* bm[] = {theta.data(), minus.data()};
      ASSERT_TRUE(cost->Evaluate(bp, rp.data(), nullptr));
      ASSERT_TRUE(cost->Evaluate(bm, rm.data(), nullptr));
      for (int row = 0; row < m; ++row) {
        const double fd = (rp[static_cast<size_t>(row)] - rm[static_cast<size_t>(row)]) / (2 * h);
        const double ad = j_start[static_cast<size_t>(row * n + c)];
        worst = std::max(worst, std::abs(fd - ad));
        largest = std::max(largest, std::abs(ad));
      }
    }
    EXPECT_GT(largest, 0.1) << "scale " << scale;
    EXPECT_LT(worst, 1e-6 * std::max(1.0, largest)) << "scale " << scale;
  }
}

// Profiling nuisance columns out of J (Frisch–Waugh–Lovell) gives θ's block
// of the joint problem's (JᵀJ)⁻¹ and of its cluster sandwich, computed here
// densely from the full Jacobian.
TEST(FittedStartStates, ProfiledJacobianGivesTheJointCovarianceBlock) {
  std::mt19937 rng(5);
  std::normal_distribution<double> g(0.0, 1.0);
  const int m = 60, P = 3, blocks = 4, per = 3;  // 4 nuisance blocks of 3, each on its own 15 rows
  Eigen::MatrixXd Jt(m, P), J(m, P + blocks * per);
  Eigen::VectorXd r(m);
  for (int i = 0; i < m; ++i) {
    r[i] = g(rng);
    for (int c = 0; c < P; ++c) Jt(i, c) = g(rng);
  }
  J.setZero();
  J.leftCols(P) = Jt;
  std::vector<Eigen::Triplet<double>> entries;
  std::vector<int> cluster(static_cast<size_t>(m));
  for (int i = 0; i < m; ++i) {
    const int b = i / (m / blocks);
    cluster[static_cast<size_t>(i)] = b;
    for (int c = 0; c < per; ++c) {
      const double v = g(rng);
      J(i, P + b * per + c) = v;
      entries.emplace_back(i, b * per + c, v);
    }
  }
  Eigen::SparseMatrix<double> Js(m, blocks * per);
  Js.setFromTriplets(entries.begin(), entries.end());
  const Eigen::MatrixXd profiled = profile_nuisance(Jt, Js);

  const Eigen::MatrixXd Ainv = (J.transpose() * J).inverse();
  const Eigen::MatrixXd joint_gn = Ainv.topLeftCorner(P, P);
  const Eigen::MatrixXd profiled_gn = (profiled.transpose() * profiled).inverse();
  EXPECT_LT((profiled_gn - joint_gn).cwiseAbs().maxCoeff(), 1e-10 * joint_gn.cwiseAbs().maxCoeff());

  // The joint sandwich A⁻¹ (Σ_g J_gᵀ r_g r_gᵀ J_g) A⁻¹ · G/(G − 1), θ's block.
  Eigen::MatrixXd scores = Eigen::MatrixXd::Zero(J.cols(), blocks);
  for (int i = 0; i < m; ++i) scores.col(cluster[static_cast<size_t>(i)]) += J.row(i).transpose() * r[i];
  const Eigen::MatrixXd joint_sandwich =
      (Ainv * scores * scores.transpose() * Ainv).topLeftCorner(P, P) * (blocks / (blocks - 1.0));
  CovarianceOptions o;
  o.method = UncertaintyMethod::kSandwich;
  const CovarianceEstimate e = estimate_covariance(profiled, r, cluster, o);
  EXPECT_LT((e.covariance - joint_sandwich).cwiseAbs().maxCoeff(), 1e-10 * joint_sandwich.cwiseAbs().maxCoeff());

  // Gauss–Newton's s² counts the nuisance parameters.
  o.method = UncertaintyMethod::kGaussNewton;
  o.nuisance = blocks * per;
  const CovarianceEstimate gn = estimate_covariance(profiled, r, cluster, o);
  EXPECT_NEAR(gn.covariance(0, 0), r.squaredNorm() / (m - P - blocks * per) * joint_gn(0, 0), 1e-12);
  EXPECT_THROW(profile_nuisance(Jt, Eigen::SparseMatrix<double>(m + 1, 2)), InvalidArgument);

  // A θ column the nuisance columns reproduce is profiled to exactly zero.
  Eigen::MatrixXd mimicked = Jt;
  mimicked.col(1) = Js * Eigen::VectorXd::LinSpaced(blocks * per, -1.0, 2.0);
  const Eigen::MatrixXd p = profile_nuisance(mimicked, Js);
  EXPECT_TRUE(p.col(1).isZero(0.0));
  EXPECT_GT(p.col(0).norm(), 0.5 * Jt.col(0).norm());
}

// The reported standard error of a length fitted beside free starts is
// calibrated: over noisy replicates of the same swings (every sample, the
// first included, with N(0, 0.01²) noise on q), the spread of the estimates
// matches the mean reported Gauss–Newton error of the joint problem, with
// the starts profiled out and their degrees of freedom discounted.
TEST(FittedStartStates, StandardErrorBesideFreeStartsMatchesTheSpreadOverReplicates) {
  const Model<double> truth = load_yaml_model(testing::source_path("configs/models/double_pendulum.yaml"));
  const StepOptions step = rk4_step(0.02);
  std::mt19937 rng(17);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<Trajectory> exact;
  for (int k = 0; k < 3; ++k)
    exact.push_back(free_swing(truth, step, Eigen::Vector2d(u(rng), u(rng)), Eigen::Vector2d(u(rng), u(rng)), 30,
                               "swing" + std::to_string(k)));
  const ParameterSet params = read_parameter_set(
      Config::parse("p: [{name: link.link2.length, initial: 4.0, bounds: [0.1, 10]}]", "test.yaml"), "p", truth);
  ProblemOptions po;
  po.window = 30;
  po.fit_initial_state = {true, true};
  SolverOptions so;
  so.max_iterations = 30;
  std::normal_distribution<double> noise(0.0, 0.01);
  const int replicates = 24;
  std::vector<double> estimate, reported;
  for (int rep = 0; rep < replicates; ++rep) {
    std::vector<Trajectory> data = exact;
    for (Trajectory& t : data) t.q += RowMatrixXd::NullaryExpr(t.q.rows(), t.q.cols(), [&] { return noise(rng); });
    std::vector<const Trajectory*> train;
    for (const Trajectory& t : data) train.push_back(&t);
    const ResidualContext ctx{&truth, &params, step, ObservationSpec{}};
    EstimationProblem problem(ctx, train, po);
    const LocalResult r = problem.solve(params.initial_variables(), so);
    ASSERT_TRUE(r.usable) << r.report;
    Eigen::VectorXd residuals;
    const Eigen::MatrixXd J = problem.parameter_jacobian(r.x, &residuals);
    ASSERT_EQ(J.cols(), 1);
    const Identifiability id = analyze_identifiability(params, r.x, J, residuals, 1e-4, problem.num_state_variables());
    estimate.push_back(id.value[0]);
    reported.push_back(id.std_error[0]);
  }
  double mean = 0, mean_reported = 0, var = 0;
  for (int k = 0; k < replicates; ++k) mean += estimate[static_cast<size_t>(k)] / replicates;
  for (int k = 0; k < replicates; ++k) {
    var += std::pow(estimate[static_cast<size_t>(k)] - mean, 2) / (replicates - 1);
    mean_reported += reported[static_cast<size_t>(k)] / replicates;
  }
  const double spread = std::sqrt(var);
  // The sample deviation of 24 draws is within ±35% of the truth with
  // probability > 0.99.
  EXPECT_GT(spread / mean_reported, 0.65) << spread << " " << mean_reported;
  EXPECT_LT(spread / mean_reported, 1.35) << spread << " " << mean_reported;
  EXPECT_NEAR(mean, 4.0, 4 * mean_reported / std::sqrt(replicates));
}

ProblemOptions residual_options(const std::string& yaml) {
  return read_problem_options(Config::parse(yaml, "fit.yaml"));
}

TEST(FittedStartStates, ConfigReadsTheSwitchAndRefusesWhatCannotUseIt) {
  const ProblemOptions both = residual_options("{type: single_shooting, fit_initial_state: {q: true, qd: true}}");
  EXPECT_TRUE(both.fit_initial_state.q && both.fit_initial_state.qd);
  const ProblemOptions q = residual_options("{fit_initial_state: {q: true}}");
  EXPECT_TRUE(q.fit_initial_state.q);
  EXPECT_FALSE(q.fit_initial_state.qd);
  EXPECT_FALSE(residual_options("{}").fit_initial_state.any());
  const auto message = [](const std::string& yaml) {
    try {
      residual_options(yaml);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  for (const std::string type : {"inverse_dynamics", "multiple_shooting"}) {
    const std::string m = message("{type: " + type + ", fit_initial_state: {q: true}}");
    EXPECT_NE(m.find("fit.yaml"), std::string::npos) << m;
    EXPECT_NE(m.find("fit_initial_state"), std::string::npos) << m;
    EXPECT_NE(m.find(type), std::string::npos) << m;
  }
  EXPECT_NE(message("{fit_initial_state: true}").find("expected a map"), std::string::npos);
  EXPECT_NE(message("{fit_initial_state: {q: yes please}}").find("fit_initial_state.q"), std::string::npos);
  EXPECT_NE(message("{fit_initial_state: {v: true}}").find("fit_initial_state.v"), std::string::npos);
}

}  // namespace fitted_start_test
}  // namespace neuralsim
