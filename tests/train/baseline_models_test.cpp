// The data-driven baselines (train/baseline_models.hpp) against
// mathematics: the window loss of every training mode recomputed from its
// definition with the networks alone (nn::Mlp::forward, nn::Lstm::step), the
// gradient of every mode against central finite differences of the function
// it is the gradient of (the loss itself for kOneStep and kUnrolled; for
// kUnrolledDetached the loss with each step's input frozen at the model's own
// prediction), K = 1 where the modes must coincide, a problem where the
// detached and full gradients must differ, order-independent normalization
// statistics, parameter-count sizing, errors, and learning a linear system.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <deque>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/train/baseline_models.hpp"
#include "support/allocation_counter.hpp"

// Own namespace: unity builds put test files in one translation unit.
namespace neuralsim::baseline_models_test {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;

constexpr TrainingMode kModes[3] = {TrainingMode::kOneStep, TrainingMode::kUnrolledDetached,
                                    TrainingMode::kUnrolled};


double uniform(std::mt19937_64& rng, double lo, double hi) {
  return lo + (hi - lo) * nn::random::uniform01(rng);
}

// A nonlinear 2-dof system (two coupled damped pendulums, semi-implicit
// Euler), recorded as a window of K steps.
TrainingWindow nonlinear_window(int K, bool controls, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const double dt = 0.1;
  VectorXd q(2), qd(2);
  q << uniform(rng, -1, 1), uniform(rng, -1, 1);
  qd << uniform(rng, -1, 1), uniform(rng, -1, 1);
  TrainingWindow w;
  w.trajectory = 3;
  w.start = 17;
  w.q.resize(2, K);
  w.qd.resize(2, K);
  w.q_next.resize(2, K);
  w.qd_next.resize(2, K);
  w.controls.resize(controls ? 2 : 0, K);
  for (int k = 0; k < K; ++k) {
    w.q.col(k) = q;
    w.qd.col(k) = qd;
    VectorXd u = VectorXd::Zero(2);
    if (controls) {
      u << uniform(rng, -1, 1), uniform(rng, -1, 1);
      w.controls.col(k) = u;
    }
    VectorXd acc(2);
    acc[0] = -3.0 * std::sin(q[0]) + 0.8 * std::sin(q[1] - q[0]) - 0.2 * qd[0] + u[0];
    acc[1] = -3.0 * std::sin(q[1]) - 0.8 * std::sin(q[1] - q[0]) - 0.2 * qd[1] + u[1];
    qd += dt * acc;
    q += dt * qd;
    w.q_next.col(k) = q;
    w.qd_next.col(k) = qd;
  }
  return w;
}

WindowLossWeights loss_weights() {
  WindowLossWeights w;
  w.wq = VectorXd(2);
  w.wqd = VectorXd(2);
  w.wq << 1.3, 0.7;
  w.wqd << 0.4, 0.9;
  return w;
}

// Normalization away from identity, as fit from data would give.
void set_test_normalization(WindowModel& m, int nin) {
  VectorXd mean(nin), sd(nin), off(4), scale(4);
  for (int i = 0; i < nin; ++i) {
    mean[i] = 0.1 * (i - 2);
    sd[i] = 0.5 + 0.3 * i;
  }
  off << 0.01, -0.02, 0.03, -0.01;
  scale << 0.2, 0.15, 0.3, 0.25;
  if (auto* mlp = dynamic_cast<MlpStateModel*>(&m)) mlp->set_normalization(mean, sd, off, scale);
  if (auto* lstm = dynamic_cast<LstmStateModel*>(&m)) lstm->set_normalization(mean, sd, off, scale);
}

// Parameters away from the initialization (larger, so the networks are
// clearly nonlinear on the data).
VectorXd test_parameters(const WindowModel& m, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  VectorXd x = m.initial_parameters();
  for (Eigen::Index k = 0; k < x.size(); ++k) x[k] = 1.5 * x[k] + uniform(rng, -0.2, 0.2);
  return x;
}

MlpStateModel make_mlp(bool delta, bool controls) {
  MlpStateModelOptions o;
  o.nq = 2;
  o.nv = 2;
  o.use_controls = controls;
  o.hidden_widths = {7, 5};
  o.predict_delta = delta;
  o.seed = 9;
  MlpStateModel m(o);
  set_test_normalization(m, m.input_dim());
  return m;
}

LstmStateModel make_lstm(bool controls) {
  LstmStateModelOptions o;
  o.nq = 2;
  o.nv = 2;
  o.use_controls = controls;
  o.hidden = 5;
  o.seed = 4;
  LstmStateModel m(o);
  set_test_normalization(m, m.input_dim());
  return m;
}

// ---------------------------------------------------------------- the definitions

// Network input [q; qd; u_k] from a 4-vector state.
VectorXd net_input(const VectorXd& x, const TrainingWindow& w, int k) {
  VectorXd in(x.size() + w.controls.rows());
  in << x, w.controls.col(k);
  return in;
}

double weighted_sq(const VectorXd& pred, const TrainingWindow& w, int k, const WindowLossWeights& wt) {
  VectorXd r(4), W(4);
  r << pred.head(2) - w.q_next.col(k), pred.tail(2) - w.qd_next.col(k);
  W << wt.wq, wt.wqd;
  return r.cwiseAbs2().dot(W);
}

VectorXd recorded_state(const TrainingWindow& w, int k) {
  VectorXd x(4);
  x << w.q.col(k), w.qd.col(k);
  return x;
}

// The predicted states x̂_0 … x̂_K of the MLP model, from the network alone;
// teacher-forced (inputs are recorded states) or free.
std::vector<VectorXd> mlp_states(const nn::Mlp& net, bool delta, const TrainingWindow& w, bool forced) {
  nn::Workspace<double> ws(net);
  std::vector<VectorXd> x = {recorded_state(w, 0)};
  for (int k = 0; k < w.steps(); ++k) {
    const VectorXd in_state = forced ? recorded_state(w, k) : x.back();
    const VectorXd in = net_input(in_state, w, k);
    VectorXd out(4);
    net.forward(in.data(), out.data(), ws);
    x.push_back(delta ? VectorXd(in_state + out) : out);
  }
  return x;
}

std::vector<VectorXd> lstm_states(const nn::Lstm& net, const TrainingWindow& w, bool forced) {
  nn::LstmWorkspace ws(net, 1);
  VectorXd h = VectorXd::Zero(net.hidden_size()), c = h;
  std::vector<VectorXd> x = {recorded_state(w, 0)};
  for (int k = 0; k < w.steps(); ++k) {
    const VectorXd in_state = forced ? recorded_state(w, k) : x.back();
    const VectorXd in = net_input(in_state, w, k);
    VectorXd out(4);
    net.step(h.data(), c.data(), in.data(), h.data(), c.data(), out.data(), ws);
    x.push_back(in_state + out);
  }
  return x;
}

double loss_from_states(const std::vector<VectorXd>& x, const TrainingWindow& w, const WindowLossWeights& wt) {
  double L = 0.0;
  for (int k = 0; k < w.steps(); ++k) L += weighted_sq(x[static_cast<size_t>(k + 1)], w, k, wt);
  return L / w.steps();
}

// The window with its recorded input states replaced by `states` (x̂_0 …
// x̂_{K−1}); targets unchanged. kOneStep on it is the detached surrogate.
TrainingWindow with_inputs(const TrainingWindow& w, const std::vector<VectorXd>& states) {
  TrainingWindow out = w;
  for (int k = 0; k < w.steps(); ++k) {
    out.q.col(k) = states[static_cast<size_t>(k)].head(2);
    out.qd.col(k) = states[static_cast<size_t>(k)].tail(2);
  }
  return out;
}

// Richardson-extrapolated central differences of f(x), step h per entry.
template <class F>
VectorXd fd_gradient(VectorXd x, F&& f, double h = 1e-4) {
  VectorXd g(x.size());
  for (Eigen::Index k = 0; k < x.size(); ++k) {
    const double x0 = x[k];
    auto D = [&](double s) {
      x[k] = x0 + s;
      const double fp = f(x);
      x[k] = x0 - s;
      const double fm = f(x);
      x[k] = x0;
      return (fp - fm) / (2 * s);
    };
    g[k] = (4 * D(h / 2) - D(h)) / 3;
  }
  return g;
}

double norm_relative_error(const VectorXd& a, const VectorXd& b) {
  return (a - b).lpNorm<Eigen::Infinity>() / std::max(b.lpNorm<Eigen::Infinity>(), 1e-300);
}

// One model, every mode: loss = definition, gradient = FD of the right function.
void check_model_against_definitions(WindowModel& model, bool is_lstm, bool delta, int K,
                                     bool controls, std::uint64_t seed) {
  const TrainingWindow w = nonlinear_window(K, controls, seed);
  const WindowLossWeights wt = loss_weights();
  const VectorXd x = test_parameters(model, seed + 1);
  auto states = [&](const VectorXd& p, const TrainingWindow& win, bool forced) {
    if (is_lstm) return lstm_states(static_cast<LstmStateModel&>(model).network(p), win, forced);
    return mlp_states(static_cast<MlpStateModel&>(model).network(p), delta, win, forced);
  };
  // The detached surrogate's inputs: the model's own predictions at x, fixed.
  const std::vector<VectorXd> free_states = states(x, w, false);
  const TrainingWindow frozen = with_inputs(w, free_states);
  for (TrainingMode mode : kModes) {
    SCOPED_TRACE(std::string(model.name()) + ", " + training_mode_name(mode) + ", K " + std::to_string(K));
    VectorXd g;
    const double L = model.loss(x, w, mode, wt, &g);
    EXPECT_DOUBLE_EQ(model.loss(x, w, mode, wt, nullptr), L);  // with and without gradient
    const bool forced = mode == TrainingMode::kOneStep;
    const double L_def = loss_from_states(states(x, w, forced), w, wt);
    EXPECT_NEAR(L, L_def, 1e-13 * std::max(1.0, L_def));
    VectorXd g_fd;
    if (mode == TrainingMode::kUnrolledDetached) {
      g_fd = fd_gradient(x, [&](const VectorXd& p) { return loss_from_states(states(p, frozen, true), frozen, wt); });
    } else {
      g_fd = fd_gradient(x, [&](const VectorXd& p) { return loss_from_states(states(p, w, forced), w, wt); });
    }
    const double err = norm_relative_error(g, g_fd);
    std::printf("  [%s %s K=%d] loss %.4g, |grad| %.3g, gradient vs FD %.1e\n", model.name().c_str(),
                training_mode_name(mode), K, L, g.lpNorm<Eigen::Infinity>(), err);
    EXPECT_LT(err, 1e-6);
  }
}

// ================================================================ gradients and losses

TEST(BaselineModels, MlpDeltaLossAndGradientsOfEveryModeMatchTheirDefinitions) {
  MlpStateModel m = make_mlp(true, true);
  check_model_against_definitions(m, false, true, 5, true, 21);
}

TEST(BaselineModels, MlpDirectLossAndGradientsOfEveryModeMatchTheirDefinitions) {
  MlpStateModel m = make_mlp(false, false);
  check_model_against_definitions(m, false, false, 4, false, 22);
}

TEST(BaselineModels, LstmLossAndGradientsOfEveryModeMatchTheirDefinitions) {
  LstmStateModel m = make_lstm(true);
  check_model_against_definitions(m, true, true, 5, true, 23);
  LstmStateModel n = make_lstm(false);
  check_model_against_definitions(n, true, true, 3, false, 24);
}

TEST(BaselineModels, OneStepWindowAllModesAgree) {
  MlpStateModel a = make_mlp(true, true), b = make_mlp(false, true);
  LstmStateModel c = make_lstm(true);
  for (WindowModel* m : std::vector<WindowModel*>{&a, &b, &c}) {
    const TrainingWindow w = nonlinear_window(1, true, 5);
    const VectorXd x = test_parameters(*m, 6);
    VectorXd g0, g1, g2;
    const double l0 = m->loss(x, w, TrainingMode::kOneStep, loss_weights(), &g0);
    const double l1 = m->loss(x, w, TrainingMode::kUnrolledDetached, loss_weights(), &g1);
    const double l2 = m->loss(x, w, TrainingMode::kUnrolled, loss_weights(), &g2);
    EXPECT_EQ(l0, l1) << m->name();
    EXPECT_EQ(l0, l2) << m->name();
    EXPECT_EQ(g0, g1) << m->name();
    EXPECT_EQ(g0, g2) << m->name();
    EXPECT_GT(g0.norm(), 0.0);
  }
}

TEST(BaselineModels, DetachedGradientDiffersFromTheFullOneAndIsTheFrozenInputGradient) {
  MlpStateModel a = make_mlp(true, true);
  LstmStateModel c = make_lstm(true);
  for (WindowModel* m : std::vector<WindowModel*>{&a, &c}) {
    const TrainingWindow w = nonlinear_window(6, true, 8);
    const VectorXd x = test_parameters(*m, 9);
    VectorXd gd, gu, g1;
    const double ld = m->loss(x, w, TrainingMode::kUnrolledDetached, loss_weights(), &gd);
    const double lu = m->loss(x, w, TrainingMode::kUnrolled, loss_weights(), &gu);
    EXPECT_EQ(ld, lu) << m->name();  // the same rollout
    const double rel = (gd - gu).norm() / gu.norm();
    std::printf("  [%s] |g_detached - g_unrolled| / |g_unrolled| = %.3f\n", m->name().c_str(), rel);
    EXPECT_GT(rel, 1e-2) << m->name();
    // From the definition: teacher forcing on the window whose inputs are
    // the model's own (free) predictions, computed here with model.rollout.
    MatrixXd q, qd;
    m->rollout(x, w.q.col(0), w.qd.col(0), w.controls, &q, &qd);
    std::vector<VectorXd> states = {recorded_state(w, 0)};
    for (int k = 0; k + 1 < w.steps(); ++k) {
      VectorXd s(4);
      s << q.col(k), qd.col(k);
      states.push_back(s);
    }
    m->loss(x, with_inputs(w, states), TrainingMode::kOneStep, loss_weights(), &g1);
    EXPECT_LT(norm_relative_error(gd, g1), 1e-12) << m->name();
  }
}

TEST(BaselineModels, RolloutIsTheFreeRunOfTheNetwork) {
  MlpStateModel a = make_mlp(true, true), b = make_mlp(false, true);
  LstmStateModel c = make_lstm(true);
  const TrainingWindow w = nonlinear_window(7, true, 12);
  for (int i = 0; i < 3; ++i) {
    WindowModel& m = i == 0 ? static_cast<WindowModel&>(a) : i == 1 ? static_cast<WindowModel&>(b) : c;
    const VectorXd x = test_parameters(m, 13);
    const std::vector<VectorXd> ref = i == 2 ? lstm_states(c.network(x), w, false)
                                             : mlp_states(static_cast<MlpStateModel&>(m).network(x), i == 0, w, false);
    MatrixXd q, qd;
    m.rollout(x, w.q.col(0), w.qd.col(0), w.controls, &q, &qd);
    ASSERT_EQ(q.cols(), 7);
    for (int k = 0; k < 7; ++k) {
      EXPECT_LT((q.col(k) - ref[static_cast<size_t>(k + 1)].head(2)).norm(), 1e-14) << m.name();
      EXPECT_LT((qd.col(k) - ref[static_cast<size_t>(k + 1)].tail(2)).norm(), 1e-14) << m.name();
    }
    // A clone computes the same.
    auto copy = m.clone();
    VectorXd g1, g2;
    EXPECT_EQ(copy->loss(x, w, TrainingMode::kUnrolled, loss_weights(), &g1),
              m.loss(x, w, TrainingMode::kUnrolled, loss_weights(), &g2));
    EXPECT_EQ(g1, g2);
  }
}

TEST(BaselineModels, WarmLossAllocatesNothingAndKeepsNoStateBetweenWindows) {
  MlpStateModel a = make_mlp(true, true);
  LstmStateModel c = make_lstm(true);
  const TrainingWindow w = nonlinear_window(40, true, 14), shorter = nonlinear_window(3, true, 15);
  for (WindowModel* m : std::vector<WindowModel*>{&a, &c}) {
    const VectorXd x = test_parameters(*m, 16);
    VectorXd g, g_again;
    for (TrainingMode mode : kModes) {
      const double L = m->loss(x, w, mode, loss_weights(), &g);
      m->loss(x, shorter, mode, loss_weights(), &g_again);
      EXPECT_EQ(m->loss(x, w, mode, loss_weights(), &g_again), L) << m->name();
      EXPECT_EQ(g_again, g) << m->name();
    }
    if (!testing::AllocationCounter::available()) continue;
    const WindowLossWeights wt = loss_weights();
    m->loss(x, w, TrainingMode::kUnrolled, wt, &g);  // warm at this K
    testing::AllocationCounter counter;
    for (TrainingMode mode : kModes) m->loss(x, w, mode, wt, &g);
    EXPECT_EQ(counter.count(), 0) << m->name() << ": heap allocations in a warm loss()";
  }
}

// ================================================================ normalization

TrajectorySet random_set(int n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  TrajectorySet set;
  for (int t = 0; t < n; ++t) {
    Trajectory tr;
    const int T = 5 + t * 3;
    tr.name = "traj" + std::to_string(t);
    tr.time = VectorXd::LinSpaced(T, 0.0, 0.1 * (T - 1));
    tr.q.resize(T, 2);
    tr.qd.resize(T, 2);
    tr.tau.resize(T, 2);
    for (int k = 0; k < T; ++k) {
      for (int i = 0; i < 2; ++i) {
        tr.q(k, i) = uniform(rng, -1, 3) * (i + 1);
        tr.qd(k, i) = uniform(rng, -5, 5);
        tr.tau(k, i) = uniform(rng, -0.1, 0.2);
      }
    }
    set.trajectories.push_back(tr);
  }
  return set;
}

TEST(BaselineModels, NormalizationStatisticsAreTheDataMomentsWhateverTheOrder) {
  const TrajectorySet set = random_set(6, 31);
  const StateStatistics st = state_statistics(set, 2, 2, true);
  // Reference: all samples with a successor in one list, two-pass moments.
  std::vector<VectorXd> in, next, delta;
  for (const Trajectory& tr : set.trajectories) {
    for (Eigen::Index k = 0; k + 1 < tr.q.rows(); ++k) {
      VectorXd a(6), n(4), x(4);
      a << tr.q.row(k).transpose(), tr.qd.row(k).transpose(), tr.tau.row(k).transpose();
      x << tr.q.row(k).transpose(), tr.qd.row(k).transpose();
      n << tr.q.row(k + 1).transpose(), tr.qd.row(k + 1).transpose();
      in.push_back(a);
      next.push_back(n);
      delta.push_back(n - x);
    }
  }
  auto check = [&](const std::vector<VectorXd>& s, const VectorXd& mean, const VectorXd& sd) {
    VectorXd m = VectorXd::Zero(s[0].size()), v = m;
    for (const auto& x : s) m += x;
    m /= static_cast<double>(s.size());
    for (const auto& x : s) v += (x - m).cwiseAbs2();
    v /= static_cast<double>(s.size());
    EXPECT_LT((mean - m).lpNorm<Eigen::Infinity>(), 1e-12);
    EXPECT_LT((sd - v.cwiseSqrt()).lpNorm<Eigen::Infinity>(), 1e-12);
  };
  EXPECT_EQ(st.samples, static_cast<long long>(in.size()));
  check(in, st.input_mean, st.input_std);
  check(next, st.next_mean, st.next_std);
  check(delta, st.delta_mean, st.delta_std);
  // Bit-identical for every order of the trajectories.
  TrajectorySet perm = set;
  std::vector<int> order = {0, 1, 2, 3, 4, 5};
  std::mt19937_64 rng(3);
  for (int rep = 0; rep < 10; ++rep) {
    std::shuffle(order.begin(), order.end(), rng);
    for (int i = 0; i < 6; ++i) perm.trajectories[static_cast<size_t>(i)] = set.trajectories[static_cast<size_t>(order[static_cast<size_t>(i)])];
    const StateStatistics sp = state_statistics(perm, 2, 2, true);
    EXPECT_EQ(sp.input_mean, st.input_mean);
    EXPECT_EQ(sp.input_std, st.input_std);
    EXPECT_EQ(sp.delta_mean, st.delta_mean);
    EXPECT_EQ(sp.delta_std, st.delta_std);
    EXPECT_EQ(sp.next_std, st.next_std);
  }
  // fit_normalization puts them into the networks.
  MlpStateModel m = make_mlp(true, true);
  m.fit_normalization(set);
  EXPECT_EQ(m.network().input_mean(), st.input_mean);
  EXPECT_EQ(m.network().output_scale(), st.delta_std);
  EXPECT_EQ(m.network().output_offset(), st.delta_mean);
  MlpStateModel d = make_mlp(false, true);
  d.fit_normalization(set);
  EXPECT_EQ(d.network().output_scale(), st.next_std);
  LstmStateModel l = make_lstm(true);
  l.fit_normalization(set);
  EXPECT_EQ(l.network().input_std(), st.input_std);
  EXPECT_EQ(l.network().output_offset(), st.delta_mean);
}

// ================================================================ sizing, names, networks

TEST(BaselineModels, HiddenWidthGivesTheClosestParameterCount) {
  for (bool controls : {true, false}) {
    for (int layers : {1, 2, 3}) {
      for (long long target : {1LL, 50LL, 777LL, 5000LL, 123456LL}) {
        const int h = MlpStateModel::hidden_width_for_parameter_count(target, 3, 2, controls, layers);
        auto count = [&](int w) {
          return MlpStateModel::parameter_count(3, 2, controls, std::vector<int>(static_cast<size_t>(layers), w));
        };
        ASSERT_GE(h, 1);
        EXPECT_LE(std::llabs(count(h) - target), std::llabs(count(h + 1) - target));
        if (h > 1) {
          EXPECT_LE(std::llabs(count(h) - target), std::llabs(count(h - 1) - target));
        }
      }
    }
    for (long long target : {1LL, 300LL, 9999LL, 200000LL}) {
      const int h = LstmStateModel::hidden_width_for_parameter_count(target, 3, 2, controls);
      auto count = [&](int w) { return LstmStateModel::parameter_count(3, 2, controls, w); };
      EXPECT_LE(std::llabs(count(h) - target), std::llabs(count(h + 1) - target));
      if (h > 1) {
        EXPECT_LE(std::llabs(count(h) - target), std::llabs(count(h - 1) - target));
      }
    }
  }
  // The counts are those of the real networks; an exact count gives its width.
  MlpStateModelOptions o;
  o.nq = 3;
  o.nv = 2;
  o.hidden_widths = {37, 37};
  EXPECT_EQ(MlpStateModel(o).num_parameters(), MlpStateModel::parameter_count(3, 2, true, {37, 37}));
  EXPECT_EQ(MlpStateModel::hidden_width_for_parameter_count(MlpStateModel::parameter_count(3, 2, true, {37, 37}), 3,
                                                           2, true, 2),
            37);
  LstmStateModelOptions lo;
  lo.nq = 3;
  lo.nv = 2;
  lo.hidden = 19;
  EXPECT_EQ(LstmStateModel(lo).num_parameters(), LstmStateModel::parameter_count(3, 2, true, 19));
  EXPECT_EQ(LstmStateModel::hidden_width_for_parameter_count(LstmStateModel::parameter_count(3, 2, true, 19), 3, 2,
                                                             true),
            19);
}

TEST(BaselineModels, ParameterNamesAndNetworksForSaving) {
  MlpStateModelOptions o;
  o.nq = 2;
  o.nv = 2;
  o.hidden_widths = {3};
  o.names.q_names = {"shoulder", "elbow"};
  o.names.v_names = {"shoulder", "elbow"};
  MlpStateModel m(o);
  const auto names = m.parameter_names();
  ASSERT_EQ(static_cast<int>(names.size()), m.num_parameters());
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size());
  EXPECT_EQ(names[1], "mlp.layer0.weight(0, 1)");
  EXPECT_EQ(names[static_cast<size_t>(m.network().bias_offset(1))], "mlp.layer1.bias(0)");
  EXPECT_EQ(m.input_names(), (std::vector<std::string>{"q.shoulder", "q.elbow", "qd.shoulder", "qd.elbow",
                                                       "u.shoulder", "u.elbow"}));
  EXPECT_EQ(m.output_names()[3], "delta.qd.elbow");
  // network(x): the stored network with x, ready for io/network_file.
  const VectorXd x_init = m.initial_parameters();
  const VectorXd x = (x_init.array() + 0.5).matrix();
  const nn::Mlp net = m.network(x);
  EXPECT_EQ(VectorXd(Eigen::Map<const VectorXd>(net.parameters(), net.num_parameters())), x);
  EXPECT_EQ(m.initial_parameters(), x_init);  // unchanged
  // set_network: its weights become the initial parameters.
  m.set_network(net);
  EXPECT_EQ(m.initial_parameters(), x);
  EXPECT_THROW(m.set_network(nn::Mlp(6, std::vector<nn::Index>{4}, 4, nn::Activation::kTanh)), InvalidArgument);

  LstmStateModel l = make_lstm(false);
  const auto lnames = l.parameter_names();
  ASSERT_EQ(static_cast<int>(lnames.size()), l.num_parameters());
  EXPECT_EQ(std::set<std::string>(lnames.begin(), lnames.end()).size(), lnames.size());
  EXPECT_EQ(lnames[0], "lstm.weight_ih.i(0, 0)");
  EXPECT_EQ(l.input_names().size(), 4u);
  const nn::Lstm ln = l.network(l.initial_parameters() * 2.0);
  EXPECT_EQ(ln.input_dim(), 4);
  EXPECT_EQ(ln.hidden_size(), 5);
  EXPECT_EQ(ln.output_dim(), 4);
  l.set_network(ln);
  EXPECT_EQ(l.initial_parameters(), VectorXd(Eigen::Map<const VectorXd>(ln.parameters(), ln.num_parameters())));
}

// ================================================================ errors

TEST(BaselineModels, ErrorsSayWhatWasExpected) {
  MlpStateModel m = make_mlp(true, true);
  LstmStateModel l = make_lstm(true);
  for (WindowModel* model : std::vector<WindowModel*>{&m, &l}) {
    const TrainingWindow w = nonlinear_window(3, true, 1);
    const VectorXd x = model->initial_parameters();
    auto expect_message = [&](auto&& f, const std::string& part, bool data_error) {
      try {
        f();
        ADD_FAILURE() << "no exception, expected one with '" << part << "'";
      } catch (const DataError& e) {
        EXPECT_TRUE(data_error) << e.what();
        EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
      } catch (const InvalidArgument& e) {
        EXPECT_FALSE(data_error) << e.what();
        EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
      }
    };
    TrainingWindow bad = w;
    bad.qd.conservativeResize(1, 3);
    expect_message([&] { model->loss(x, bad, TrainingMode::kOneStep, loss_weights(), nullptr); },
                   "qd is 1 x 3, expected 2 x 3", false);
    bad = w;
    bad.controls.resize(0, 3);
    expect_message([&] { model->loss(x, bad, TrainingMode::kOneStep, loss_weights(), nullptr); },
                   "controls is 0 x 3, expected 2 x 3", false);
    bad = w;
    bad.q_next(1, 2) = std::nan("");
    expect_message([&] { model->loss(x, bad, TrainingMode::kUnrolled, loss_weights(), nullptr); },
                   "q_next(1, 2) is not finite", true);
    expect_message([&] { model->loss(VectorXd::Zero(3), w, TrainingMode::kOneStep, loss_weights(), nullptr); },
                   "has size 3, expected " + std::to_string(model->num_parameters()), false);
    VectorXd xn = x;
    xn[2] = INFINITY;
    expect_message([&] { model->loss(xn, w, TrainingMode::kOneStep, loss_weights(), nullptr); },
                   "parameter 2 is not finite", false);
    WindowLossWeights wt = loss_weights();
    wt.wqd.resize(3);
    expect_message([&] { model->loss(x, w, TrainingMode::kOneStep, wt, nullptr); }, "expected 2, 2", false);
    MatrixXd q, qd;
    expect_message([&] { model->rollout(x, VectorXd::Zero(3), VectorXd::Zero(2), w.controls, &q, &qd); },
                   "expected 2, 2", false);
    expect_message([&] { model->rollout(x, VectorXd::Zero(2), VectorXd::Constant(2, NAN), w.controls, &q, &qd); },
                   "qd0 0 is not finite", true);
  }
  TrajectorySet set = random_set(2, 1);
  set.trajectories[1].tau.resize(0, 0);
  EXPECT_THROW(m.fit_normalization(set), DataError);
  set = random_set(2, 1);
  set.trajectories[0].qd(2, 1) = NAN;
  try {
    state_statistics(set, 2, 2, false);
    ADD_FAILURE();
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("trajectory 0 ('traj0'): qd(2, 1) is not finite"), std::string::npos)
        << e.what();
  }
  MlpStateModelOptions o;
  o.nq = 2;
  o.nv = 1;
  o.hidden_widths = {0};
  EXPECT_THROW(MlpStateModel{o}, InvalidArgument);
}

// ================================================================ learning

// Full-batch L-BFGS (Nocedal & Wright 2006, alg. 7.4/7.5, memory 10) with a
// backtracking Armijo line search: the test's own optimizer (the library's
// trainer is not used here).
template <class F>
VectorXd lbfgs(VectorXd x, F&& f, int iterations) {
  VectorXd g;
  double fx = f(x, &g);
  std::deque<VectorXd> S, Y;
  for (int it = 0; it < iterations; ++it) {
    VectorXd d = -g;
    std::vector<double> alpha(S.size());
    for (int i = static_cast<int>(S.size()) - 1; i >= 0; --i) {
      alpha[static_cast<size_t>(i)] = S[static_cast<size_t>(i)].dot(d) / Y[static_cast<size_t>(i)].dot(S[static_cast<size_t>(i)]);
      d -= alpha[static_cast<size_t>(i)] * Y[static_cast<size_t>(i)];
    }
    if (!S.empty()) d *= S.back().dot(Y.back()) / Y.back().squaredNorm();
    for (size_t i = 0; i < S.size(); ++i) {
      const double beta = Y[i].dot(d) / Y[i].dot(S[i]);
      d += (alpha[i] - beta) * S[i];
    }
    if (g.dot(d) >= 0) {
      d = -g;
      S.clear();
      Y.clear();
    }
    double t = S.empty() ? std::min(1.0, 1.0 / g.lpNorm<Eigen::Infinity>()) : 1.0;
    VectorXd xn, gn;
    double fn = 0;
    int k = 0;
    for (; k < 40; ++k) {
      xn = x + t * d;
      fn = f(xn, &gn);
      if (fn <= fx + 1e-4 * t * g.dot(d)) break;
      t *= 0.5;
    }
    if (k == 40) break;
    const VectorXd s = xn - x, y = gn - g;
    if (s.dot(y) > 1e-12 * s.norm() * y.norm()) {
      S.push_back(s);
      Y.push_back(y);
      if (S.size() > 10) {
        S.pop_front();
        Y.pop_front();
      }
    }
    x = xn;
    fx = fn;
    g = gn;
    if (g.lpNorm<Eigen::Infinity>() < 1e-12) break;
  }
  return x;
}

// Data of a damped oscillator with a force input, q̈ = −4q − 0.4q̇ + u,
// semi-implicit Euler, dt = 0.05: a linear map x_{k+1} = A x_k + B u_k.
TrajectorySet linear_system_data(int n, std::mt19937_64& rng) {
  TrajectorySet set;
  for (int t = 0; t < n; ++t) {
    Trajectory tr;
    const int T = 61;
    tr.time = VectorXd::LinSpaced(T, 0.0, 3.0);
    tr.q.resize(T, 1);
    tr.qd.resize(T, 1);
    tr.tau.resize(T, 1);
    double q = uniform(rng, -1, 1), qd = uniform(rng, -1, 1);
    for (int k = 0; k < T; ++k) {
      const double u = uniform(rng, -2, 2);
      tr.q(k, 0) = q;
      tr.qd(k, 0) = qd;
      tr.tau(k, 0) = u;
      qd += 0.05 * (-4.0 * q - 0.4 * qd + u);
      q += 0.05 * qd;
    }
    set.trajectories.push_back(tr);
  }
  return set;
}

// Consecutive non-overlapping windows of K steps.
std::vector<TrainingWindow> cut_windows(const TrajectorySet& set, int K) {
  std::vector<TrainingWindow> out;
  for (size_t t = 0; t < set.trajectories.size(); ++t) {
    const Trajectory& tr = set.trajectories[t];
    for (int s = 0; s + K < tr.size(); s += K) {
      TrainingWindow w;
      w.trajectory = static_cast<int>(t);
      w.start = s;
      w.q = tr.q.block(s, 0, K, 1).transpose();
      w.qd = tr.qd.block(s, 0, K, 1).transpose();
      w.controls = tr.tau.block(s, 0, K, 1).transpose();
      w.q_next = tr.q.block(s + 1, 0, K, 1).transpose();
      w.qd_next = tr.qd.block(s + 1, 0, K, 1).transpose();
      out.push_back(w);
    }
  }
  return out;
}

struct LearningResult {
  double one_step_before, one_step_after, unrolled_before, unrolled_after, seconds;
};

// Trains `model` (normalization already fit) on windows of the training set
// in `mode` by full-batch L-BFGS; validation losses (one-step windows of 10,
// unrolled windows of 30 steps on held-out trajectories) before and after.
LearningResult train_on_linear_system(WindowModel& model, const TrajectorySet& train, const TrajectorySet& valid,
                                      TrainingMode mode, int iterations) {
  const std::vector<TrainingWindow> tw = cut_windows(train, 10), vw = cut_windows(valid, 10),
                                    vw_long = cut_windows(valid, 30);
  const StateStatistics st = state_statistics(train, 1, 1, true);
  WindowLossWeights wt;
  wt.wq = VectorXd::Constant(1, 1.0 / (st.input_std[0] * st.input_std[0]));
  wt.wqd = VectorXd::Constant(1, 1.0 / (st.input_std[1] * st.input_std[1]));
  auto mean_loss = [&](const std::vector<TrainingWindow>& ws, TrainingMode m, const VectorXd& x, VectorXd* grad) {
    double L = 0.0;
    VectorXd g;
    if (grad) grad->setZero(x.size());
    for (const auto& w : ws) {
      L += model.loss(x, w, m, wt, grad ? &g : nullptr);
      if (grad) *grad += g;
    }
    if (grad) *grad /= static_cast<double>(ws.size());
    return L / static_cast<double>(ws.size());
  };
  const VectorXd x0 = model.initial_parameters();
  LearningResult r{};
  r.one_step_before = mean_loss(vw, TrainingMode::kOneStep, x0, nullptr);
  r.unrolled_before = mean_loss(vw_long, TrainingMode::kUnrolled, x0, nullptr);
  const auto start = std::chrono::steady_clock::now();
  const VectorXd x = lbfgs(
      x0, [&](const VectorXd& p, VectorXd* g) { return mean_loss(tw, mode, p, g); }, iterations);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.one_step_after = mean_loss(vw, TrainingMode::kOneStep, x, nullptr);
  r.unrolled_after = mean_loss(vw_long, TrainingMode::kUnrolled, x, nullptr);
  std::printf("  [%s trained %s on a linear system] %d params, %zu windows of 10: validation one-step loss "
              "%.3e -> %.3e (%.0fx), 30-step unrolled %.3e -> %.3e (%.0fx), %d L-BFGS iterations %.2f s\n",
              model.name().c_str(), training_mode_name(mode), model.num_parameters(), tw.size(), r.one_step_before,
              r.one_step_after, r.one_step_before / r.one_step_after, r.unrolled_before, r.unrolled_after,
              r.unrolled_before / r.unrolled_after, iterations, r.seconds);
  return r;
}

TEST(BaselineModels, MlpDeltaModelLearnsALinearSystem) {
  std::mt19937_64 rng(2026);
  const TrajectorySet train = linear_system_data(8, rng), valid = linear_system_data(4, rng);
  MlpStateModelOptions o;
  o.nq = 1;
  o.nv = 1;
  o.hidden_widths = {16, 16};
  o.seed = 7;
  for (TrainingMode mode : {TrainingMode::kOneStep, TrainingMode::kUnrolled}) {
    MlpStateModel model(o);
    model.fit_normalization(train);
    const LearningResult r = train_on_linear_system(model, train, valid, mode, 300);
    EXPECT_LT(r.one_step_after, r.one_step_before / 10) << training_mode_name(mode);
    EXPECT_LT(r.unrolled_after, r.unrolled_before / 10) << training_mode_name(mode);
  }
}

TEST(BaselineModels, LstmModelLearnsALinearSystem) {
  std::mt19937_64 rng(2027);
  const TrajectorySet train = linear_system_data(8, rng), valid = linear_system_data(4, rng);
  LstmStateModelOptions o;
  o.nq = 1;
  o.nv = 1;
  o.hidden = 8;
  o.seed = 3;
  LstmStateModel model(o);
  model.fit_normalization(train);
  const LearningResult r = train_on_linear_system(model, train, valid, TrainingMode::kOneStep, 200);
  EXPECT_LT(r.one_step_after, r.one_step_before / 10);
  EXPECT_LT(r.unrolled_after, r.unrolled_before / 10);
}

}  // namespace
}  // namespace neuralsim::baseline_models_test
