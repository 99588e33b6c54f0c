// nn::Lstm against mathematics: one step computed by hand from the gate
// equations (Graves 2013 / PyTorch nn.LSTM, no peepholes) with the
// documented flat layout; backward through time against central finite
// differences (Richardson-extrapolated) of the forward pass for every
// parameter, every input of every step and the initial (h, c); the
// step-by-step and single-step APIs against the sequence API; seeded
// initialization (bounds, forget bias, reproducibility, moments); no heap
// use per step; error reporting.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/nn/lstm.hpp"
#include "neuralsim/nn/mlp.hpp"
#include "support/allocation_counter.hpp"

// Own namespace: unity builds put test files in one translation unit.
namespace neuralsim::nn::lstm_test {
namespace {

using neuralsim::testing::AllocationCounter;
using Vec = std::vector<double>;

double uniform(std::mt19937_64& rng, double lo, double hi) {
  return lo + (hi - lo) * random::uniform01(rng);
}

// A network with every part away from identity: seeded weights, random
// forget biases, normalization and scaling.
Lstm random_lstm(Index nx, Index H, Index ny, std::uint64_t seed) {
  Lstm net(nx, H, ny);
  std::mt19937_64 rng(seed);
  net.initialize(rng, 1.0);
  Vec p(net.parameter_vector());
  // Larger weights than the init, so the gates are not all near 0.5.
  for (double& v : p) v *= 2.5;
  net.set_parameters(p.data());
  Eigen::VectorXd mean(nx), sd(nx), scale(ny), offset(ny);
  for (Index i = 0; i < nx; ++i) {
    mean[i] = uniform(rng, -1, 1);
    sd[i] = uniform(rng, 0.5, 2);
  }
  for (Index i = 0; i < ny; ++i) {
    scale[i] = uniform(rng, 0.5, 2) * (i % 2 ? -1 : 1);
    offset[i] = uniform(rng, -1, 1);
  }
  net.set_input_normalization(mean, sd);
  net.set_output_scaling(scale, offset);
  return net;
}

double norm_relative_error(const Vec& a, const Vec& b) {
  double err = 0.0, scale = 0.0;
  for (size_t k = 0; k < a.size(); ++k) {
    err = std::max(err, std::abs(a[k] - b[k]));
    scale = std::max(scale, std::abs(b[k]));
  }
  return scale > 0.0 ? err / scale : err;
}

// Everything the scalar objective depends on.
struct Problem {
  Lstm net;
  Index T = 0;
  Vec inputs, h0, c0;        // nx·T, H, H
  Vec gy, gh, gc;            // cotangents: ny·T, H, H
};

// L = Σ_t gy_tᵀ y_t + ghᵀ h_{T−1} + gcᵀ c_{T−1}, by the forward pass only.
double objective(const Problem& p, const Lstm& net, const Vec& inputs, const Vec& h0, const Vec& c0) {
  LstmWorkspace ws(net, p.T);
  Vec y(static_cast<size_t>(net.output_dim() * p.T));
  net.forward(inputs.data(), p.T, h0.data(), c0.data(), y.data(), ws);
  double L = 0.0;
  for (size_t k = 0; k < y.size(); ++k) L += p.gy[k] * y[k];
  for (Index j = 0; j < net.hidden_size(); ++j) {
    L += p.gh[j] * ws.hidden(p.T - 1)[j] + p.gc[j] * ws.cell(p.T - 1)[j];
  }
  return L;
}

// Richardson-extrapolated central difference of f along one scalar v:
// (4 D(h/2) − D(h)) / 3, error O(h⁴).
template <class F>
double fd(double& v, double h, F&& f) {
  const double v0 = v;
  auto D = [&](double s) {
    v = v0 + s;
    const double fp = f();
    v = v0 - s;
    const double fm = f();
    v = v0;
    return (fp - fm) / (2 * s);
  };
  return (4 * D(h / 2) - D(h)) / 3;
}

Problem random_problem(Index nx, Index H, Index ny, Index T, std::uint64_t seed) {
  Problem p;
  p.net = random_lstm(nx, H, ny, seed);
  p.T = T;
  std::mt19937_64 rng(seed + 100);
  auto fill = [&](Vec& v, size_t n, double r) {
    v.resize(n);
    for (double& x : v) x = uniform(rng, -r, r);
  };
  fill(p.inputs, static_cast<size_t>(nx * T), 2.0);
  fill(p.h0, static_cast<size_t>(H), 0.8);
  fill(p.c0, static_cast<size_t>(H), 1.5);
  fill(p.gy, static_cast<size_t>(ny * T), 1.0);
  fill(p.gh, static_cast<size_t>(H), 1.0);
  fill(p.gc, static_cast<size_t>(H), 1.0);
  return p;
}

// ================================================================ forward

TEST(Lstm, OneStepByHandFromTheGateEquations) {
  // n_x = 2, H = 1, n_y = 2: every flat entry named by the documented layout.
  Lstm net(2, 1, 2);
  // W_x (4×2): rows i, f, g, o. W_h (4×1). b (4). W_y (2×1). b_y (2).
  const Vec p = {0.3, -0.2,  0.5, 0.1,  -0.4, 0.7,  0.2, 0.25,   // W_x
                 0.6, -0.3, 0.8, -0.5,                           // W_h
                 0.1, 0.9, -0.2, 0.05,                           // b
                 1.5, -0.7,                                      // W_y
                 0.2, -0.1};                                     // b_y
  ASSERT_EQ(net.num_parameters(), static_cast<Index>(p.size()));
  net.set_parameters(p.data());
  Eigen::VectorXd mean(2), sd(2), scale(2), offset(2);
  mean << 0.5, -1.0;
  sd << 2.0, 0.5;
  scale << 3.0, -2.0;
  offset << 0.25, 1.0;
  net.set_input_normalization(mean, sd);
  net.set_output_scaling(scale, offset);
  EXPECT_EQ(net.parameter_name(1), "weight_ih.i(0, 1)");
  EXPECT_EQ(net.parameter_name(3), "weight_ih.f(0, 1)");
  EXPECT_EQ(net.parameter_name(9), "weight_hh.f(0, 0)");
  EXPECT_EQ(net.parameter_name(14), "bias.g(0)");
  EXPECT_EQ(net.parameter_name(17), "weight_out(1, 0)");
  EXPECT_EQ(net.parameter_name(19), "bias_out(1)");

  const double x[2] = {1.3, -0.6}, h0 = 0.4, c0 = -0.9;
  const double x0 = (1.3 - 0.5) / 2.0, x1 = (-0.6 + 1.0) / 0.5;
  auto sig = [](double z) { return 1.0 / (1.0 + std::exp(-z)); };
  const double i = sig(0.3 * x0 - 0.2 * x1 + 0.6 * h0 + 0.1);
  const double f = sig(0.5 * x0 + 0.1 * x1 - 0.3 * h0 + 0.9);
  const double g = std::tanh(-0.4 * x0 + 0.7 * x1 + 0.8 * h0 - 0.2);
  const double o = sig(0.2 * x0 + 0.25 * x1 - 0.5 * h0 + 0.05);
  const double c = f * c0 + i * g;
  const double h = o * std::tanh(c);
  const double y0 = 3.0 * (1.5 * h + 0.2) + 0.25;
  const double y1 = -2.0 * (-0.7 * h - 0.1) + 1.0;

  LstmWorkspace ws(net, 1);
  double hn = 0, cn = 0, y[2] = {0, 0};
  net.step(&h0, &c0, x, &hn, &cn, y, ws);
  EXPECT_NEAR(hn, h, 1e-15);
  EXPECT_NEAR(cn, c, 1e-15);
  EXPECT_NEAR(y[0], y0, 1e-14);
  EXPECT_NEAR(y[1], y1, 1e-14);
  EXPECT_NEAR(ws.gates(0)[0], i, 1e-15);
  EXPECT_NEAR(ws.gates(0)[1], f, 1e-15);
  EXPECT_NEAR(ws.gates(0)[2], g, 1e-15);
  EXPECT_NEAR(ws.gates(0)[3], o, 1e-15);
  // The state can be updated in place.
  double hs = h0, cs = c0;
  net.step(&hs, &cs, x, &hs, &cs, y, ws);
  EXPECT_EQ(hs, hn);
  EXPECT_EQ(cs, cn);
}

TEST(Lstm, StepByStepAndSingleStepsEqualTheSequencePass) {
  const Problem p = random_problem(3, 5, 2, 7, 11);
  const Lstm& net = p.net;
  LstmWorkspace a(net, p.T), b(net, 2 * p.T);
  Vec ya(static_cast<size_t>(2 * p.T)), yb(ya.size()), yc(ya.size());
  net.forward(p.inputs.data(), p.T, p.h0.data(), p.c0.data(), ya.data(), a);
  net.begin(p.h0.data(), p.c0.data(), b);
  for (Index t = 0; t < p.T; ++t) net.forward_step(p.inputs.data() + 3 * t, yb.data() + 2 * t, b);
  Vec h = p.h0, c = p.c0;
  LstmWorkspace s(net, 1);
  for (Index t = 0; t < p.T; ++t) {
    net.step(h.data(), c.data(), p.inputs.data() + 3 * t, h.data(), c.data(), yc.data() + 2 * t, s);
  }
  EXPECT_EQ(ya, yb);
  EXPECT_EQ(ya, yc);
  for (Index j = 0; j < 5; ++j) {
    EXPECT_EQ(h[static_cast<size_t>(j)], a.hidden(p.T - 1)[j]);
    EXPECT_EQ(c[static_cast<size_t>(j)], a.cell(p.T - 1)[j]);
  }
}

// ================================================================ backward

TEST(Lstm, BackwardThroughTimeMatchesFiniteDifferences) {
  for (auto [nx, H, ny, T, seed] : {std::tuple<Index, Index, Index, Index, std::uint64_t>{3, 4, 2, 6, 1},
                                    {1, 1, 1, 1, 2},
                                    {2, 7, 3, 9, 3}}) {
    SCOPED_TRACE("nx " + std::to_string(nx) + ", H " + std::to_string(H) + ", ny " +
                 std::to_string(ny) + ", T " + std::to_string(T));
    Problem p = random_problem(nx, H, ny, T, seed);
    const Lstm& net = p.net;
    LstmWorkspace ws(net, T);
    Vec y(static_cast<size_t>(ny * T));
    net.forward(p.inputs.data(), T, p.h0.data(), p.c0.data(), y.data(), ws);
    Vec gp(static_cast<size_t>(net.num_parameters()), 0.0), gx(p.inputs.size()), gh0(p.h0.size()),
        gc0(p.c0.size());
    net.backward(p.gy.data(), p.gh.data(), p.gc.data(), gp.data(), gx.data(), gh0.data(), gc0.data(), ws);

    const double h = 1e-4;
    Vec params = net.parameter_vector();
    Lstm probe = net;
    Vec fp(gp.size());
    for (size_t k = 0; k < params.size(); ++k) {
      fp[k] = fd(params[k], h, [&] {
        probe.set_parameters(params.data());
        return objective(p, probe, p.inputs, p.h0, p.c0);
      });
    }
    Vec inputs = p.inputs, h0 = p.h0, c0 = p.c0, fx(gx.size()), fh(gh0.size()), fc(gc0.size());
    auto f = [&] { return objective(p, net, inputs, h0, c0); };
    for (size_t k = 0; k < inputs.size(); ++k) fx[k] = fd(inputs[k], h, f);
    for (size_t k = 0; k < h0.size(); ++k) fh[k] = fd(h0[k], h, f);
    for (size_t k = 0; k < c0.size(); ++k) fc[k] = fd(c0[k], h, f);

    const double ep = norm_relative_error(gp, fp), ex = norm_relative_error(gx, fx),
                 eh = norm_relative_error(gh0, fh), ec = norm_relative_error(gc0, fc);
    std::printf("  [lstm BPTT vs FD] params %.1e, inputs %.1e, h0 %.1e, c0 %.1e\n", ep, ex, eh, ec);
    EXPECT_LT(ep, 1e-6);
    EXPECT_LT(ex, 1e-6);
    EXPECT_LT(eh, 1e-6);
    EXPECT_LT(ec, 1e-6);

    // The gradient accumulates into grad_params; step-by-step = whole pass.
    Vec gp2(gp.size(), 1.0), gx2(gx.size());
    net.forward(p.inputs.data(), T, p.h0.data(), p.c0.data(), y.data(), ws);
    net.begin_backward(p.gh.data(), p.gc.data(), ws);
    for (Index t = T - 1; t >= 0; --t) {
      EXPECT_EQ(net.backward_step(p.gy.data() + ny * t, gx2.data() + nx * t, gp2.data(), ws), t);
    }
    Vec gh2(gh0.size()), gc2(gc0.size());
    net.end_backward(gh2.data(), gc2.data(), ws);
    // (accumulated step by step into 1: equal up to the rounding of the sums)
    for (size_t k = 0; k < gp.size(); ++k) EXPECT_NEAR(gp2[k], 1.0 + gp[k], 1e-14 * (1.0 + std::abs(gp[k])));
    EXPECT_EQ(gx2, gx);
    EXPECT_EQ(gh2, gh0);
    EXPECT_EQ(gc2, gc0);
  }
}

// ================================================================ initialization

TEST(Lstm, SeededInitializationIsReproducibleBoundedAndSetsTheForgetBias) {
  const Index nx = 6, H = 32, ny = 4;
  Lstm a(nx, H, ny), b(nx, H, ny), c(nx, H, ny), d(nx, H, ny);
  std::mt19937_64 ra(42), rb(42), rc(43), rd(42);
  a.initialize(ra);
  b.initialize(rb);
  c.initialize(rc);
  d.initialize(rd, std::nan(""));
  EXPECT_EQ(a.parameter_vector(), b.parameter_vector());
  EXPECT_NE(a.parameter_vector(), c.parameter_vector());
  const double k = 1.0 / std::sqrt(static_cast<double>(H));
  double sum = 0.0, sq = 0.0;
  long n = 0;
  for (Index i = 0; i < a.num_parameters(); ++i) {
    const double v = a.parameters()[i];
    const bool forget_bias = i >= a.bias_offset() + H && i < a.bias_offset() + 2 * H;
    if (forget_bias) {
      EXPECT_EQ(v, 1.0) << a.parameter_name(i);
      EXPECT_LE(std::abs(d.parameters()[i]), k);  // NaN: the drawn value is kept
      EXPECT_NE(d.parameters()[i], 1.0);
      continue;
    }
    EXPECT_EQ(v, d.parameters()[i]);
    EXPECT_LE(std::abs(v), k) << a.parameter_name(i);
    sum += v;
    sq += v * v;
    ++n;
  }
  // U(−k, k): mean 0, variance k²/3; n ≈ 5 400 draws, 5-sigma bounds.
  const double mean = sum / n, var = sq / n - mean * mean;
  EXPECT_LT(std::abs(mean), 5 * k / std::sqrt(3.0 * n));
  EXPECT_NEAR(var, k * k / 3, 5 * k * k * std::sqrt(4.0 / 45.0 / n));
  // Draws in flat order, as random::uniform01: the first entry by hand.
  std::mt19937_64 r(42);
  EXPECT_EQ(a.parameters()[0], k * std::fma(2.0, random::uniform01(r), -1.0));
}

// ================================================================ memory

TEST(Lstm, NoHeapAllocationPerStepOnceSized) {
  if (!AllocationCounter::available()) GTEST_SKIP() << "allocation counting needs glibc, no sanitizer";
  const Problem p = random_problem(4, 16, 3, 64, 5);
  const Lstm& net = p.net;
  LstmWorkspace ws(net, 64);
  Vec y(3 * 64), gp(static_cast<size_t>(net.num_parameters())), gx(p.inputs.size()), gh(16), gc(16);
  Vec h(16, 0.0), c(16, 0.0), out(3);
  auto run = [&](Index T) {
    AllocationCounter counter;
    net.forward(p.inputs.data(), T, p.h0.data(), p.c0.data(), y.data(), ws);
    net.backward(p.gy.data(), p.gh.data(), p.gc.data(), gp.data(), gx.data(), gh.data(), gc.data(), ws);
    net.begin(nullptr, nullptr, ws);
    for (Index t = 0; t < T; ++t) net.forward_step(p.inputs.data() + 4 * t, y.data() + 3 * t, ws);
    for (Index t = 0; t < T; ++t) net.step(h.data(), c.data(), p.inputs.data() + 4 * t, h.data(), c.data(), out.data(), ws);
    ws.reserve(net, 32);  // fits already: no allocation
    return counter.count();
  };
  EXPECT_EQ(run(8), 0);
  EXPECT_EQ(run(64), 0);
}

// ================================================================ errors

TEST(Lstm, ErrorsNameWhatIsWrong) {
  Problem p = random_problem(2, 3, 1, 4, 7);
  Lstm& net = p.net;
  LstmWorkspace ws(net, 4);
  Vec y(4);
  EXPECT_THROW(Lstm(0, 3, 1), InvalidArgument);
  // Backward before any forward pass, and after the weights changed.
  EXPECT_THROW(net.begin_backward(nullptr, nullptr, ws), InvalidArgument);
  net.forward(p.inputs.data(), 4, nullptr, nullptr, y.data(), ws);
  Vec params = net.parameter_vector();
  net.set_parameters(params.data());
  EXPECT_THROW(net.begin_backward(nullptr, nullptr, ws), InvalidArgument);
  // Too many steps for the workspace; a workspace of another shape.
  EXPECT_THROW(net.forward(p.inputs.data(), 5, nullptr, nullptr, y.data(), ws), InvalidArgument);
  const Lstm other(2, 4, 1);
  EXPECT_THROW(other.begin(nullptr, nullptr, ws), InvalidArgument);
  // Non-finite values.
  Vec bad = p.inputs;
  bad[3] = std::nan("");
  try {
    net.forward(bad.data(), 4, nullptr, nullptr, y.data(), ws);
    ADD_FAILURE() << "no exception for a NaN input";
  } catch (const NumericalError& e) {
    EXPECT_NE(std::string(e.what()).find("input 1 of step 1"), std::string::npos) << e.what();
  }
  params[net.hidden_weight_offset() + 2] = INFINITY;
  try {
    net.set_parameters(params.data());
    ADD_FAILURE() << "no exception for an infinite weight";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("weight_hh.i(0, 2)"), std::string::npos) << e.what();
  }
  // Backward steps beyond the recorded ones; end before all are processed.
  net.forward(p.inputs.data(), 2, nullptr, nullptr, y.data(), ws);
  net.begin_backward(nullptr, nullptr, ws);
  net.backward_step(nullptr, nullptr, nullptr, ws);
  EXPECT_THROW(net.end_backward(nullptr, nullptr, ws), InvalidArgument);
  net.backward_step(nullptr, nullptr, nullptr, ws);
  EXPECT_THROW(net.backward_step(nullptr, nullptr, nullptr, ws), InvalidArgument);
  net.end_backward(nullptr, nullptr, ws);
}

}  // namespace
}  // namespace neuralsim::nn::lstm_test
