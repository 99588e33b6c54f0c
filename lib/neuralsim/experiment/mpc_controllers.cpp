// `controls: {type: mpc | mpc_network}`: config → QuadrupedController; see
// mpc_controllers.hpp and docs/rollout.md ("MPC controllers").
#include "neuralsim/experiment/mpc_controllers.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <mutex>

#include "neuralsim/core/splitmix.hpp"
#include "neuralsim/core/errors.hpp"
#include "neuralsim/dynamics/centroidal.hpp"
#include "neuralsim/dynamics/kinematics.hpp"
#include "neuralsim/io/network_file.hpp"

namespace neuralsim {

// Named (not anonymous): the experiment layer is compiled as one unity
// translation unit, where anonymous-namespace helpers of different files meet.
namespace mpc_config_detail {

constexpr double kMpcMaxSpeed = 10.0;     // |forward/lateral speed| [m/s]
constexpr double kMpcMaxYawRate = 10.0;   // |yaw rate| [rad/s]
constexpr double kMpcMaxHeight = 5.0;     // CoM height [m]
constexpr double kMpcMaxForce = 1e6;      // fz bounds [N]
constexpr double kMpcMaxTime = 1e9;       // schedule times, periods [s]
constexpr int kMpcMaxHorizon = 100;       // the QP has 12·horizon variables

std::string mpc_num(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

// A number in (0, hi].
double mpc_positive(const Config& c, const std::string& key, double fallback, double hi) {
  const double v = c.get_or<double>(key, fallback);
  if (!(v > 0 && v <= hi)) c.fail(key, "must be > 0 and <= " + mpc_num(hi) + ", got " + mpc_num(v));
  return v;
}

// [lo, hi] with lo <= hi, each in [min, max].
std::array<double, 2> mpc_range(const Config& c, const std::string& key, double fallback, double min, double max,
                            bool strictly_positive = false) {
  if (!c.has(key)) return {fallback, fallback};
  const std::vector<double> v = c.get<std::vector<double>>(key);
  if (v.size() != 2) c.fail(key, "expected a range [lo, hi], got " + std::to_string(v.size()) + " values");
  if (!(v[0] <= v[1])) c.fail(key, "expected lo <= hi, got [" + mpc_num(v[0]) + ", " + mpc_num(v[1]) + "]");
  if (v[0] < min || v[1] > max || (strictly_positive && v[0] <= 0))
    c.fail(key, "must lie in " + std::string(strictly_positive ? "(" : "[") + mpc_num(min) + ", " + mpc_num(max) +
                    "], got [" + mpc_num(v[0]) + ", " + mpc_num(v[1]) + "]");
  return {v[0], v[1]};
}

// A vector of 3 per-axis values; one value is broadcast.
Eigen::Vector3d mpc_axes(const Config& c, const std::string& key, const Eigen::Vector3d& fallback, double hi) {
  if (!c.has(key)) return fallback;
  const std::vector<double> v = c.get<std::vector<double>>(key);
  if (v.size() != 1 && v.size() != 3)
    c.fail(key, "expected 1 or 3 values (x, y, z), got " + std::to_string(v.size()));
  Eigen::Vector3d out;
  for (int i = 0; i < 3; ++i) out[i] = v[v.size() == 1 ? 0 : i];
  if ((out.array() < 0).any() || (out.array() > hi).any())
    c.fail(key, "every value must lie in [0, " + mpc_num(hi) + "]");
  return out;
}

// The command keys of `c` on top of `base`.
QuadrupedCommand mpc_read_command(const Config& c, const QuadrupedCommand& base) {
  QuadrupedCommand cmd = base;
  cmd.forward_speed = c.get_in_range("forward_speed", base.forward_speed, -kMpcMaxSpeed, kMpcMaxSpeed);
  cmd.lateral_speed = c.get_in_range("lateral_speed", base.lateral_speed, -kMpcMaxSpeed, kMpcMaxSpeed);
  cmd.yaw_rate = c.get_in_range("yaw_rate", base.yaw_rate, -kMpcMaxYawRate, kMpcMaxYawRate);
  cmd.height = mpc_positive(c, "height", base.height, kMpcMaxHeight);
  return cmd;
}

// The whole robot's CoM height when it stands in its nominal pose with the
// foot spheres on the ground (the default height command).
double mpc_nominal_height(const Model<double>& model, const QuadrupedControllerOptions& o) {
  Eigen::VectorXd q = model.neutral_configuration();
  const int nj = model.nq - 7;
  if (o.nominal_joint_positions.size() == nj) {
    q.tail(nj) = o.nominal_joint_positions;
  } else if (nj == 12) {  // the controller's default: the Laikago's standing pose
    for (int i = 0; i < 4; ++i) q.segment<3>(7 + 3 * i) << 0.0, 0.67, -1.25;
  }
  Data<double> data(model);
  forward_kinematics(model, data, q, Eigen::VectorXd::Zero(model.nv).eval());
  QuadrupedLegs legs(model, o.foot_frames);
  legs.update(model, data, Eigen::VectorXd::Zero(model.nv));
  double sole = 0;
  for (int i = 0; i < kNumLegs; ++i) sole += (legs.foot_position(i).z() - legs.foot_radius(i)) / kNumLegs;
  return centroidal(model, data).com.z() - sole;
}

// Fewest feet on the ground at any time of the gait's cycle. The stance set
// is piecewise constant in the cycle phase u, changing only where a leg's
// phase u + offset_i crosses 0 or the duty factor: evaluating between
// consecutive change points is exact.
int mpc_fewest_stance_feet(const GaitParameters& g) {
  if (g.duty_factor >= 1.0) return kNumLegs;
  std::vector<double> cuts{0.0, 1.0};
  for (int i = 0; i < kNumLegs; ++i) {
    for (double x : {-g.offsets[i], g.duty_factor - g.offsets[i]}) cuts.push_back(x - std::floor(x));
  }
  std::sort(cuts.begin(), cuts.end());
  int fewest = kNumLegs;
  for (size_t j = 0; j + 1 < cuts.size(); ++j) {
    if (cuts[j + 1] - cuts[j] < 1e-12) continue;
    const double u = 0.5 * (cuts[j] + cuts[j + 1]);
    int n = 0;
    for (int i = 0; i < kNumLegs; ++i) {
      const double s = u + g.offsets[i];
      if (s - std::floor(s) < g.duty_factor) ++n;
    }
    fewest = std::min(fewest, n);
  }
  return fewest;
}

double mpc_uniform(const std::array<double, 2>& r, std::mt19937_64& rng) {
  return r[0] + (r[1] - r[0]) * nn::random::uniform01(rng);
}

}  // namespace mpc_config_detail

QuadrupedCommand RandomCommandSpec::command(int trajectory_index, long long segment) const {
  using namespace mpc_config_detail;
  const std::uint64_t per_trajectory = splitmix64(splitmix64(seed) ^ static_cast<std::uint64_t>(trajectory_index));
  const std::uint64_t key = splitmix64(per_trajectory ^ static_cast<std::uint64_t>(segment));
  std::mt19937_64 rng(key);
  QuadrupedCommand c;  // every entry is drawn (also a fixed one), so the streams never shift
  c.forward_speed = mpc_uniform(forward_speed, rng);
  c.lateral_speed = mpc_uniform(lateral_speed, rng);
  c.yaw_rate = mpc_uniform(yaw_rate, rng);
  c.height = mpc_uniform(height, rng);
  return c;
}

MpcControllerSpec read_mpc_controller_spec(const Config& c, const Model<double>& model, const StepOptions& step,
                                           bool network) {
  using namespace mpc_config_detail;
  std::vector<std::string> known{"type",  "gait", "command",       "schedule",   "random_commands",
                                 "mpc",   "feet", "nominal_joint_positions", "swing", "raibert_gain",
                                 "max_step", "torque_limit", "ground_height", "leg_gravity_compensation"};
  if (network) {
    known.push_back("weights");
    known.push_back("network");
  }
  c.check_known_keys(known);
  const std::string type = network ? "mpc_network" : "mpc";

  // The model: a floating base and four feet.
  if (model.num_bodies() == 0 || model.joints[0].type != JointType::kFree)
    c.fail("type", "controls of type '" + type + "' need a model with a floating base (model '" + model.name +
                       "' has no free root joint; set model.floating_base: true)");
  MpcControllerSpec spec;
  QuadrupedControllerOptions& o = spec.options;
  if (c.has("feet")) {
    const std::vector<std::string> feet = c.get<std::vector<std::string>>("feet");
    if (feet.size() != kNumLegs)
      c.fail("feet", "expected 4 frame names (FR, FL, RR, RL), got " + std::to_string(feet.size()));
    for (int i = 0; i < kNumLegs; ++i) o.foot_frames[i] = feet[i];
  }
  for (int i = 0; i < kNumLegs; ++i)
    if (model.frame_index(o.foot_frames[i]) < 0) {
      const std::string key = c.has("feet") ? "feet." + std::to_string(i) : "feet";
      c.fail(key, "model '" + model.name + "' has no frame named '" + o.foot_frames[i] + "'" +
                      (c.has("feet") ? "" : " (the default feet are the Laikago's toeFR, toeFL, toeRR, toeRL)"));
    }
  const int nj = model.nq - 7;
  if (c.has("nominal_joint_positions")) {
    const Eigen::VectorXd v = c.get<Eigen::VectorXd>("nominal_joint_positions");
    if (v.size() != nj)
      c.fail("nominal_joint_positions", "expected " + std::to_string(nj) + " joint positions, got " +
                                            std::to_string(v.size()));
    o.nominal_joint_positions = v;
  }

  // Gait.
  if (c.has("gait")) {
    const Config g = c.at("gait");
    g.check_known_keys({"type", "period", "duty_factor", "start"});
    const std::string kind = g.get_choice("type", {"trot", "stand"}, "trot");
    if (kind == "stand") {
      if (g.has("period") || g.has("duty_factor"))
        g.fail(g.has("period") ? "period" : "duty_factor", "a standing gait has no period or duty factor");
      o.gait = GaitParameters::stand();
    } else {
      const double period = mpc_positive(g, "period", 0.3, 10.0);
      const double duty = mpc_positive(g, "duty_factor", 0.5, 1.0);
      o.gait = GaitParameters::trot(period, duty);
    }
    o.gait_start_time = g.get_in_range("start", 0.0, 0.0, kMpcMaxTime);
  }

  // MPC.
  const Config m = c.has("mpc") ? c.at("mpc") : Config::parse("{}", c.file());
  m.check_known_keys({"horizon", "dt", "period", "friction", "fz_min", "fz_max", "state_weights", "force_weight"});
  CentroidalMpcParameters& p = o.mpc;
  p.horizon = static_cast<int>(m.get_int_in_range("horizon", p.horizon, 1, kMpcMaxHorizon));
  p.dt = mpc_positive(m, "dt", p.dt, 1.0);
  p.friction = m.get_or<double>("friction", p.friction);
  if (!(p.friction > 0 && p.friction <= 10))
    m.fail("friction", "the friction coefficient must be > 0 (and <= 10), got " + mpc_num(p.friction));
  p.fz_min = m.get_in_range("fz_min", p.fz_min, 0.0, kMpcMaxForce);
  p.fz_max = m.get_in_range("fz_max", p.fz_max, 0.0, kMpcMaxForce);
  if (!(p.fz_max > p.fz_min))
    m.fail("fz_max", "must be > fz_min = " + mpc_num(p.fz_min) + " N, got " + mpc_num(p.fz_max) + " N");
  if (m.has("state_weights")) {
    const Eigen::VectorXd w = m.get<Eigen::VectorXd>("state_weights");
    if (w.size() != kMpcStates)
      m.fail("state_weights", "expected 13 weights (roll pitch yaw, x y z, wx wy wz, vx vy vz, gravity), got " +
                                  std::to_string(w.size()));
    if ((w.array() < 0).any()) m.fail("state_weights", "every weight must be >= 0");
    p.state_weights = w;
  }
  p.force_weight = mpc_positive(m, "force_weight", p.force_weight, 1e6);
  p.gravity = -model.gravity.z();
  if (!(p.gravity > 0) || model.gravity.head<2>().norm() > 1e-9 * p.gravity)
    c.fail("type", "controls of type '" + type + "' need gravity along -z, the model's is (" +
                       mpc_num(model.gravity.x()) + ", " + mpc_num(model.gravity.y()) + ", " + mpc_num(model.gravity.z()) + ")");
  // The MPC period in simulation steps. Given: a positive multiple of dt.
  // Default: 0.01 s rounded to whole steps (at least one).
  if (m.has("period")) {
    const double period = mpc_positive(m, "period", 0.01, kMpcMaxTime);
    const double steps = period / step.dt;
    const double whole = std::round(steps);
    if (whole < 1 || std::abs(steps - whole) > 1e-6 * std::max(1.0, whole))
      m.fail("period", "must be a positive multiple of sim.dt = " + mpc_num(step.dt) + " s, got " + mpc_num(period) +
                           " s (" + mpc_num(steps) + " steps)");
    if (whole > 1e9) m.fail("period", "is more than 10^9 simulation steps");
    o.mpc_every = static_cast<int>(whole);
  } else {
    o.mpc_every = static_cast<int>(std::max(1.0, std::min(1e9, std::round(0.01 / step.dt))));
  }

  // Legs.
  if (c.has("swing")) {
    const Config s = c.at("swing");
    s.check_known_keys({"height", "kp", "kd"});
    o.swing_height = s.get_in_range("height", o.swing_height, 0.0, 1.0);
    o.swing_kp = mpc_axes(s, "kp", o.swing_kp, 1e6);
    o.swing_kd = mpc_axes(s, "kd", o.swing_kd, 1e6);
  }
  o.raibert_gain = c.get_in_range("raibert_gain", o.raibert_gain, 0.0, 10.0);
  o.max_step = mpc_positive(c, "max_step", o.max_step, 10.0);
  o.torque_limit = c.get_in_range("torque_limit", o.torque_limit, 0.0, 1e6);
  o.ground_height = c.get_in_range("ground_height", o.ground_height, -1e6, 1e6);
  o.leg_gravity_compensation = c.get_or<bool>("leg_gravity_compensation", o.leg_gravity_compensation);

  // Can the robot stand on this? The fewest feet on the ground must be able
  // to carry its weight within [fz_min, fz_max] each.
  const double weight = model.total_mass() * p.gravity;
  const int fewest = mpc_fewest_stance_feet(o.gait);
  if (fewest == 0)
    c.fail("gait", "the gait has a flight phase (no foot on the ground): the MPC cannot carry the body");
  if (fewest * p.fz_max < weight)
    m.fail("fz_max", "infeasible: " + std::to_string(fewest) + " stance feet x fz_max = " + mpc_num(fewest * p.fz_max) +
                         " N < m g = " + mpc_num(model.total_mass()) + " kg x " + mpc_num(p.gravity) + " m/s^2 = " +
                         mpc_num(weight) + " N");
  if (kNumLegs * p.fz_min > weight)
    m.fail("fz_min", "infeasible: 4 feet x fz_min = " + mpc_num(kNumLegs * p.fz_min) + " N > m g = " + mpc_num(weight) +
                         " N (the feet would push the robot off the ground)");

  // Commands.
  QuadrupedCommand base;
  try {
    base.height = mpc_nominal_height(model, o);
  } catch (const ModelError& e) {
    c.fail("feet", e.what());
  }
  if (!(base.height > 0 && base.height <= kMpcMaxHeight))
    c.fail("command.height", "the nominal CoM height above the feet is " + mpc_num(base.height) +
                                 " m; set command.height explicitly");
  if (c.has("command")) {
    const Config cc = c.at("command");
    cc.check_known_keys({"forward_speed", "lateral_speed", "yaw_rate", "height"});
    base = mpc_read_command(cc, base);
  }
  if (c.has("schedule") && c.has("random_commands"))
    c.fail("random_commands", "give either a schedule or random_commands, not both");
  if (c.has("schedule")) {
    if (!c.is_list("schedule")) c.fail("schedule", "expected a list of {t, forward_speed, ...}");
    const std::vector<Config> entries = c.list("schedule");
    if (entries.empty()) c.fail("schedule", "is empty");
    for (size_t i = 0; i < entries.size(); ++i) {
      const Config& e = entries[i];
      e.check_known_keys({"t", "forward_speed", "lateral_speed", "yaw_rate", "height"});
      const double t = e.get<double>("t");
      if (!(t >= 0 && t <= kMpcMaxTime)) e.fail("t", "must lie in [0, " + mpc_num(kMpcMaxTime) + "], got " + mpc_num(t));
      if (!spec.schedule.empty() && !(t > spec.schedule.back().t_start))
        e.fail("t", "the schedule's times must increase, got " + mpc_num(t) + " after " +
                        mpc_num(spec.schedule.back().t_start));
      if (i == 0 && t > 0) spec.schedule.push_back({0.0, base});  // `command:` until the first entry
      spec.schedule.push_back({t, mpc_read_command(e, base)});
    }
  } else {
    spec.schedule.push_back({0.0, base});
  }
  if (c.has("random_commands")) {
    const Config r = c.at("random_commands");
    r.check_known_keys({"every", "forward_speed", "lateral_speed", "yaw_rate", "height", "seed"});
    RandomCommandSpec rs;
    rs.every = mpc_positive(r, "every", rs.every, kMpcMaxTime);
    rs.forward_speed = mpc_range(r, "forward_speed", base.forward_speed, -kMpcMaxSpeed, kMpcMaxSpeed);
    rs.lateral_speed = mpc_range(r, "lateral_speed", base.lateral_speed, -kMpcMaxSpeed, kMpcMaxSpeed);
    rs.yaw_rate = mpc_range(r, "yaw_rate", base.yaw_rate, -kMpcMaxYawRate, kMpcMaxYawRate);
    rs.height = mpc_range(r, "height", base.height, 0.0, kMpcMaxHeight, true);
    rs.seed = static_cast<std::uint64_t>(r.get_int_in_range("seed", 0, 0, std::numeric_limits<long long>::max()));
    spec.random = rs;
  }

  if (network) {
    if (!c.has("weights")) c.fail("weights", "controls of type 'mpc_network' need a network file (weights: FILE)");
    spec.weights_path = c.path("weights");
    spec.network_name = c.get_or("network", "");
    spec.weights_named_by =
        c.where("weights") + ", key '" + (c.prefix().empty() ? "" : c.prefix() + ".") + "weights'";
  }

  try {
    o.check();
  } catch (const InvalidArgument& e) {
    c.fail("type", e.what());
  }
  return spec;
}

namespace {
std::shared_ptr<const nn::Mlp> read_and_check_mpc_network(const MpcControllerSpec& spec) {
  std::string name = spec.network_name;
  if (name.empty()) {
    const std::vector<std::string> names = network_names(spec.weights_path);
    if (names.size() != 1) {
      std::string list;
      for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
      throw DataError(spec.weights_path + ": holds " + std::to_string(names.size()) + " networks (" + list +
                      "); choose one with controls.network");
    }
    name = names.front();
  }
  NamedNetwork net = read_network(spec.weights_path, name);
  NetworkExpectations expect;
  expect.inputs = QuadrupedFeatures::size(spec.options.mpc.horizon);
  expect.outputs = 3 * kNumLegs;                             // the first interval's forces
  check_network(net, expect, spec.weights_path);
  return std::make_shared<const nn::Mlp>(std::move(net.network));
}
}  // namespace

std::shared_ptr<const nn::Mlp> read_mpc_network(const MpcControllerSpec& spec) {
  try {
    return read_and_check_mpc_network(spec);
  } catch (const DataError& e) {
    // The file's own message first (file, dataset, expected vs actual),
    // then where the config named it.
    if (spec.weights_named_by.empty()) throw;
    throw DataError(std::string(e.what()) + " (named by " + spec.weights_named_by + ")");
  }
}

MpcRolloutController::MpcRolloutController(const Model<double>& model, const MpcControllerSpec& spec,
                                           int trajectory_index, std::shared_ptr<const nn::Mlp> network)
    : controller_(std::make_unique<QuadrupedController>(model, spec.options)),
      random_(spec.random),
      trajectory_index_(trajectory_index),
      network_(std::move(network)) {
  controller_->set_schedule(spec.schedule);
  if (random_) {
    segment_ = 0;
    controller_->set_command(random_->command(trajectory_index_, 0));
  }
  if (network_) {
    if (network_->input_dim() != controller_->num_features() || network_->output_dim() != 3 * kNumLegs)
      throw InvalidArgument("MpcRolloutController: the network maps " + std::to_string(network_->input_dim()) +
                            " -> " + std::to_string(network_->output_dim()) + ", the controller needs " +
                            std::to_string(controller_->num_features()) + " -> 12");
    workspace_ = std::make_shared<nn::Workspace<double>>(*network_);
    const nn::Mlp* net = network_.get();
    nn::Workspace<double>* ws = workspace_.get();
    controller_->set_force_policy(
        [net, ws](const Eigen::Ref<const Eigen::VectorXd>& x, Eigen::Ref<Eigen::VectorXd> f) {
          net->forward(x.data(), x.size(), f.data(), f.size(), *ws);
        });
  }
}

QuadrupedCommand MpcRolloutController::command_at(double t) const {
  if (!random_) return controller_->command_at(t);
  return random_->command(trajectory_index_, static_cast<long long>(std::floor(std::max(0.0, t) / random_->every)));
}

void MpcRolloutController::compute(long long k, double t, const Eigen::VectorXd& q, const Eigen::VectorXd& qd,
                                   Eigen::VectorXd& u) {
  if (random_) {
    const long long s = static_cast<long long>(std::floor(std::max(0.0, t) / random_->every));
    if (s != segment_) {
      segment_ = s;
      controller_->set_command(random_->command(trajectory_index_, s));
    }
  }
  controller_->compute(k, t, q, qd, u);
}

void add_mpc_controllers(ControllerRegistry& registry, const StepOptions& step) {
  registry.add("mpc", [step](const Config& c, const Model<double>& model, int index, const TrajectorySet*) {
    const MpcControllerSpec spec = read_mpc_controller_spec(c, model, step, false);
    try {
      return std::make_unique<MpcRolloutController>(model, spec, index);
    } catch (const ModelError& e) {
      c.fail("feet", e.what());
    }
  });
  // The network is read once per file and shared by every trajectory's controller.
  struct Cache {
    std::mutex mutex;
    std::string path, name;
    std::shared_ptr<const nn::Mlp> network;
  };
  auto cache = std::make_shared<Cache>();
  registry.add("mpc_network", [step, cache](const Config& c, const Model<double>& model, int index,
                                            const TrajectorySet*) {
    const MpcControllerSpec spec = read_mpc_controller_spec(c, model, step, true);
    std::shared_ptr<const nn::Mlp> net;
    {
      std::lock_guard<std::mutex> lock(cache->mutex);
      if (!cache->network || cache->path != spec.weights_path || cache->name != spec.network_name ||
          cache->network->input_dim() != 25 + kNumLegs * spec.options.mpc.horizon) {
        cache->network = read_mpc_network(spec);
        cache->path = spec.weights_path;
        cache->name = spec.network_name;
      }
      net = cache->network;
    }
    try {
      return std::make_unique<MpcRolloutController>(model, spec, index, net);
    } catch (const ModelError& e) {
      c.fail("feet", e.what());
    }
  });
}

}  // namespace neuralsim
