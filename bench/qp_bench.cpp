// QpSolver (Goldfarb-Idnani) on the QP of convex MPC for a quadruped
// (J. Di Carlo et al., "Dynamic locomotion in the MIT Cheetah 3 through
// convex model-predictive control", IROS 2018): ground reaction forces of
// the 4 feet over the horizon, 12·horizon variables, a friction pyramid
// (μ = 0.6, 4 rows per stance foot and step) and 0 ≤ f_z ≤ f_max; swing
// feet have their forces fixed to 0 (bounds with x_lower = x_upper = 0).
//
// H and g are those of the condensed MPC of that paper: the centroidal
// dynamics linearized at zero roll/pitch/yaw, x = [Θ p ω v], discretized
// with dt = 0.03 s, X = A_qp x0 + B_qp U + c_qp, and
//   H = 2 (B_qpᵀ Q̄ B_qp + α I),  g = 2 B_qpᵀ Q̄ (A_qp x0 + c_qp - X_ref)
// with state weights and α = 4e-5 of the size used in MIT's open-source
// convex MPC (any SPD H of this shape and conditioning serves here). The robot (mini-cheetah mass and
// inertia) starts at rest and follows an agile command (v_x, v_y and yaw
// rate swinging with ±2 m/s, ±0.8 m/s, ±1.5 rad/s amplitudes), so that
// friction rows and f_z bounds are active.
//
// Every benchmark solves a sequence of consecutive MPC problems: the
// states x0 come from a closed-loop rollout (the first force of each
// solution applied to the linear model, plus small noise), so g changes from
// one solve to the next exactly as in the controller; H, C and the contact
// schedule are fixed. Variants:
//   Cold         solve() from scratch every step;
//   Warm         solve(previous active set), factorization of the previous
//                working set reused (only g changed: update_gradient);
//   WarmRebuild  solve(previous active set) after update_inequalities()
//                with the same C, so J, R are rebuilt from the active set
//                (the case of a changed constraint matrix); the update
//                itself is not timed.
// Reported: time per solve (ns), "iters" = GI steps per solve, "active" =
// working-set size, "cond" = condition number of H.
//
// Run (from a build that has the target bench_qp):
//   nice -n 10 ./bench_qp --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
// On a shared machine compare the "_min" rows (least disturbed repetition).
#include <benchmark/benchmark.h>

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "neuralsim/control/qp_solver.hpp"

namespace neuralsim::bench {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;
constexpr double kInf = std::numeric_limits<double>::infinity();

struct MpcProblem {
  int n = 0;
  MatrixXd H, C;
  VectorXd lo, hi, xl, xu;
  std::vector<VectorXd> gradients;  // consecutive control steps
  double cond = 0;
};

// Foot positions relative to the CoM (m) and leg order FR, FL, HR, HL.
const double kFoot[4][3] = {{0.19, -0.11, -0.28}, {0.19, 0.11, -0.28}, {-0.19, -0.11, -0.28}, {-0.19, 0.11, -0.28}};

Eigen::Matrix3d skew(const Eigen::Vector3d& r) {
  Eigen::Matrix3d s;
  s << 0, -r.z(), r.y(), r.z(), 0, -r.x(), -r.y(), r.x(), 0;
  return s;
}

// stance(k, leg): whether `leg` is on the ground at horizon step k.
bool in_stance(int feet, int k, int leg) {
  if (feet == 4) return true;
  const bool pair_a = (k / 5) % 2 == 0;  // trot: FR+HL, then FL+HR, 5 steps each
  return pair_a ? (leg == 0 || leg == 3) : (leg == 1 || leg == 2);
}

MpcProblem build_problem(int horizon, int feet, int steps) {
  const double dt = 0.03, mass = 9.0, mu = 0.6, f_max = 150.0, grav = 9.81, alpha = 4e-5;
  const int ns = 12, nu = 12, N = horizon, n = nu * N;
  const Eigen::Vector3d inertia(0.07, 0.26, 0.242);
  MatrixXd Ad = MatrixXd::Identity(ns, ns), Bd = MatrixXd::Zero(ns, nu);
  Ad.block(0, 6, 3, 3) = dt * Eigen::Matrix3d::Identity();  // Θ̇ = ω (zero yaw)
  Ad.block(3, 9, 3, 3) = dt * Eigen::Matrix3d::Identity();  // ṗ = v
  for (int leg = 0; leg < 4; ++leg) {
    const Eigen::Vector3d r(kFoot[leg][0], kFoot[leg][1], kFoot[leg][2]);
    Bd.block(6, 3 * leg, 3, 3) = dt * inertia.cwiseInverse().asDiagonal() * skew(r);  // ω̇ = I⁻¹ r × f
    Bd.block(9, 3 * leg, 3, 3) = dt / mass * Eigen::Matrix3d::Identity();            // v̇ = f / m + g
  }
  VectorXd cd = VectorXd::Zero(ns);
  cd[11] = -grav * dt;
  // Condensed prediction X = Aqp x0 + Bqp U + cqp.
  MatrixXd Aqp(ns * N, ns), Bqp = MatrixXd::Zero(ns * N, n);
  VectorXd cqp(ns * N);
  MatrixXd Ak = Ad;
  VectorXd ck = cd;
  for (int k = 0; k < N; ++k) {
    Aqp.middleRows(ns * k, ns) = Ak;
    cqp.segment(ns * k, ns) = ck;
    Ak = Ad * Ak;
    ck = Ad * ck + cd;
  }
  for (int k = 0; k < N; ++k) {
    MatrixXd P = Bd;  // Ad^(k-j) Bd
    for (int j = k; j >= 0; --j) {
      Bqp.block(ns * k, nu * j, ns, nu) = P;
      P = Ad * P;
    }
  }
  VectorXd q(ns);
  q << 0.25, 0.25, 10, 2, 2, 50, 0, 0, 0.3, 0.2, 0.2, 0.1;  // Θ, p, ω, v
  VectorXd Qbar(ns * N);
  for (int k = 0; k < N; ++k) Qbar.segment(ns * k, ns) = q;
  MpcProblem pb;
  pb.n = n;
  pb.H = 2 * (Bqp.transpose() * Qbar.asDiagonal() * Bqp + alpha * MatrixXd::Identity(n, n));
  pb.H = 0.5 * (pb.H + pb.H.transpose()).eval();
  const Eigen::SelfAdjointEigenSolver<MatrixXd> eig(pb.H);
  pb.cond = eig.eigenvalues().maxCoeff() / eig.eigenvalues().minCoeff();

  // Constraints: pyramid rows for stance feet, z bounds, swing forces 0.
  std::vector<Eigen::RowVectorXd> rows;
  pb.xl = VectorXd::Constant(n, -kInf);
  pb.xu = VectorXd::Constant(n, kInf);
  for (int k = 0; k < N; ++k)
    for (int leg = 0; leg < 4; ++leg) {
      const int o = nu * k + 3 * leg;
      if (!in_stance(feet, k, leg)) {
        pb.xl.segment(o, 3).setZero();
        pb.xu.segment(o, 3).setZero();
        continue;
      }
      pb.xl[o + 2] = 0;
      pb.xu[o + 2] = f_max;
      for (int t = 0; t < 2; ++t)
        for (int sgn = -1; sgn <= 1; sgn += 2) {  // ±f_t - μ f_z ≤ 0
          Eigen::RowVectorXd row = Eigen::RowVectorXd::Zero(n);
          row[o + t] = sgn;
          row[o + 2] = -mu;
          rows.push_back(row);
        }
    }
  pb.C.resize(static_cast<int>(rows.size()), n);
  for (size_t i = 0; i < rows.size(); ++i) pb.C.row(static_cast<int>(i)) = rows[i];
  pb.lo = VectorXd::Constant(pb.C.rows(), -kInf);
  pb.hi = VectorXd::Zero(pb.C.rows());

  // Closed-loop rollout for the sequence of gradients.
  QpSolver solver(n, 0, pb.C.rows());
  solver.update_hessian(pb.H);
  solver.update_inequalities(pb.C, pb.lo, pb.hi);
  solver.update_bounds(pb.xl, pb.xu);
  std::mt19937 rng(1);
  std::normal_distribution<double> noise(0, 1e-3);
  VectorXd x0 = VectorXd::Zero(ns);
  x0[5] = 0.29;
  // An agile command (the velocities swing faster than the robot can follow
  // within μ = 0.6), so friction rows and f_z bounds are active.
  auto command = [](double t) {
    const double pi = 3.14159265358979;
    return Eigen::Vector3d(2.0 * std::sin(2 * pi * t / 1.2), 0.8 * std::cos(2 * pi * t / 0.9),
                           1.5 * std::sin(2 * pi * t / 1.5));  // v_x, v_y, yaw rate
  };
  for (int s = 0; s < steps; ++s) {
    VectorXd xref(ns * N);
    Eigen::Vector3d pos(x0[3], x0[4], x0[2]);  // x, y, yaw integrated from the current state
    for (int k = 0; k < N; ++k) {
      const Eigen::Vector3d c = command((s + k + 1) * dt);
      pos += dt * c;
      VectorXd r = VectorXd::Zero(ns);
      r[2] = pos[2];
      r[3] = pos[0];
      r[4] = pos[1];
      r[5] = 0.30;
      r[8] = c[2];
      r[9] = c[0];
      r[10] = c[1];
      xref.segment(ns * k, ns) = r;
    }
    const VectorXd g = 2 * Bqp.transpose() * Qbar.asDiagonal() * (Aqp * x0 + cqp - xref);
    pb.gradients.push_back(g);
    solver.update_gradient(g);
    if (solver.solve() != QpStatus::kOptimal) {
      std::fprintf(stderr, "MPC QP (horizon %d, %d feet) step %d: %s\n", horizon, feet, s,
                   to_string(solver.result().status));
      std::abort();
    }
    x0 = Ad * x0 + Bd * solver.result().x.head(nu) + cd;
    for (int i = 0; i < ns; ++i) x0[i] += noise(rng);
  }
  return pb;
}

const MpcProblem& problem(int horizon, int feet) {
  static std::vector<std::pair<std::pair<int, int>, MpcProblem>> cache;
  for (const auto& e : cache)
    if (e.first == std::make_pair(horizon, feet)) return e.second;
  cache.emplace_back(std::make_pair(horizon, feet), build_problem(horizon, feet, 40));
  return cache.back().second;
}

enum class Mode { kCold, kWarm, kWarmRebuild };

void BM_MpcQp(benchmark::State& state, Mode mode) {
  const int horizon = static_cast<int>(state.range(0)), feet = static_cast<int>(state.range(1));
  const MpcProblem& pb = problem(horizon, feet);
  QpSolver solver(pb.n, 0, pb.C.rows());
  solver.update_hessian(pb.H);
  solver.update_inequalities(pb.C, pb.lo, pb.hi);
  solver.update_bounds(pb.xl, pb.xu);
  solver.update_gradient(pb.gradients[0]);
  solver.solve();
  QpActiveSet previous = solver.result().active_set;
  // Walk the sequence forth and back so that consecutive solves are always
  // consecutive control steps.
  const int K = static_cast<int>(pb.gradients.size());
  int k = 0, dir = 1;
  long iterations = 0, active = 0, solves = 0;
  for (auto _ : state) {
    if (k + dir < 0 || k + dir >= K) dir = -dir;
    k += dir;
    if (mode == Mode::kWarmRebuild) {
      state.PauseTiming();
      solver.update_inequalities(pb.C, pb.lo, pb.hi);
      state.ResumeTiming();
    }
    solver.update_gradient(pb.gradients[k]);
    const QpStatus st = mode == Mode::kCold ? solver.solve() : solver.solve(previous);
    if (st != QpStatus::kOptimal) {
      state.SkipWithError(to_string(st));
      break;
    }
    if (mode != Mode::kCold) previous = solver.result().active_set;  // no allocation: same sizes
    benchmark::DoNotOptimize(solver.result().x.data());
    iterations += solver.result().iterations;
    active += solver.result().num_active;
    ++solves;
  }
  state.counters["iters"] = benchmark::Counter(static_cast<double>(iterations) / std::max(1L, solves));
  state.counters["active"] = benchmark::Counter(static_cast<double>(active) / std::max(1L, solves));
  state.counters["n"] = pb.n;
  state.counters["rows"] = static_cast<double>(pb.C.rows());
  state.counters["cond"] = pb.cond;
}

void mpc_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"horizon", "feet"});
  for (int horizon : {10, 16})
    for (int feet : {4, 2}) b->Args({horizon, feet});
  b->Unit(benchmark::kNanosecond);
  // The least disturbed repetition: on a shared machine the others also
  // measure the neighbours.
  b->ComputeStatistics("min", [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); });
}

BENCHMARK_CAPTURE(BM_MpcQp, Cold, Mode::kCold)->Apply(mpc_args);
BENCHMARK_CAPTURE(BM_MpcQp, Warm, Mode::kWarm)->Apply(mpc_args);
BENCHMARK_CAPTURE(BM_MpcQp, WarmRebuild, Mode::kWarmRebuild)->Apply(mpc_args);

}  // namespace
}  // namespace neuralsim::bench

BENCHMARK_MAIN();
