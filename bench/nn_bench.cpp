// Throughput of nn::Mlp (lib/neuralsim/nn/mlp.hpp): forward and backward for
// the network sizes used inside the dynamics, next to a plain Eigen
// matrix–vector product chain of the same shapes as a lower bound.
//
// How to run (Release build; the machine is shared, so nice it and repeat):
//   nice -n 10 ninja -j1 bench_nn
//   nice -n 10 ./bench/bench_nn --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//   (one size: --benchmark_filter='^3x256/')
//
// Rows, grouped by size "<hidden layers>x<width>" (12 inputs, 6 outputs):
//   <size>/forward/mlp_tanh       Mlp::forward<double>: normalization, W·a + b,
//                                 tanh hidden units, identity output, scaling
//   <size>/forward/mlp_relu       the same with relu hidden units
//   <size>/forward/eigen_chain    lower bound: only the products W_l·a_l
//                                 (no bias, activation, normalization, checks)
//   <size>/backward/mlp_tanh      Mlp::backward: ∂L/∂x and ∂L/∂θ (accumulated)
//                                 through the cached tanh forward pass
//   <size>/backward/mlp_tanh_input_only   ∂L/∂x only (no parameter gradient)
//   <size>/backward/eigen_chain   lower bound: W_lᵀ·δ and δ·a_lᵀ per layer
// items_per_second is network evaluations per second.
#include <benchmark/benchmark.h>

#include <Eigen/Core>
#include <random>
#include <string>
#include <vector>

#include "neuralsim/nn/mlp.hpp"

namespace {

using neuralsim::nn::Activation;
using neuralsim::nn::Index;
using neuralsim::nn::Init;
using neuralsim::nn::Mlp;
using neuralsim::nn::RowMatrixXd;
using neuralsim::nn::Workspace;

constexpr Index kInputs = 12;
constexpr Index kOutputs = 6;

struct Size {
  int hidden_layers;
  Index width;
};

Mlp make_network(const Size& s, Activation hidden) {
  Mlp net(kInputs, std::vector<Index>(static_cast<size_t>(s.hidden_layers), s.width), kOutputs, hidden);
  std::mt19937_64 rng(1);
  net.initialize(hidden == Activation::kRelu ? Init::kHeNormal : Init::kXavierNormal, rng);
  return net;
}

std::vector<double> test_input() {
  std::vector<double> x(kInputs);
  for (Index i = 0; i < kInputs; ++i) x[i] = 0.1 * static_cast<double>(i) - 0.5;
  return x;
}

void forward_mlp(benchmark::State& state, Size s, Activation hidden) {
  const Mlp net = make_network(s, hidden);
  Workspace<double> ws(net);
  const std::vector<double> x = test_input();
  std::vector<double> y(kOutputs);
  for (auto _ : state) {
    net.forward(x.data(), y.data(), ws);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
}

void backward_mlp(benchmark::State& state, Size s, bool with_params) {
  const Mlp net = make_network(s, Activation::kTanh);
  Workspace<double> ws(net);
  const std::vector<double> x = test_input();
  std::vector<double> y(kOutputs), g(kOutputs, 1.0), gx(kInputs),
      gp(static_cast<size_t>(net.num_parameters()), 0.0);
  net.forward(x.data(), y.data(), ws);  // backward reuses this cached pass
  for (auto _ : state) {
    net.backward(g.data(), gx.data(), with_params ? gp.data() : nullptr, ws);
    benchmark::DoNotOptimize(gx.data());
    benchmark::DoNotOptimize(gp.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
}

// The matrices of a network of size `s`, random.
std::vector<RowMatrixXd> chain_matrices(const Size& s) {
  std::vector<Index> dims = {kInputs};
  for (int l = 0; l < s.hidden_layers; ++l) dims.push_back(s.width);
  dims.push_back(kOutputs);
  std::vector<RowMatrixXd> W;
  for (size_t l = 0; l + 1 < dims.size(); ++l) {
    W.push_back(RowMatrixXd::Random(dims[l + 1], dims[l]) * 0.1);
  }
  return W;
}

void forward_eigen(benchmark::State& state, Size s) {
  const std::vector<RowMatrixXd> W = chain_matrices(s);
  std::vector<Eigen::VectorXd> a = {Eigen::VectorXd::LinSpaced(kInputs, -0.5, 0.6)};
  for (const RowMatrixXd& m : W) a.push_back(Eigen::VectorXd::Zero(m.rows()));
  for (auto _ : state) {
    for (size_t l = 0; l < W.size(); ++l) a[l + 1].noalias() = W[l] * a[l];
    benchmark::DoNotOptimize(a.back().data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
}

void backward_eigen(benchmark::State& state, Size s) {
  const std::vector<RowMatrixXd> W = chain_matrices(s);
  std::vector<RowMatrixXd> dW;
  std::vector<Eigen::VectorXd> a = {Eigen::VectorXd::LinSpaced(kInputs, -0.5, 0.6)};
  for (const RowMatrixXd& m : W) {
    a.push_back(Eigen::VectorXd::Constant(m.rows(), 0.3));
    dW.push_back(RowMatrixXd::Zero(m.rows(), m.cols()));
  }
  std::vector<Eigen::VectorXd> g(a.size());
  for (size_t l = 0; l < a.size(); ++l) g[l] = Eigen::VectorXd::Zero(a[l].size());
  g.back().setOnes();
  for (auto _ : state) {
    for (size_t l = W.size(); l-- > 0;) {
      dW[l].noalias() += g[l + 1] * a[l].transpose();
      g[l].noalias() = W[l].transpose() * g[l + 1];
    }
    benchmark::DoNotOptimize(g.front().data());
    benchmark::DoNotOptimize(dW.front().data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
}

const Size kSizes[] = {{2, 16}, {2, 32}, {2, 64}, {3, 64}, {2, 128}, {3, 128}, {2, 256}, {3, 256}};

int register_all() {
  for (const Size& s : kSizes) {
    const std::string p = std::to_string(s.hidden_layers) + "x" + std::to_string(s.width) + "/";
    benchmark::RegisterBenchmark((p + "forward/mlp_tanh").c_str(), forward_mlp, s, Activation::kTanh);
    benchmark::RegisterBenchmark((p + "forward/mlp_relu").c_str(), forward_mlp, s, Activation::kRelu);
    benchmark::RegisterBenchmark((p + "forward/eigen_chain").c_str(), forward_eigen, s);
    benchmark::RegisterBenchmark((p + "backward/mlp_tanh").c_str(), backward_mlp, s, true);
    benchmark::RegisterBenchmark((p + "backward/mlp_tanh_input_only").c_str(), backward_mlp, s, false);
    benchmark::RegisterBenchmark((p + "backward/eigen_chain").c_str(), backward_eigen, s);
  }
  return 0;
}

const int registered = register_all();

}  // namespace

BENCHMARK_MAIN();
