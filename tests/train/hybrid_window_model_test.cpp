// The hybrid simulator as a WindowModel (train/hybrid_window_model.hpp),
// checked against mathematics and against the definitions of
// train/window_model.hpp computed independently here:
//  * each mode's ∂loss/∂x (physical parameters and network weights, with
//    and without controls; a double pendulum with joint networks and a
//    3-link swimmer with a drag network per link) against Richardson-
//    extrapolated central differences, relative 1e-6. For the detached mode
//    the oracle is the derivative of the loss with the predicted states held
//    fixed (what "detached" means), i.e. central differences of the one-step
//    loss of a window whose recorded states are replaced by the predictions;
//  * the loss definition (mean over K of the weighted squared error, no ½),
//    the modes and the free rollout against this file's own computations
//    (HybridRollout one-step problems with state_tracking_loss, whose ½ is
//    compensated by doubling the weights; an own double Stepper);
//  * the gradient does not pass through a detached state: ∂loss/∂(q0, q̇0)
//    is exactly 0 in the one-step and detached modes when step 0 has zero
//    error, nonzero (and equal to central differences) when unrolled;
//  * K = 1 is the same computation in every mode (bitwise);
//  * bad inputs give errors naming what is wrong;
//  * an unmodeled viscous damping is learned by a torque-residual network.
#include <gtest/gtest.h>

#include <ceres/ceres.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <thread>

#include "augment/augment_support.hpp"
#include "neuralsim/io/yaml_model.hpp"
#include "neuralsim/train/hybrid_window_model.hpp"
#include "support/allocation_counter.hpp"

namespace neuralsim::hybrid_window_model_test {

using testing::joint_site;
using testing::link_site;
using testing::make_blueprint;

constexpr TrainingMode kModes[] = {TrainingMode::kOneStep, TrainingMode::kUnrolledDetached, TrainingMode::kUnrolled};


// Named model parameters at the model's values.
ParameterSet named(const Model<double>& model, const std::vector<std::string>& names) {
  std::vector<EstimatedParameter> ps;
  for (const std::string& n : names) {
    const auto target = resolve_named_parameter(n, model, false);
    if (!target) throw InvalidArgument("test: unknown parameter " + n);
    EstimatedParameter p;
    p.target = *target;
    const Eigen::VectorXd qd0 = Eigen::VectorXd::Zero(model.nv);
    const ContactParameters<double> c;
    p.initial = named_parameter_value(*target, model, &c, &qd0);
    ps.push_back(p);
  }
  return ParameterSet(ps);
}

// Double pendulum (damped, friction, springs) with a torque-residual network
// on joint 2 reading (q, q̇, u) and a damping network on joint 1; two
// physical parameters. dt = 10 ms so that a few steps move the state.
RolloutProblem pendulum_problem() {
  const testing::Scene s = testing::pendulum_scene();
  RolloutProblem p;
  p.model = s.model;
  p.step = s.step;
  p.step.dt = 0.01;
  const Model<double>& m = s.model;
  p.augment = {make_blueprint(m, "torque2", joint_site(m, "joint2", SiteQuantity::kJointTorque), AugmentMode::kResidual,
                              {"joint.joint2.q", "joint.joint2.qd", "joint.joint2.u"}, {4}, 0.5, 1),
               make_blueprint(m, "damping1", joint_site(m, "joint1", SiteQuantity::kJointDamping),
                              AugmentMode::kResidual, {"joint.joint1.qd"}, {3}, 0.3, 2)};
  p.physical = named(m, {"joint.joint1.damping", "link.link2.mass"});
  return p;
}

Model<double> swimmer3() {
  return parse_yaml_model("model:\n  generator: swimmer\n  links: 3\n  length: 0.1\n  mass: 0.1\n  damping: 0.001\n",
                          "swimmer3.yaml");
}

// A 3-link swimmer with a residual drag network on each link (world-frame
// drag force from the link's velocity and angle of attack).
RolloutProblem swimmer_problem(const std::vector<nn::Index>& hidden, const std::vector<std::string>& physical) {
  RolloutProblem p;
  p.model = swimmer3();
  p.step.dt = 2e-3;
  const DragLaw water{0.05, 0.5, 0.2};
  for (int i = 0; i < 3; ++i) {
    const std::string link = "segment" + std::to_string(i);
    p.augment.push_back(make_blueprint(
        p.model, "drag" + std::to_string(i),
        link_site(p.model, link, SiteQuantity::kDragForce, AugmentFrame::kWorld, water), AugmentMode::kResidual,
        {"link." + link + ".linear_velocity", "link." + link + ".angle_of_attack"}, hidden, 0.01, 100 + i));
  }
  p.physical = named(p.model, physical);
  return p;
}

Eigen::VectorXd randn(int n, double sigma, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> N(0.0, sigma);
  Eigen::VectorXd v(n);
  for (int i = 0; i < n; ++i) v[i] = N(rng);
  return v;
}

// A recording: the model's rollout at x_data from (q0, q̇0) under u
// (nv × K), with noise added to every recorded state after the first, cut
// into one window (targets column k = states column k + 1).
TrainingWindow recorded_window(HybridWindowModel& m, const Eigen::VectorXd& x_data, const Eigen::VectorXd& q0,
                               const Eigen::VectorXd& qd0, const Eigen::MatrixXd& u, bool with_controls,
                               double noise, std::uint64_t seed) {
  Eigen::MatrixXd Q, QD;
  m.rollout(x_data, q0, qd0, u, &Q, &QD);
  const int K = static_cast<int>(u.cols());
  const int nq = static_cast<int>(q0.size()), nv = static_cast<int>(qd0.size());
  Q += Eigen::Map<Eigen::MatrixXd>(randn(nq * K, noise, seed).data(), nq, K);
  QD += Eigen::Map<Eigen::MatrixXd>(randn(nv * K, noise, seed + 1).data(), nv, K);
  TrainingWindow w;
  w.q.resize(nq, K);
  w.qd.resize(nv, K);
  w.q.col(0) = q0;
  w.qd.col(0) = qd0;
  w.q.rightCols(K - 1) = Q.leftCols(K - 1);
  w.qd.rightCols(K - 1) = QD.leftCols(K - 1);
  w.q_next = Q;
  w.qd_next = QD;
  w.controls = with_controls ? u : Eigen::MatrixXd(0, K);
  return w;
}

Eigen::MatrixXd sinusoid_controls(int nv, int K, double dt, double amplitude, int first_actuated = 0) {
  Eigen::MatrixXd u = Eigen::MatrixXd::Zero(nv, K);
  for (int k = 0; k < K; ++k)
    for (int i = first_actuated; i < nv; ++i) u(i, k) = amplitude * std::sin(2 * M_PI * (0.7 + 0.3 * i) * k * dt + i);
  return u;
}

// Richardson-extrapolated central difference of f at 0.
double central_difference(const std::function<double(double)>& f, double h) {
  const double d1 = (f(h) - f(-h)) / (2 * h);
  const double d2 = (f(h / 2) - f(-h / 2)) / h;
  return (4 * d2 - d1) / 3;
}

Eigen::VectorXd fd_gradient(const std::function<double(const Eigen::VectorXd&)>& f, const Eigen::VectorXd& x,
                            double h0 = 1e-4) {
  Eigen::VectorXd g(x.size());
  for (int i = 0; i < x.size(); ++i) {
    const double h = h0 * std::max(1.0, std::abs(x[i]));
    g[i] = central_difference(
        [&](double t) {
          Eigen::VectorXd y = x;
          y[i] += t;
          return f(y);
        },
        h);
  }
  return g;
}

// max_i |g_i - r_i| / max(|r_i|, 1e-3 ‖r‖∞): a component that is zero up to
// rounding is compared at the scale of the gradient.
double relative_error(const Eigen::VectorXd& g, const Eigen::VectorXd& r) {
  const double scale = r.lpNorm<Eigen::Infinity>();
  double worst = 0;
  for (int i = 0; i < g.size(); ++i) worst = std::max(worst, std::abs(g[i] - r[i]) / std::max(std::abs(r[i]), 1e-3 * scale));
  return worst;
}

// max |g - r| / ‖r‖∞ (for comparisons that differ only by rounding).
double scaled_error(const Eigen::VectorXd& g, const Eigen::VectorXd& r) {
  return (g - r).lpNorm<Eigen::Infinity>() / r.lpNorm<Eigen::Infinity>();
}

WindowLossWeights weights_of(const Model<double>& m) {
  WindowLossWeights w;
  w.wq = Eigen::VectorXd::LinSpaced(m.nq, 1.0, 2.0);
  w.wqd = Eigen::VectorXd::LinSpaced(m.nv, 0.3, 0.5);
  return w;
}

// The window with its recorded states (columns ≥ 1) replaced by the
// predictions of a free rollout from its first state: the one-step loss of
// this window, as a function of x with these states fixed, is the loss whose
// derivative the detached mode returns.
TrainingWindow with_predicted_states(HybridWindowModel& m, const Eigen::VectorXd& x, const TrainingWindow& w) {
  const int K = w.steps();
  const Eigen::MatrixXd u = w.controls.rows() ? w.controls : Eigen::MatrixXd::Zero(m.problem().model.nv, K);
  Eigen::MatrixXd Q, QD;
  m.rollout(x, w.q.col(0), w.qd.col(0), u, &Q, &QD);
  TrainingWindow d = w;
  d.q.rightCols(K - 1) = Q.leftCols(K - 1);
  d.qd.rightCols(K - 1) = QD.leftCols(K - 1);
  return d;
}

struct FdCase {
  std::string label;
  RolloutProblem problem;
  Eigen::VectorXd q0, qd0;
  int K;
  double control_amplitude;
  int first_actuated;
};

void expect_gradients_match_finite_differences(const FdCase& c) {
  HybridWindowModel m(c.problem);
  Eigen::VectorXd x = m.initial_parameters() + randn(m.num_parameters(), 0.05, 3);
  x.head(m.num_physical()) = 0.9 * m.initial_parameters().head(m.num_physical());  // masses stay positive
  Eigen::VectorXd x_data = m.initial_parameters() + randn(m.num_parameters(), 0.3, 4);
  x_data.head(m.num_physical()) = 1.2 * m.initial_parameters().head(m.num_physical());
  const WindowLossWeights wts = weights_of(c.problem.model);
  const int nv = c.problem.model.nv;
  const Eigen::MatrixXd u = sinusoid_controls(nv, c.K, c.problem.step.dt, c.control_amplitude, c.first_actuated);
  for (bool with_controls : {true, false}) {
    const TrainingWindow w = recorded_window(m, x_data, c.q0, c.qd0, u, with_controls, 1e-3, 5);
    for (TrainingMode mode : kModes) {
      SCOPED_TRACE(c.label + " " + training_mode_name(mode) + (with_controls ? " with controls" : " without controls"));
      Eigen::VectorXd g;
      const double L = m.loss(x, w, mode, wts, &g);
      ASSERT_EQ(g.size(), m.num_parameters());
      EXPECT_GT(L, 0.0);
      EXPECT_NEAR(L, m.loss(x, w, mode, wts, nullptr), 1e-13 * L);  // the value path (double) agrees
      Eigen::VectorXd fd;
      if (mode == TrainingMode::kUnrolledDetached) {
        const TrainingWindow d = with_predicted_states(m, x, w);
        fd = fd_gradient([&](const Eigen::VectorXd& y) { return m.loss(y, d, TrainingMode::kOneStep, wts, nullptr); },
                         x);
        // Detaching changes the gradient, not the loss: the predictions are the unrolled ones.
        EXPECT_NEAR(L, m.loss(x, w, TrainingMode::kUnrolled, wts, nullptr), 1e-13 * L);
      } else {
        fd = fd_gradient([&](const Eigen::VectorXd& y) { return m.loss(y, w, mode, wts, nullptr); }, x);
      }
      const double err = relative_error(g, fd);
      std::printf("%s %s %s: worst relative error vs central differences %.1e (%d parameters)\n", c.label.c_str(),
                  training_mode_name(mode), with_controls ? "with controls" : "without controls", err,
                  static_cast<int>(g.size()));
      EXPECT_LT(err, 1e-6) << "gradient " << g.transpose() << "\nfd       " << fd.transpose();
      // The physical parameters are not negligible next to the weights.
      EXPECT_GT(g.head(m.num_physical()).lpNorm<Eigen::Infinity>(), 1e-3 * g.lpNorm<Eigen::Infinity>());
    }
  }
}

TEST(HybridWindowModel, GradientMatchesFiniteDifferencesInEveryModeOnThePendulum) {
  expect_gradients_match_finite_differences(
      {"double pendulum", pendulum_problem(), Eigen::Vector2d(0.6, -0.4), Eigen::Vector2d(0.3, 0.5), 8, 2.0, 0});
}

TEST(HybridWindowModel, GradientMatchesFiniteDifferencesInEveryModeOnTheSwimmer) {
  Eigen::VectorXd q0(5), qd0(5);
  q0 << 0.0, 0.0, 0.3, 0.2, -0.1;
  qd0 << 0.2, -0.1, 0.3, 0.5, -0.4;
  expect_gradients_match_finite_differences({"swimmer3", swimmer_problem({4}, {"link.segment0.mass", "joint.joint1.damping"}),
                                             q0, qd0, 10, 0.002, 3});
}

// ∂loss/∂(first recorded state) against central differences, where the loss
// depends on it through the whole window (kUnrolled) or through step 0 only
// (kOneStep; the detached mode's state dependence is checked exactly below).
TEST(HybridWindowModel, StateGradientMatchesFiniteDifferences) {
  const RolloutProblem p = pendulum_problem();
  HybridWindowModel m(p);
  const Eigen::VectorXd x = m.initial_parameters();
  const Eigen::MatrixXd u = sinusoid_controls(2, 8, p.step.dt, 2.0);
  const TrainingWindow w = recorded_window(m, x + randn(m.num_parameters(), 0.3, 9), Eigen::Vector2d(0.6, -0.4),
                                           Eigen::Vector2d(0.3, 0.5), u, true, 1e-3, 10);
  const WindowLossWeights wts = weights_of(p.model);
  for (TrainingMode mode : {TrainingMode::kOneStep, TrainingMode::kUnrolled}) {
    SCOPED_TRACE(training_mode_name(mode));
    Eigen::VectorXd gq, gqd;
    m.loss_with_state_gradient(x, w, mode, wts, nullptr, &gq, &gqd);
    Eigen::VectorXd s0(4), g(4);
    s0 << w.q.col(0), w.qd.col(0);
    g << gq, gqd;
    const Eigen::VectorXd fd = fd_gradient(
        [&](const Eigen::VectorXd& s) {
          TrainingWindow v = w;
          v.q.col(0) = s.head(2);
          v.qd.col(0) = s.tail(2);
          return m.loss(x, v, mode, wts, nullptr);
        },
        s0);
    EXPECT_LT(relative_error(g, fd), 1e-6) << g.transpose() << "\n" << fd.transpose();
  }
}

// ---------------------------------------------------------------- definitions

// This file's own double system: model, stepper, networks at x.
struct OwnSim {
  OwnSim(const RolloutProblem& p, const Eigen::VectorXd& x) : model(p.model), stepper(model, p.step) {
    const HybridParameters hp(p.physical, p.augment);
    aug = install_augmentation<double>(p.augment, p.model, stepper, nullptr);
    hp.apply<double>(x.data(), &model, nullptr, nullptr, aug.get());
  }
  // States after each of the u.cols() steps.
  void run(Eigen::VectorXd q, Eigen::VectorXd qd, const Eigen::MatrixXd& u, Eigen::MatrixXd& Q, Eigen::MatrixXd& QD) {
    Q.resize(q.size(), u.cols());
    QD.resize(qd.size(), u.cols());
    for (int k = 0; k < u.cols(); ++k) {
      const Eigen::VectorXd uk = u.col(k);
      stepper.step(q, qd, uk, k * stepper.options().dt);
      Q.col(k) = q;
      QD.col(k) = qd;
    }
  }
  Model<double> model;
  Stepper<double> stepper;
  std::shared_ptr<AugmentedDynamics<double>> aug;
};

// The window loss, from HybridRollout calls and grad/'s state_tracking_loss
// (½ Σ w e²: the weights are doubled and divided by K to give the
// definition's (1/K) Σ w e²).
struct Oracle {
  double loss = 0;
  Eigen::VectorXd x, q0, qd0;
};

Oracle oracle(const RolloutProblem& p, const Eigen::VectorXd& x, const TrainingWindow& w, TrainingMode mode,
              const WindowLossWeights& wts) {
  HybridRollout sim(p);
  const std::vector<double> xv(x.data(), x.data() + x.size());
  const int K = w.steps(), nv = p.model.nv;
  const Eigen::MatrixXd u = w.controls.rows() ? w.controls : Eigen::MatrixXd::Zero(nv, K);
  const Eigen::VectorXd wq = 2.0 * wts.wq / K, wqd = 2.0 * wts.wqd / K;
  Oracle o;
  HybridRolloutGradient g;
  if (mode == TrainingMode::kUnrolled) {
    TrajectoryLoss L;
    L.stage = state_tracking_loss(w.q_next, w.qd_next, wq, wqd);
    o.loss = sim.gradient(xv, w.q.col(0), w.qd.col(0), u, L, g);
    o.x = g.x;
    o.q0 = g.q0;
    o.qd0 = g.qd0;
    return o;
  }
  // Starting states: the recorded ones, or this file's own double rollout.
  Eigen::MatrixXd S = w.q, SD = w.qd;
  if (mode == TrainingMode::kUnrolledDetached) {
    OwnSim own(p, x);
    Eigen::MatrixXd Q, QD;
    own.run(w.q.col(0), w.qd.col(0), u, Q, QD);
    S.rightCols(K - 1) = Q.leftCols(K - 1);
    SD.rightCols(K - 1) = QD.leftCols(K - 1);
  }
  o.x = Eigen::VectorXd::Zero(x.size());
  for (int k = 0; k < K; ++k) {
    TrajectoryLoss L;
    L.stage = state_tracking_loss(w.q_next.col(k), w.qd_next.col(k), wq, wqd);
    o.loss += sim.gradient(xv, S.col(k), SD.col(k), u.col(k), L, g);
    o.x += g.x;
    if (k == 0) {
      o.q0 = g.q0;
      o.qd0 = g.qd0;
    }
  }
  return o;
}

TEST(HybridWindowModel, ModesMatchTheirDefinitions) {
  const RolloutProblem p = pendulum_problem();
  HybridWindowModel m(p);
  const Eigen::VectorXd x = m.initial_parameters() + randn(m.num_parameters(), 0.05, 11);
  const Eigen::MatrixXd u = sinusoid_controls(2, 12, p.step.dt, 2.0);
  const TrainingWindow w = recorded_window(m, x + randn(m.num_parameters(), 0.3, 12), Eigen::Vector2d(0.6, -0.4),
                                           Eigen::Vector2d(0.3, 0.5), u, true, 1e-3, 13);
  const WindowLossWeights wts = weights_of(p.model);
  for (TrainingMode mode : kModes) {
    SCOPED_TRACE(training_mode_name(mode));
    const Oracle o = oracle(p, x, w, mode, wts);
    Eigen::VectorXd g, gq, gqd;
    const double L = m.loss_with_state_gradient(x, w, mode, wts, &g, &gq, &gqd);
    // Only the order of the arithmetic differs (½ · 2w/K · e² vs w/K · e²).
    EXPECT_NEAR(L, o.loss, 1e-14 * o.loss);
    EXPECT_LT(scaled_error(g, o.x), 1e-12);
    EXPECT_LT(scaled_error(gq, o.q0), 1e-12);
    EXPECT_LT(scaled_error(gqd, o.qd0), 1e-12);
  }
  // The three gradients are different functions (the test would not notice a mode mix-up otherwise).
  Eigen::VectorXd g1, g2, g3;
  m.loss(x, w, TrainingMode::kOneStep, wts, &g1);
  m.loss(x, w, TrainingMode::kUnrolledDetached, wts, &g2);
  m.loss(x, w, TrainingMode::kUnrolled, wts, &g3);
  EXPECT_GT(scaled_error(g1, g2), 1e-3);
  EXPECT_GT(scaled_error(g2, g3), 1e-3);
}

// The definition of the loss written out in double from this file's own
// rollout: (1/K) Σ_k [Σ wq (q̂ - q)² + Σ wqd (q̂d - qd)²].
TEST(HybridWindowModel, LossIsTheMeanWeightedSquaredErrorOfTheRollout) {
  const RolloutProblem p = pendulum_problem();
  HybridWindowModel m(p);
  const Eigen::VectorXd x = m.initial_parameters() + randn(m.num_parameters(), 0.05, 14);
  const Eigen::MatrixXd u = sinusoid_controls(2, 9, p.step.dt, 2.0);
  const TrainingWindow w = recorded_window(m, x + randn(m.num_parameters(), 0.3, 15), Eigen::Vector2d(0.6, -0.4),
                                           Eigen::Vector2d(0.3, 0.5), u, true, 1e-3, 16);
  const WindowLossWeights wts = weights_of(p.model);
  OwnSim own(p, x);
  Eigen::MatrixXd Q, QD;
  own.run(w.q.col(0), w.qd.col(0), u, Q, QD);
  double expected = 0;
  for (int k = 0; k < 9; ++k)
    expected += ((Q.col(k) - w.q_next.col(k)).array().square() * wts.wq.array()).sum() +
                ((QD.col(k) - w.qd_next.col(k)).array().square() * wts.wqd.array()).sum();
  expected /= 9;
  EXPECT_NEAR(m.loss(x, w, TrainingMode::kUnrolled, wts, nullptr), expected, 1e-14 * expected);
  // The free rollout is the own double rollout, bit for bit.
  Eigen::MatrixXd Qm, QDm;
  m.rollout(x, w.q.col(0), w.qd.col(0), u, &Qm, &QDm);
  EXPECT_TRUE(Qm == Q && QDm == QD) << (Qm - Q).norm() << " " << (QDm - QD).norm();
  // Teacher forcing, from the same own stepper started at every recorded state.
  double one_step = 0;
  for (int k = 0; k < 9; ++k) {
    OwnSim s(p, x);
    Eigen::MatrixXd q1, qd1;
    s.run(w.q.col(k), w.qd.col(k), u.col(k), q1, qd1);
    one_step += ((q1.col(0) - w.q_next.col(k)).array().square() * wts.wq.array()).sum() +
                ((qd1.col(0) - w.qd_next.col(k)).array().square() * wts.wqd.array()).sum();
  }
  one_step /= 9;
  EXPECT_NEAR(m.loss(x, w, TrainingMode::kOneStep, wts, nullptr), one_step, 1e-14 * one_step);
}

// With step 0's target set to the model's own prediction (its error is
// exactly zero), the loss depends on the first recorded state only through
// the states passed to later steps: the gradient is exactly zero when they
// are detached (one-step: they are the recorded ones), nonzero unrolled.
TEST(HybridWindowModel, NoGradientFlowsThroughADetachedState) {
  const RolloutProblem p = pendulum_problem();
  HybridWindowModel m(p);
  const Eigen::VectorXd x = m.initial_parameters() + randn(m.num_parameters(), 0.05, 17);
  const Eigen::MatrixXd u = sinusoid_controls(2, 6, p.step.dt, 2.0);
  TrainingWindow w = recorded_window(m, x + randn(m.num_parameters(), 0.3, 18), Eigen::Vector2d(0.6, -0.4),
                                     Eigen::Vector2d(0.3, 0.5), u, true, 1e-3, 19);
  OwnSim own(p, x);
  Eigen::MatrixXd q1, qd1;
  own.run(w.q.col(0), w.qd.col(0), u.col(0), q1, qd1);
  w.q_next.col(0) = q1.col(0);
  w.qd_next.col(0) = qd1.col(0);
  const WindowLossWeights wts = weights_of(p.model);
  for (TrainingMode mode : {TrainingMode::kOneStep, TrainingMode::kUnrolledDetached}) {
    SCOPED_TRACE(training_mode_name(mode));
    Eigen::VectorXd g, gq, gqd;
    const double L = m.loss_with_state_gradient(x, w, mode, wts, &g, &gq, &gqd);
    EXPECT_GT(L, 0.0);
    EXPECT_GT(g.norm(), 0.0);
    for (int i = 0; i < gq.size(); ++i) EXPECT_EQ(gq[i], 0.0) << i;
    for (int i = 0; i < gqd.size(); ++i) EXPECT_EQ(gqd[i], 0.0) << i;
  }
  Eigen::VectorXd gq, gqd;
  m.loss_with_state_gradient(x, w, TrainingMode::kUnrolled, wts, nullptr, &gq, &gqd);
  EXPECT_GT(gq.lpNorm<Eigen::Infinity>(), 1e-3);
  EXPECT_GT(gqd.lpNorm<Eigen::Infinity>(), 1e-3);
  // A window whose step-0 error is not zero: the one-step state gradient is then nonzero
  // (the zeros above are not an artefact of the implementation).
  w.q_next(0, 0) += 1e-2;
  m.loss_with_state_gradient(x, w, TrainingMode::kOneStep, wts, nullptr, &gq, &gqd);
  EXPECT_GT(gq.lpNorm<Eigen::Infinity>(), 1e-4);
}

TEST(HybridWindowModel, SingleStepWindowIsTheSameInEveryMode) {
  const RolloutProblem p = pendulum_problem();
  HybridWindowModel m(p);
  const Eigen::VectorXd x = m.initial_parameters() + randn(m.num_parameters(), 0.05, 20);
  const Eigen::MatrixXd u = sinusoid_controls(2, 1, p.step.dt, 2.0);
  const TrainingWindow w = recorded_window(m, x + randn(m.num_parameters(), 0.3, 21), Eigen::Vector2d(0.6, -0.4),
                                           Eigen::Vector2d(0.3, 0.5), u, true, 1e-3, 22);
  const WindowLossWeights wts = weights_of(p.model);
  Eigen::VectorXd g[3], gq[3], gqd[3];
  double L[3], V[3];
  for (int i = 0; i < 3; ++i) {
    L[i] = m.loss_with_state_gradient(x, w, kModes[i], wts, &g[i], &gq[i], &gqd[i]);
    V[i] = m.loss(x, w, kModes[i], wts, nullptr);
  }
  for (int i = 1; i < 3; ++i) {
    SCOPED_TRACE(training_mode_name(kModes[i]));
    EXPECT_EQ(L[i], L[0]);
    EXPECT_EQ(V[i], V[0]);
    EXPECT_TRUE(g[i] == g[0]);
    EXPECT_TRUE(gq[i] == gq[0]);
    EXPECT_TRUE(gqd[i] == gqd[0]);
  }
  EXPECT_GT(g[0].norm(), 0.0);
  EXPECT_GT(gq[0].norm(), 0.0);
}

TEST(HybridWindowModel, ParametersNamesAndBlueprints) {
  const RolloutProblem p = pendulum_problem();
  HybridWindowModel m(p);
  const int nw = p.augment[0].network.num_parameters() + p.augment[1].network.num_parameters();
  EXPECT_EQ(m.num_physical(), 2);
  EXPECT_EQ(m.num_weights(), nw);
  EXPECT_EQ(m.num_parameters(), 2 + nw);
  const std::vector<std::string> names = m.parameter_names();
  ASSERT_EQ(static_cast<int>(names.size()), m.num_parameters());
  EXPECT_EQ(names[0], "joint.joint1.damping");
  EXPECT_EQ(names[1], "link.link2.mass");
  EXPECT_EQ(names[2], "augment.torque2.w0");
  const Eigen::VectorXd x0 = m.initial_parameters();
  EXPECT_EQ(x0[0], 0.3);  // the scene's damping, identity transformation
  EXPECT_EQ(x0[1], 1.0);
  std::vector<double> w0(static_cast<std::size_t>(p.augment[0].network.num_parameters()));
  p.augment[0].network.get_parameters(w0.data());
  EXPECT_EQ(x0[2], w0[0]);
  // blueprints_at writes the weights of x into the networks, in order.
  const Eigen::VectorXd x = x0 + randn(m.num_parameters(), 0.1, 23);
  const std::vector<AugmentBlueprint> bps = m.blueprints_at(x);
  std::vector<double> w1(static_cast<std::size_t>(bps[1].network.num_parameters()));
  bps[1].network.get_parameters(w1.data());
  EXPECT_EQ(w1.back(), x[m.num_parameters() - 1]);
  EXPECT_EQ(m.physical_values(x)[1], x[1]);
  // Frozen physics: an empty ParameterSet leaves only the weights.
  RolloutProblem frozen = p;
  frozen.physical = ParameterSet();
  HybridWindowModel f(frozen);
  EXPECT_EQ(f.num_physical(), 0);
  EXPECT_EQ(f.num_parameters(), nw);
  EXPECT_TRUE(std::isinf(f.lower_bounds()[0]));
}

TEST(HybridWindowModel, ClonesAreIndependentAndIdentical) {
  const RolloutProblem p = pendulum_problem();
  HybridWindowModel m(p);
  const std::unique_ptr<WindowModel> c = m.clone();
  const Eigen::VectorXd x = m.initial_parameters() + randn(m.num_parameters(), 0.05, 24);
  const Eigen::MatrixXd u = sinusoid_controls(2, 7, p.step.dt, 2.0);
  const TrainingWindow w = recorded_window(m, x + randn(m.num_parameters(), 0.3, 25), Eigen::Vector2d(0.6, -0.4),
                                           Eigen::Vector2d(0.3, 0.5), u, true, 1e-3, 26);
  const WindowLossWeights wts = weights_of(p.model);
  for (TrainingMode mode : kModes) {
    Eigen::VectorXd g1, g2, g3;
    const double L1 = m.loss(x, w, mode, wts, &g1);
    c->loss(x + Eigen::VectorXd::Constant(x.size(), 0.01), w, mode, wts, &g3);  // interleaved use of the clone
    const double L2 = c->loss(x, w, mode, wts, &g2);
    EXPECT_EQ(L1, L2);
    EXPECT_TRUE(g1 == g2);
  }
  EXPECT_EQ(c->name(), "hybrid");
  EXPECT_EQ(c->num_parameters(), m.num_parameters());
}

// One clone per thread, as the trainer uses them: the same bits as one model
// evaluating every window in turn.
TEST(HybridWindowModel, ClonesOnThreadsMatchOneModel) {
  const RolloutProblem p = swimmer_problem({4}, {"link.segment0.mass"});
  HybridWindowModel m(p);
  Eigen::VectorXd q0(5), qd0(5);
  q0 << 0.0, 0.0, 0.3, 0.2, -0.1;
  qd0 << 0.2, -0.1, 0.3, 0.5, -0.4;
  const Eigen::VectorXd x = m.initial_parameters();
  const WindowLossWeights wts = weights_of(p.model);
  std::vector<TrainingWindow> windows;
  for (int i = 0; i < 8; ++i) {
    Eigen::VectorXd x_data = x;
    x_data.tail(m.num_weights()) += randn(m.num_weights(), 0.1, 40 + i);
    windows.push_back(recorded_window(m, x_data, q0, qd0,
                                      sinusoid_controls(5, 12, p.step.dt, 0.002, 3), true, 1e-4, 50 + i));
  }
  std::vector<Eigen::VectorXd> serial(8), parallel(8);
  for (int i = 0; i < 8; ++i) m.loss(x, windows[i], kModes[i % 3], wts, &serial[i]);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      const std::unique_ptr<WindowModel> c = m.clone();
      for (int i = t; i < 8; i += 4) c->loss(x, windows[i], kModes[i % 3], wts, &parallel[i]);
    });
  for (std::thread& th : threads) th.join();
  for (int i = 0; i < 8; ++i) EXPECT_TRUE(serial[i] == parallel[i]) << i;
}

// ---------------------------------------------------------------- errors

template <class E>
void expect_error(const std::function<void()>& f, const std::vector<std::string>& fragments) {
  try {
    f();
    ADD_FAILURE() << "no exception";
  } catch (const E& e) {
    const std::string msg = e.what();
    for (const std::string& s : fragments) EXPECT_NE(msg.find(s), std::string::npos) << msg << "\nmissing: " << s;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
}

TEST(HybridWindowModel, RejectsBadInputsWithClearErrors) {
  const RolloutProblem p = pendulum_problem();
  HybridWindowModel m(p);
  const Eigen::VectorXd x = m.initial_parameters();
  const int n = m.num_parameters();
  const Eigen::MatrixXd u = sinusoid_controls(2, 5, p.step.dt, 2.0);
  TrainingWindow w = recorded_window(m, x, Eigen::Vector2d(0.6, -0.4), Eigen::Vector2d(0.3, 0.5), u, true, 1e-3, 27);
  w.trajectory = 3;
  w.start = 40;
  const WindowLossWeights wts = weights_of(p.model);
  Eigen::VectorXd g;
  const TrainingMode mode = TrainingMode::kUnrolled;

  expect_error<InvalidArgument>([&] { m.loss(x.head(n - 1), w, mode, wts, &g); },
                                {"x has " + std::to_string(n - 1), std::to_string(n) + " parameters"});
  Eigen::VectorXd bad = x;
  bad[3] = std::numeric_limits<double>::quiet_NaN();
  expect_error<InvalidArgument>([&] { m.loss(bad, w, mode, wts, &g); }, {"x[3]", "augment.torque2.w1", "not finite"});
  bad[3] = std::numeric_limits<double>::infinity();
  expect_error<InvalidArgument>([&] { m.loss(bad, w, TrainingMode::kOneStep, wts, nullptr); }, {"x[3]"});

  TrainingWindow v = w;
  v.q = w.q.topRows(1);
  expect_error<DataError>([&] { m.loss(x, v, mode, wts, &g); }, {"trajectory 3, start 40", "q is 1×5", "needs 2×5"});
  v = w;
  v.qd_next = w.qd_next.leftCols(4);
  expect_error<DataError>([&] { m.loss(x, v, mode, wts, &g); }, {"qd_next is 2×4", "needs 2×5"});
  v = w;
  v.controls = w.controls.topRows(1);
  expect_error<DataError>([&] { m.loss(x, v, mode, wts, &g); }, {"controls is 1×5", "needs 2×5"});
  v = w;
  v.q_next(1, 2) = std::numeric_limits<double>::quiet_NaN();
  expect_error<DataError>([&] { m.loss(x, v, mode, wts, &g); }, {"q_next(1, 2)", "not finite"});
  v = TrainingWindow();
  expect_error<DataError>([&] { m.loss(x, v, mode, wts, &g); }, {"no steps"});

  WindowLossWeights bw = wts;
  bw.wqd.resize(3);
  bw.wqd.setOnes();
  expect_error<InvalidArgument>([&] { m.loss(x, w, mode, bw, &g); }, {"wqd have 3 entries", "needs 2"});
  bw = wts;
  bw.wq[0] = -1;
  expect_error<InvalidArgument>([&] { m.loss(x, w, mode, bw, &g); }, {"wq[0]", "≥ 0"});

  Eigen::MatrixXd Q, QD;
  expect_error<InvalidArgument>([&] { m.rollout(x, Eigen::VectorXd::Zero(3), Eigen::VectorXd::Zero(2), u, &Q, &QD); },
                                {"q0 has size 3", "needs 2"});
  expect_error<InvalidArgument>(
      [&] { m.rollout(x, Eigen::VectorXd::Zero(2), Eigen::VectorXd::Zero(2), u.topRows(1), &Q, &QD); },
      {"controls has 1 rows"});
  expect_error<InvalidArgument>(
      [&] { m.rollout(bad, Eigen::VectorXd::Zero(2), Eigen::VectorXd::Zero(2), u, &Q, &QD); }, {"x[3]"});

  // Problems the window model cannot train.
  RolloutProblem q = p;
  q.physical = named(p.model, {"joint.joint1.damping"});
  {
    std::vector<EstimatedParameter> ps = q.physical.all();
    EstimatedParameter e;
    e.target = *resolve_named_parameter("initial.qd.joint1", p.model, false);
    ps.push_back(e);
    q.physical = ParameterSet(ps);
  }
  expect_error<InvalidArgument>([&] { HybridWindowModel bad_model(q); }, {"initial.qd.joint1", "recorded state"});
  q = p;
  q.augment.push_back(make_blueprint(p.model, "offset", joint_site(p.model, "joint1", SiteQuantity::kJointTorqueOffset),
                                     AugmentMode::kResidual, {"time"}, {2}, 0.1, 5));
  expect_error<InvalidArgument>([&] { HybridWindowModel bad_model(q); }, {"'offset'", "'time'"});

  // A diverging model: NumericalError in both the double and the taped path.
  Eigen::VectorXd huge = x;
  huge.tail(m.num_weights()).setConstant(1e200);
  for (TrainingMode md : kModes) {
    expect_error<NumericalError>([&] { m.loss(huge, w, md, wts, &g); }, {"trajectory 3, start 40", " mode: "});
    expect_error<NumericalError>([&] { m.loss(huge, w, md, wts, nullptr); }, {"trajectory 3, start 40"});
  }

  // A finite rollout whose loss overflows: the same error, from the loss itself.
  bw = wts;
  bw.wq.setConstant(1e300);
  v = w;
  v.q_next.array() += 1e10;
  for (TrainingMode md : kModes) {
    // (with a gradient the reverse sweep meets the overflow first: the network's backward pass refuses it)
    expect_error<NumericalError>([&] { m.loss(x, v, md, bw, &g); }, {"trajectory 3, start 40", "not finite"});
    expect_error<NumericalError>([&] { m.loss(x, v, md, bw, nullptr); }, {"the loss is not finite"});
  }

  // After the errors the model still works.
  EXPECT_NO_THROW(m.loss(x, w, mode, wts, &g));
}

// No allocation per step: a warmed-up unrolled loss + gradient allocates the
// same for K = 20 and K = 40.
TEST(HybridWindowModel, UnrolledGradientAllocatesNothingPerStep) {
  if (!testing::AllocationCounter::available()) GTEST_SKIP() << "allocation counting unavailable";
  const RolloutProblem p = pendulum_problem();
  HybridWindowModel m(p);
  const Eigen::VectorXd x = m.initial_parameters();
  const WindowLossWeights wts = weights_of(p.model);
  long counts[2];
  for (int i = 0; i < 2; ++i) {
    const int K = 20 * (i + 1);
    const Eigen::MatrixXd u = sinusoid_controls(2, K, p.step.dt, 2.0);
    const TrainingWindow w =
        recorded_window(m, x, Eigen::Vector2d(0.6, -0.4), Eigen::Vector2d(0.3, 0.5), u, true, 1e-3, 28);
    Eigen::VectorXd g;
    m.loss(x, w, TrainingMode::kUnrolled, wts, &g);
    m.loss(x, w, TrainingMode::kUnrolled, wts, &g);
    testing::AllocationCounter a;
    m.loss(x, w, TrainingMode::kUnrolled, wts, &g);
    counts[i] = a.count();
  }
  EXPECT_EQ(counts[0], counts[1]);
  std::printf("allocations per unrolled loss+gradient: %ld\n", counts[0]);
}

// ---------------------------------------------------------------- learning

// Full-batch mean loss over windows, for ceres' L-BFGS.
class BatchLoss final : public ceres::FirstOrderFunction {
 public:
  BatchLoss(HybridWindowModel& m, const std::vector<TrainingWindow>& windows, const WindowLossWeights& w)
      : m_(m), windows_(windows), w_(w) {}
  bool Evaluate(const double* parameters, double* cost, double* gradient) const override {
    const Eigen::VectorXd x = Eigen::Map<const Eigen::VectorXd>(parameters, m_.num_parameters());
    double L = 0;
    Eigen::VectorXd G = Eigen::VectorXd::Zero(x.size()), g;
    for (const TrainingWindow& win : windows_) {
      L += m_.loss(x, win, TrainingMode::kUnrolled, w_, gradient ? &g : nullptr);
      if (gradient) G += g;
    }
    *cost = L / windows_.size();
    if (gradient) Eigen::Map<Eigen::VectorXd>(gradient, x.size()) = G / windows_.size();
    return std::isfinite(*cost);
  }
  int NumParameters() const override { return m_.num_parameters(); }

 private:
  HybridWindowModel& m_;
  const std::vector<TrainingWindow>& windows_;
  const WindowLossWeights& w_;
};

// Data from a pendulum with viscous damping b; the model has none, and a
// residual joint-torque network of q̇ learns what is missing: −b·q̇.
TEST(HybridWindowModel, LearnsAnUnmodeledViscousDamping) {
  const auto t_start = std::chrono::steady_clock::now();
  const double b = 0.4;
  const Model<double> model = load_yaml_model(testing::source_path("configs/models/pendulum.yaml"));
  StepOptions step;
  step.dt = 0.01;
  // Recordings by our own engine with the damping: 6 swings of 2 s.
  Model<double> damped = model;
  damped.joints[0].dynamics.damping = b;
  Stepper<double> truth(damped, step);
  const int K = 10, steps = 200;
  std::vector<TrainingWindow> windows;
  const double q_starts[] = {0.5, 1.0, 1.6, 2.2, -1.3, 2.8};
  const double qd_starts[] = {0.0, 1.5, -1.0, 0.5, -2.5, 0.0};
  std::vector<double> all_q, all_qd;
  for (int t = 0; t < 6; ++t) {
    Eigen::MatrixXd Q(1, steps + 1), QD(1, steps + 1);
    Eigen::VectorXd q(1), qd(1), u = Eigen::VectorXd::Zero(1);
    q[0] = q_starts[t];
    qd[0] = qd_starts[t];
    Q.col(0) = q;
    QD.col(0) = qd;
    for (int k = 0; k < steps; ++k) {
      truth.step(q, qd, u, k * step.dt);
      Q.col(k + 1) = q;
      QD.col(k + 1) = qd;
    }
    for (int s = 0; s + K <= steps; s += K) {
      TrainingWindow w;
      w.trajectory = t;
      w.start = s;
      w.q = Q.block(0, s, 1, K);
      w.qd = QD.block(0, s, 1, K);
      w.q_next = Q.block(0, s + 1, 1, K);
      w.qd_next = QD.block(0, s + 1, 1, K);
      w.controls = Eigen::MatrixXd(0, K);
      windows.push_back(w);
    }
    for (int k = 0; k <= steps; ++k) {
      all_q.push_back(Q(0, k));
      all_qd.push_back(QD(0, k));
    }
  }
  auto variance = [](const std::vector<double>& v) {
    double m = 0, s = 0;
    for (double a : v) m += a;
    m /= v.size();
    for (double a : v) s += (a - m) * (a - m);
    return s / v.size();
  };
  const double qd_min = *std::min_element(all_qd.begin(), all_qd.end());
  const double qd_max = *std::max_element(all_qd.begin(), all_qd.end());
  const double qd_scale = std::max(std::abs(qd_min), std::abs(qd_max));

  RolloutProblem p;
  p.model = model;  // no damping
  p.step = step;
  AugmentBlueprint bp = make_blueprint(model, "residual", joint_site(model, "joint1", SiteQuantity::kJointTorque),
                                       AugmentMode::kResidual, {"joint.joint1.qd"}, {8}, 1.0, 7);
  bp.network.set_input_normalization(Eigen::VectorXd::Zero(1), Eigen::VectorXd::Constant(1, std::sqrt(variance(all_qd))));
  p.augment = {bp};
  HybridWindowModel m(p);  // frozen physics: the weights only
  WindowLossWeights wts;
  wts.wq = Eigen::VectorXd::Constant(1, 1.0 / variance(all_q));
  wts.wqd = Eigen::VectorXd::Constant(1, 1.0 / variance(all_qd));

  Eigen::VectorXd x = m.initial_parameters();
  ceres::GradientProblem problem(new BatchLoss(m, windows, wts));
  ceres::GradientProblemSolver::Options options;
  options.line_search_direction_type = ceres::LBFGS;
  options.max_num_iterations = 400;
  options.function_tolerance = 1e-16;
  options.gradient_tolerance = 1e-16;
  options.parameter_tolerance = 1e-16;
  options.logging_type = ceres::SILENT;
  ceres::GradientProblemSolver::Summary summary;
  ceres::Solve(options, problem, x.data(), &summary);

  // The network against −b·q̇ at 20 points over the recorded range of q̇.
  const std::vector<AugmentBlueprint> trained = m.blueprints_at(x);
  const nn::Mlp& net = trained[0].network;
  nn::Workspace<double> ws(net);
  double worst = 0, before = 0;
  nn::Workspace<double> ws0(bp.network);
  for (int i = 0; i < 20; ++i) {
    const double v = qd_min + (qd_max - qd_min) * i / 19.0;
    double y = 0, y0 = 0;
    net.forward(&v, &y, ws);
    bp.network.forward(&v, &y0, ws0);
    worst = std::max(worst, std::abs(y + b * v));
    before = std::max(before, std::abs(y0 + b * v));
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  std::printf("learned damping: %zu windows of %d steps, %d iterations, loss %.3e -> %.3e, max |net + b q̇| %.2e "
              "(untrained %.2e) over q̇ in [%.2f, %.2f], %.2f%% of b·max|q̇|, %.1f s\n",
              windows.size(), K, static_cast<int>(summary.iterations.size()), summary.initial_cost,
              summary.final_cost, worst, before, qd_min, qd_max, 100 * worst / (b * qd_scale), seconds);
  EXPECT_LT(summary.final_cost, 1e-3 * summary.initial_cost);
  EXPECT_LT(worst, 0.05 * b * qd_scale);
  EXPECT_GT(before, 0.05 * b * qd_scale);  // the untrained network does not pass the same check
}

// ---------------------------------------------------------------- timing

// Run alone, Release: --gtest_filter='HybridWindowModel.DISABLED_*' --gtest_also_run_disabled_tests
TEST(HybridWindowModel, DISABLED_TimeUnrolledGradientOnTheSwimmer) {
  const RolloutProblem p = swimmer_problem({16}, {"link.segment0.mass"});
  HybridWindowModel m(p);
  const int K = 50;
  Eigen::VectorXd q0(5), qd0(5);
  q0 << 0.0, 0.0, 0.3, 0.2, -0.1;
  qd0 << 0.2, -0.1, 0.3, 0.5, -0.4;
  const Eigen::VectorXd x = m.initial_parameters();
  const Eigen::MatrixXd u = sinusoid_controls(5, K, p.step.dt, 0.002, 3);
  Eigen::VectorXd x_data = x;
  x_data.tail(m.num_weights()) += randn(m.num_weights(), 0.1, 30);
  const TrainingWindow w = recorded_window(m, x_data, q0, qd0, u, true, 1e-4, 31);
  const WindowLossWeights wts = weights_of(p.model);
  auto time_of = [](const std::function<void()>& f) {
    double best = 1e30;
    for (int r = 0; r < 7; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < 50; ++i) f();
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / 50);
    }
    return best;
  };
  Eigen::MatrixXd Q, QD;
  Eigen::VectorXd g;
  m.rollout(x, q0, qd0, u, &Q, &QD);  // warm-up: buffers and tape sized
  m.loss(x, w, TrainingMode::kUnrolled, wts, &g);
  const double t_roll = time_of([&] { m.rollout(x, q0, qd0, u, &Q, &QD); });
  const double t_value = time_of([&] { m.loss(x, w, TrainingMode::kUnrolled, wts, nullptr); });
  const double t_unrolled = time_of([&] { m.loss(x, w, TrainingMode::kUnrolled, wts, &g); });
  const double t_detached = time_of([&] { m.loss(x, w, TrainingMode::kUnrolledDetached, wts, &g); });
  const double t_one = time_of([&] { m.loss(x, w, TrainingMode::kOneStep, wts, &g); });
  m.set_checkpoint_interval(8);  // ⌈√50⌉: checkpointed, one more double pass
  const double t_ckpt = time_of([&] { m.loss(x, w, TrainingMode::kUnrolled, wts, &g); });
  m.set_checkpoint_interval(0);
  const double t_roll2 = time_of([&] { m.rollout(x, q0, qd0, u, &Q, &QD); });
  const double t_fwd = std::min({t_roll, t_roll2, t_value});
  std::printf("swimmer3, K = %d, %d weights + %d physical: rollout %.1f / %.1f us (first / last), unrolled loss "
              "(double) %.1f us; loss+gradient: unrolled %.1f us (%.1fx the fastest forward), detached %.1f us "
              "(%.1fx), one-step %.1f us (%.1fx)\n",
              K, m.num_weights(), m.num_physical(), 1e6 * t_roll, 1e6 * t_roll2, 1e6 * t_value, 1e6 * t_unrolled,
              t_unrolled / t_fwd, 1e6 * t_detached, t_detached / t_fwd, 1e6 * t_one, t_one / t_fwd);
  std::printf("unrolled loss+gradient with checkpoints every 8 steps: %.1f us (%.1fx)\n", 1e6 * t_ckpt,
              t_ckpt / t_fwd);
}

}  // namespace neuralsim::hybrid_window_model_test
