#include "neuralsim/train/training_data.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/core/format.hpp"

namespace neuralsim {
namespace {

std::string trajectory_label(const TrajectorySet& set, std::size_t i) {
  std::string s = "trajectory " + std::to_string(i);
  if (!set.trajectories[i].name.empty()) s += " ('" + set.trajectories[i].name + "')";
  return s;
}

struct SetShape {
  Eigen::Index nq = 0, nv = 0;
  bool has_tau = false;
};

// Sizes consistent within and across trajectories; values finite among the
// first `used(T)` samples of each.
template <class Used>
SetShape check_set(const TrajectorySet& set, const char* function, Used used) {
  SetShape shape;
  for (std::size_t i = 0; i < set.trajectories.size(); ++i) {
    const Trajectory& t = set.trajectories[i];
    const auto fail = [&](const std::string& what) {
      throw DataError(std::string(function) + ": " + trajectory_label(set, i) + ": " + what);
    };
    if (i == 0) {
      shape = {t.q.cols(), t.qd.cols(), t.has_tau()};
    } else {
      if (t.q.cols() != shape.nq)
        fail("q has " + std::to_string(t.q.cols()) + " columns, trajectory 0 has " + std::to_string(shape.nq));
      if (t.qd.cols() != shape.nv)
        fail("qd has " + std::to_string(t.qd.cols()) + " columns, trajectory 0 has " + std::to_string(shape.nv));
      if (t.has_tau() != shape.has_tau)
        fail(std::string(t.has_tau() ? "has" : "has no") + " tau, trajectory 0 " + (shape.has_tau ? "has" : "has none"));
    }
    if (t.qd.rows() != t.q.rows())
      fail("qd has " + std::to_string(t.qd.rows()) + " samples, q has " + std::to_string(t.q.rows()));
    if (t.has_tau() && (t.tau.rows() != t.q.rows() || t.tau.cols() != shape.nv))
      fail("tau is " + std::to_string(t.tau.rows()) + " x " + std::to_string(t.tau.cols()) + ", expected " +
           std::to_string(t.q.rows()) + " x " + std::to_string(shape.nv));
    const Eigen::Index n = used(t.q.rows());
    const auto check_finite = [&](const RowMatrixXd& m, const char* name) {
      for (Eigen::Index r = 0; r < n; ++r)
        for (Eigen::Index c = 0; c < m.cols(); ++c)
          if (!std::isfinite(m(r, c)))
            fail(std::string(name) + "[" + std::to_string(c) + "] at sample " + std::to_string(r) + " is " +
                 format_number(m(r, c)));
    };
    check_finite(t.q, "q");
    check_finite(t.qd, "qd");
    if (t.has_tau()) check_finite(t.tau, "tau");
  }
  return shape;
}

}  // namespace

std::int64_t count_windows(Eigen::Index samples, const WindowOptions& o) {
  std::int64_t T = samples;
  if (o.max_samples > 0) T = std::min<std::int64_t>(T, o.max_samples);
  if (o.steps < 1 || o.stride < 1 || T - 1 < o.steps) return 0;
  return (T - 1 - o.steps) / o.stride + 1;
}

std::vector<TrainingWindow> make_windows(const TrajectorySet& set, const WindowOptions& o) {
  if (o.steps < 1) throw InvalidArgument("make_windows: steps is " + std::to_string(o.steps) + ", must be >= 1");
  if (o.stride < 1) throw InvalidArgument("make_windows: stride is " + std::to_string(o.stride) + ", must be >= 1");
  if (o.max_samples < 0)
    throw InvalidArgument("make_windows: max_samples is " + std::to_string(o.max_samples) + ", must be >= 0 (0 = all)");
  const auto used = [&](Eigen::Index T) {
    return o.max_samples > 0 ? std::min<Eigen::Index>(T, o.max_samples) : T;
  };
  const SetShape shape = check_set(set, "make_windows", used);

  // Size the output before allocating any of it.
  std::int64_t count = 0;
  for (const Trajectory& t : set.trajectories) count += count_windows(t.q.rows(), o);
  const std::int64_t nu = shape.has_tau ? shape.nv : 0;
  const std::int64_t per_window =
      static_cast<std::int64_t>(sizeof(double)) * o.steps * (2 * shape.nq + 2 * shape.nv + nu) +
      static_cast<std::int64_t>(sizeof(TrainingWindow));
  if (count > (std::int64_t{1} << 31) - 1 || count * per_window > o.max_bytes)
    throw InvalidArgument("make_windows: " + std::to_string(count) + " windows of " + std::to_string(o.steps) +
                          " steps (stride " + std::to_string(o.stride) + ") need " +
                          format_number(static_cast<double>(count) * per_window / (1 << 20)) +
                          " MiB, above the limit of " + format_number(static_cast<double>(o.max_bytes) / (1 << 20)) +
                          " MiB: use a larger stride, fewer steps or max_samples");

  std::vector<TrainingWindow> windows;
  windows.reserve(static_cast<std::size_t>(count));
  const int K = o.steps;
  for (std::size_t i = 0; i < set.trajectories.size(); ++i) {
    const Trajectory& t = set.trajectories[i];
    const std::int64_t n = count_windows(t.q.rows(), o);
    for (std::int64_t w = 0; w < n; ++w) {
      const Eigen::Index s = w * o.stride;
      TrainingWindow win;
      win.trajectory = static_cast<int>(i);
      win.start = static_cast<int>(s);
      win.recording = &t;
      // Rows of the recording are samples; columns of a window are steps.
      win.q = t.q.middleRows(s, K).transpose();
      win.qd = t.qd.middleRows(s, K).transpose();
      win.q_next = t.q.middleRows(s + 1, K).transpose();
      win.qd_next = t.qd.middleRows(s + 1, K).transpose();
      if (shape.has_tau)
        win.controls = t.tau.middleRows(s, K).transpose();
      else
        win.controls.resize(0, K);
      windows.push_back(std::move(win));
    }
  }
  return windows;
}

WindowLossWeights loss_weights_from_data(const TrajectorySet& set, double floor) {
  if (!(floor > 0)) throw InvalidArgument("loss_weights_from_data: floor is " + format_number(floor) + ", must be > 0");
  const SetShape shape = check_set(set, "loss_weights_from_data", [](Eigen::Index T) { return T; });
  Eigen::Index total = 0;
  for (const Trajectory& t : set.trajectories) total += t.q.rows();
  if (total == 0) throw DataError("loss_weights_from_data: the trajectory set has no samples");

  // Two passes (mean, then squared deviations): no cancellation when the
  // mean is large against the spread, e.g. a base height of 0.5 m ± 1 mm.
  const auto inverse_variance = [&](auto member, Eigen::Index n) {
    Eigen::VectorXd mean = Eigen::VectorXd::Zero(n), var = Eigen::VectorXd::Zero(n);
    for (const Trajectory& t : set.trajectories) mean += (t.*member).colwise().sum().transpose();
    mean /= static_cast<double>(total);
    for (const Trajectory& t : set.trajectories)
      var += ((t.*member).rowwise() - mean.transpose()).array().square().colwise().sum().matrix().transpose();
    var /= static_cast<double>(total);
    return var.cwiseMax(floor).cwiseInverse().eval();
  };
  WindowLossWeights w;
  w.wq = inverse_variance(&Trajectory::q, shape.nq);
  w.wqd = inverse_variance(&Trajectory::qd, shape.nv);
  return w;
}

const char* training_mode_name(TrainingMode m) {
  switch (m) {
    case TrainingMode::kOneStep: return "one_step";
    case TrainingMode::kUnrolledDetached: return "unrolled_detached";
    case TrainingMode::kUnrolled: return "unrolled";
  }
  return "?";
}

}  // namespace neuralsim
