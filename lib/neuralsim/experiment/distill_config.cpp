// `distill:` and `linear:` config sections; see distill_config.hpp.
#include "neuralsim/experiment/distill_config.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/io/distill_dataset.hpp"

namespace neuralsim {

// Named (not anonymous): the experiment layer is compiled as one unity translation unit.
namespace distill_config_detail {

std::string dc_num(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

// [lo, hi] with lo <= hi inside [min, max].
std::array<double, 2> dc_range(const Config& c, const std::string& key, std::array<double, 2> fallback, double min,
                               double max) {
  if (!c.has(key)) return fallback;
  const std::vector<double> v = c.get<std::vector<double>>(key);
  if (v.size() != 2) c.fail(key, "expected a range [lo, hi], got " + std::to_string(v.size()) + " values");
  if (!(v[0] <= v[1])) c.fail(key, "expected lo <= hi, got [" + dc_num(v[0]) + ", " + dc_num(v[1]) + "]");
  if (!(v[0] >= min && v[1] <= max))
    c.fail(key, "must lie in [" + dc_num(min) + ", " + dc_num(max) + "], got [" + dc_num(v[0]) + ", " + dc_num(v[1]) + "]");
  return {v[0], v[1]};
}

// n non-negative finite weights (a diagonal).
Eigen::VectorXd dc_weights(const Config& c, const std::string& key, const Eigen::VectorXd& fallback, bool positive) {
  if (!c.has(key)) return fallback;
  const Eigen::VectorXd w = c.get<Eigen::VectorXd>(key);
  if (w.size() != fallback.size())
    c.fail(key, "expected " + std::to_string(fallback.size()) + " values, got " + std::to_string(w.size()));
  for (Eigen::Index i = 0; i < w.size(); ++i)
    if (!(std::isfinite(w[i]) && (positive ? w[i] > 0 : w[i] >= 0) && w[i] <= 1e9))
      c.fail(key, std::string("every value must be finite, ") + (positive ? "> 0" : ">= 0") + " and <= 1e9, got " +
                      dc_num(w[i]) + " at index " + std::to_string(i));
  return w;
}

}  // namespace distill_config_detail

LinearSystemSpec read_linear_system_spec(const Config& c) {
  using namespace distill_config_detail;
  c.check_known_keys({"type", "dt", "mass", "horizon", "state_weights", "control_weight", "terminal_weights",
                      "control_limits", "velocity_limits", "position", "velocity", "stable_tolerance"});
  const std::string type = c.get_choice("type", {"double_integrator"}, "double_integrator");
  (void)type;
  LinearSystemSpec s;
  s.dt = c.get_in_range("dt", s.dt, 1e-6, 10.0);
  s.mass = c.get_in_range("mass", s.mass, 1e-6, 1e6);
  double_integrator(s.dt, s.mass, &s.mpc.A, &s.mpc.B);
  s.mpc.horizon = static_cast<int>(c.get_int_in_range("horizon", 20, 1, 1000));
  s.mpc.Q = dc_weights(c, "state_weights", Eigen::Vector2d(10.0, 1.0), false).asDiagonal();
  s.mpc.R = Eigen::MatrixXd::Constant(1, 1, c.get_in_range("control_weight", 0.1, 1e-9, 1e9));
  if (!(s.mpc.R(0, 0) > 0)) c.fail("control_weight", "must be > 0");
  if (c.has("terminal_weights"))
    s.mpc.P = dc_weights(c, "terminal_weights", Eigen::Vector2d(1.0, 1.0), false).asDiagonal();
  if (c.has("control_limits")) {
    const std::vector<double> v = c.get<std::vector<double>>("control_limits");
    if (v.size() != 2) c.fail("control_limits", "expected [u_min, u_max], got " + std::to_string(v.size()) + " values");
    if (!(std::isfinite(v[0]) && std::isfinite(v[1])))
      c.fail("control_limits", "must be finite, got [" + dc_num(v[0]) + ", " + dc_num(v[1]) + "]");
    if (!(v[0] < v[1]))
      c.fail("control_limits", "infeasible: u_min = " + dc_num(v[0]) + " must be < u_max = " + dc_num(v[1]));
    if (!(v[0] <= 0 && v[1] >= 0))
      c.fail("control_limits", "infeasible: u = 0 (holding the origin) must lie in [" + dc_num(v[0]) + ", " +
                                   dc_num(v[1]) + "]");
    s.mpc.u_min = Eigen::VectorXd::Constant(1, v[0]);
    s.mpc.u_max = Eigen::VectorXd::Constant(1, v[1]);
  }
  s.position = dc_range(c, "position", s.position, -1e6, 1e6);
  s.velocity = dc_range(c, "velocity", s.velocity, -1e6, 1e6);
  if (c.has("velocity_limits")) {
    const double vmax = c.get_in_range("velocity_limits", 1.0, 0.0, 1e6);
    if (!(vmax > 0)) c.fail("velocity_limits", "must be > 0");
    if (std::max(std::abs(s.velocity[0]), std::abs(s.velocity[1])) > vmax)
      c.fail("velocity_limits", "infeasible: initial velocities up to " +
                                    dc_num(std::max(std::abs(s.velocity[0]), std::abs(s.velocity[1]))) +
                                    " m/s exceed the velocity limit " + dc_num(vmax) + " m/s");
    s.mpc.x_min = Eigen::Vector2d(-std::numeric_limits<double>::infinity(), -vmax);
    s.mpc.x_max = Eigen::Vector2d(std::numeric_limits<double>::infinity(), vmax);
  }
  s.stable_tolerance = c.get_in_range("stable_tolerance", s.stable_tolerance, 1e-12, 1e6);
  try {
    s.mpc.check();
    LinearMpc probe(s.mpc);  // the DARE must exist
    (void)probe;
  } catch (const std::exception& e) {
    c.fail("type", std::string("the MPC cannot be built: ") + e.what());
  }
  return s;
}

DistillSpec read_distill_spec(const Config& root, long long seed) {
  using namespace distill_config_detail;
  DistillSpec s;
  if (root.has("linear")) s.linear = read_linear_system_spec(root.at("linear"));
  const Config d = root.at("distill");
  d.check_known_keys({"data", "pushes", "network", "train", "evaluate"});

  const Config empty = Config::parse("{}", root.file());
  const Config data = d.has("data") ? d.at("data") : empty;
  data.check_known_keys({"file", "episodes", "duration", "max_samples", "validation_fraction"});
  if (data.has("file")) s.data.file = data.path("file");
  s.data.episodes = static_cast<int>(data.get_int_in_range("episodes", s.data.episodes, 1, 100'000'000));
  s.data.duration = data.get_in_range("duration", s.data.duration, 1e-6, 1e6);
  s.data.max_samples = data.get_int_in_range("max_samples", s.data.max_samples, 1, DistillDatasetLimits::kMaxSamples);
  s.data.validation_fraction = data.get_in_range("validation_fraction", s.data.validation_fraction, 0.0, 0.9);

  const Config p = d.has("pushes") ? d.at("pushes") : empty;
  p.check_known_keys({"start", "every", "probability", "duration", "force"});
  s.pushes.start = p.get_in_range("start", s.pushes.start, 0.0, 1e9);
  s.pushes.every = p.get_in_range("every", s.pushes.every, 1e-6, 1e9);
  s.pushes.probability = p.get_in_range("probability", s.pushes.probability, 0.0, 1.0);
  const auto dur = dc_range(p, "duration", {s.pushes.duration_min, s.pushes.duration_max}, 1e-6, 1e9);
  if (dur[1] > s.pushes.every)
    p.fail("duration", "a push must fit in its window: duration up to " + dc_num(dur[1]) + " s > every = " +
                           dc_num(s.pushes.every) + " s");
  s.pushes.duration_min = dur[0];
  s.pushes.duration_max = dur[1];
  const auto force = dc_range(p, "force", {0.0, 0.0}, 0.0, 1e6);
  s.pushes.force_min = force[0];
  s.pushes.force_max = force[1];
  s.pushes.seed = static_cast<std::uint64_t>(seed);

  const Config n = d.has("network") ? d.at("network") : empty;
  n.check_known_keys({"hidden", "activation"});
  if (n.has("hidden")) {
    const std::vector<double> h = n.get<std::vector<double>>("hidden");
    s.network.hidden.clear();
    for (size_t i = 0; i < h.size(); ++i) {
      if (!(h[i] >= 1 && h[i] <= 4096 && h[i] == std::floor(h[i])))
        n.fail("hidden", "widths must be whole numbers in [1, 4096], got " + dc_num(h[i]) + " at index " +
                             std::to_string(i));
      s.network.hidden.push_back(static_cast<nn::Index>(h[i]));
    }
  }
  const std::string act = n.get_choice("activation", nn::activation_names(), "tanh");
  s.network.activation = nn::parse_activation(act);

  const Config t = d.has("train") ? d.at("train") : empty;
  t.check_known_keys({"epochs", "batch_size", "learning_rate", "schedule", "final_fraction", "clip_norm",
                      "weight_decay"});
  s.train.epochs = static_cast<int>(t.get_int_in_range("epochs", 200, 1, 1'000'000));
  s.train.batch_size = static_cast<int>(t.get_int_in_range("batch_size", 128, 1, 1'000'000));
  s.train.schedule.base = t.get_in_range("learning_rate", 3e-3, 1e-12, 10.0);
  const std::string sched = t.get_choice("schedule", {"constant", "cosine"}, "cosine");
  s.train.schedule.kind =
      sched == "cosine" ? LearningRateSchedule::Kind::kCosine : LearningRateSchedule::Kind::kConstant;
  s.train.schedule.final_fraction = t.get_in_range("final_fraction", 0.02, 0.0, 1.0);
  s.train.clip_norm = t.get_in_range("clip_norm", 0.0, 0.0, 1e12);
  s.train.adam.weight_decay = t.get_in_range("weight_decay", 0.0, 0.0, 1.0);
  s.train.seed = static_cast<std::uint64_t>(seed);

  const Config e = d.has("evaluate") ? d.at("evaluate") : empty;
  e.check_known_keys({"episodes", "duration", "min_height", "weights"});
  s.evaluate.episodes = static_cast<int>(e.get_int_in_range("episodes", s.evaluate.episodes, 0, 100000));
  s.evaluate.duration = e.get_in_range("duration", s.evaluate.duration, 1e-6, 1e6);
  s.evaluate.min_height = e.get_in_range("min_height", s.evaluate.min_height, 0.0, 10.0);
  return s;
}

}  // namespace neuralsim
