#include "neuralsim/experiment/distill_systems.hpp"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <mutex>
#include <random>

#include "neuralsim/contact/contact_system.hpp"
#include "neuralsim/control/push_perturbation.hpp"
#include "neuralsim/core/errors.hpp"
#include "neuralsim/core/splitmix.hpp"

namespace neuralsim {
namespace distill_systems_detail {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// ---------------------------------------------------------------- quadruped

class QuadrupedSystem final : public DistillSystem {
 public:
  QuadrupedSystem(const Experiment& exp, MpcControllerSpec spec, std::vector<InitialState> states, PushOptions pushes,
                  double min_height)
      : exp_(exp), spec_(std::move(spec)), states_(std::move(states)), pushes_(pushes), min_height_(min_height) {
    for (const std::string& f : spec_.options.foot_frames) feet_.insert(exp_.model.frames[exp_.model.frame_index(f)].body);
  }
  std::string kind() const override { return "quadruped"; }
  int num_features() const override { return QuadrupedFeatures::size(spec_.options.mpc.horizon); }
  int num_targets() const override { return 3 * kNumLegs; }
  std::string network_name() const override { return "mpc_forces"; }
  std::vector<std::string> feature_names() const override { return QuadrupedFeatures::names(spec_.options.mpc.horizon); }
  std::vector<std::string> target_names() const override {
    std::vector<std::string> n;
    for (const char* l : {"FR", "FL", "RR", "RL"})
      for (const char* a : {"x", "y", "z"}) n.push_back(std::string("force_") + l + "_" + a);
    return n;
  }
  long long samples_per_episode(double duration) const override {
    const double steps = std::ceil(duration / exp_.step.dt);
    // One solve every mpc_every steps, plus one at each contact change (at
    // most 2 per leg and gait cycle), plus the first.
    const double period = spec_.options.gait.duty_factor >= 1 ? 1e300 : spec_.options.gait.period;
    return static_cast<long long>(steps / spec_.options.mpc_every + 2.0 * kNumLegs * (duration / period + 1) + 2);
  }

  EpisodeResult run(int index, double duration, std::shared_ptr<const nn::Mlp> network, EpisodeSamples* samples,
                    bool trace) const override {
    const Model<double>& model = exp_.model;
    EpisodeResult r;
    Stepper<double> stepper(model, exp_.step);
    std::shared_ptr<ContactSystem<double>> contact;
    if (exp_.contact) contact = install_contact(*exp_.contact, model, stepper);
    auto schedule = std::make_shared<const PushSchedule>(pushes_, index, duration);
    if (!schedule->pushes().empty()) stepper.hooks().push_back(push_force_hook(schedule, 0));
    MpcRolloutController ctrl(model, spec_, index, network);
    const InitialState& s0 = states_[static_cast<size_t>(index) % states_.size()];
    Eigen::VectorXd q = s0.q, qd = s0.qd, u = Eigen::VectorXd::Zero(model.nv);
    const long long steps = static_cast<long long>(std::llround(duration / exp_.step.dt));
    const int nf = num_features();
    double sa = 0, sb = 0, sc = 0;
    for (long long k = 0; k < steps; ++k) {
      const double t = k * exp_.step.dt;
      const auto t0 = Clock::now();
      ctrl.compute(k, t, q, qd, u);
      const QuadrupedController& c = ctrl.controller();
      if (c.mpc_updated()) {
        r.update_seconds += seconds_since(t0);
        ++r.updates;
        const Eigen::VectorXd& f = c.features();
        using F = QuadrupedFeatures;
        const double height = f[F::kComHeight], forward = f[F::kComVelocity], lateral = f[F::kComVelocity + 1];
        const double yaw_rate = f[F::kOmega + 2];
        // Tracking errors as the MPC sees them (yaw frame): height, horizontal speed, yaw rate.
        const double ea = height - f[F::kCommandHeight];
        const double eb = std::hypot(forward - f[F::kCommandForward], lateral - f[F::kCommandLateral]);
        const double ec = yaw_rate - f[F::kCommandYawRate];
        sa += ea * ea;
        sb += eb * eb;
        sc += ec * ec;
        if (trace)
          r.trace.push_back({t, height, f[F::kCommandHeight], forward, f[F::kCommandForward], yaw_rate,
                             f[F::kCommandYawRate]});
        if (samples && c.last_qp_status() == QpStatus::kOptimal) {
          samples->features.insert(samples->features.end(), f.data(), f.data() + nf);
          const Eigen::VectorXd& y = c.mpc_forces();
          samples->targets.insert(samples->targets.end(), y.data(), y.data() + y.size());
          samples->time.push_back(t);
          ++samples->count;
        }
      }
      try {
        stepper.step(q, qd, u, t);
      } catch (const NumericalError& e) {
        r.ok = false;
        r.fall_time = t;
        r.reason = std::string("diverged: ") + e.what();
        break;
      }
      std::string why;
      if (q[2] < min_height_) why = "base height " + std::to_string(q[2]) + " m below " + std::to_string(min_height_);
      if (contact)
        for (int i = 0; i < contact->num_contacts() && why.empty(); ++i) {
          const Contact<double>& ct = contact->contacts()[i];
          if (ct.distance >= 0) continue;
          for (int b : {ct.body_a, ct.body_b})
            if (b >= 0 && !feet_.count(b)) why = "body '" + model.bodies[b].name + "' touches the ground";
        }
      if (!why.empty()) {
        r.ok = false;
        r.fall_time = t;
        r.reason = why;
        break;
      }
    }
    const double n = std::max<long long>(1, r.updates);
    r.err_a = std::sqrt(sa / n);
    r.err_b = std::sqrt(sb / n);
    r.err_c = std::sqrt(sc / n);
    return r;
  }

 private:
  const Experiment& exp_;
  MpcControllerSpec spec_;
  std::vector<InitialState> states_;
  PushOptions pushes_;
  double min_height_;
  std::set<int> feet_;
};

// ---------------------------------------------------------------- linear

class LinearSystem final : public DistillSystem {
 public:
  LinearSystem(LinearSystemSpec spec, PushOptions pushes, std::uint64_t seed)
      : spec_(std::move(spec)), pushes_(pushes), seed_(seed) {}
  std::string kind() const override { return "linear"; }
  int num_features() const override { return 2; }
  int num_targets() const override { return 1; }
  std::string network_name() const override { return "mpc_control"; }
  std::vector<std::string> feature_names() const override { return {"position", "velocity"}; }
  std::vector<std::string> target_names() const override { return {"force"}; }
  long long samples_per_episode(double duration) const override {
    return static_cast<long long>(std::ceil(duration / spec_.dt)) + 1;
  }

  EpisodeResult run(int index, double duration, std::shared_ptr<const nn::Mlp> network, EpisodeSamples* samples,
                    bool trace) const override {
    EpisodeResult r;
    LinearMpc mpc(spec_.mpc);
    std::mt19937_64 rng(splitmix64(splitmix64(seed_ ^ 0x6c696eULL) ^ static_cast<std::uint64_t>(index)));
    auto uniform = [&](const std::array<double, 2>& range) {
      return range[0] + (range[1] - range[0]) * nn::random::uniform01(rng);
    };
    Eigen::VectorXd x(2);
    x[0] = uniform(spec_.position);
    x[1] = uniform(spec_.velocity);
    // Pushes during the first 3/4 of the episode; the rest shows whether the
    // controller brings the state back to the origin.
    const PushSchedule schedule(pushes_, index, 0.75 * duration);
    std::unique_ptr<nn::Workspace<double>> ws;
    if (network) ws = std::make_unique<nn::Workspace<double>>(*network);
    const long long steps = static_cast<long long>(std::llround(duration / spec_.dt));
    double sa = 0, sb = 0;
    Eigen::VectorXd u(1);
    for (long long k = 0; k < steps; ++k) {
      const double t = k * spec_.dt;
      const auto t0 = Clock::now();
      bool optimal = true;
      if (network) {
        network->forward(x.data(), u.data(), *ws);
      } else {
        optimal = mpc.solve(x) == QpStatus::kOptimal;
        if (optimal) u = mpc.first_control();
      }
      r.update_seconds += seconds_since(t0);
      ++r.updates;
      if (samples && optimal && !network) {
        samples->features.insert(samples->features.end(), x.data(), x.data() + 2);
        samples->targets.push_back(u[0]);
        samples->time.push_back(t);
        ++samples->count;
      }
      // The actuator saturates at the MPC's limits, whoever commands it.
      if (spec_.mpc.u_min.size()) u[0] = std::clamp(u[0], spec_.mpc.u_min[0], spec_.mpc.u_max[0]);
      if (trace) r.trace.push_back({t, x[0], 0.0, x[1], 0.0, u[0], 0.0});
      sa += x[0] * x[0];
      sb += x[1] * x[1];
      x = spec_.mpc.A * x + spec_.mpc.B * (u[0] + schedule.force_at(t).x());
      if (!x.allFinite() || x.norm() > 1e12) {
        r.ok = false;
        r.reason = "diverged";
        r.fall_time = t;
        break;
      }
    }
    const double n = std::max<long long>(1, steps);
    r.err_a = std::sqrt(sa / n);
    r.err_b = std::sqrt(sb / n);
    r.err_c = x.norm();
    if (r.ok && !(std::abs(x[0]) <= spec_.stable_tolerance && std::abs(x[1]) <= spec_.stable_tolerance)) {
      r.ok = false;
      r.reason = "not at the origin at the end: x = " + std::to_string(x[0]) + ", v = " + std::to_string(x[1]);
    }
    return r;
  }

 private:
  LinearSystemSpec spec_;
  PushOptions pushes_;
  std::uint64_t seed_;
};

// Every rank's episodes (result, trace, samples) to every rank.
void exchange_episodes(const Communicator& comm, std::vector<EpisodeResult>& results,
                       std::vector<EpisodeSamples>* samples) {
  auto pack = [&](std::size_t e, ByteWriter& w) {
    const EpisodeResult& r = results[e];
    w.put<std::uint8_t>(r.ok);
    w.put(r.fall_time);
    w.put_string(r.reason);
    w.put(r.err_a);
    w.put(r.err_b);
    w.put(r.err_c);
    w.put<std::int64_t>(r.updates);
    w.put(r.update_seconds);
    w.put<std::uint64_t>(r.trace.size());
    for (const TraceRow& t : r.trace) w.put(t);
    if (samples) {
      const EpisodeSamples& s = (*samples)[e];
      w.put_vector(s.features);
      w.put_vector(s.targets);
      w.put_vector(s.time);
      w.put<std::int64_t>(s.count);
    }
  };
  auto unpack = [&](std::size_t e, ByteReader& in) {
    EpisodeResult& r = results[e];
    r.ok = in.get<std::uint8_t>() != 0;
    r.fall_time = in.get<double>();
    r.reason = in.get_string();
    r.err_a = in.get<double>();
    r.err_b = in.get<double>();
    r.err_c = in.get<double>();
    r.updates = in.get<std::int64_t>();
    r.update_seconds = in.get<double>();
    r.trace.resize(in.get<std::uint64_t>());
    for (TraceRow& t : r.trace) t = in.get<TraceRow>();
    if (samples) {
      EpisodeSamples& s = (*samples)[e];
      s.features = in.get_vector();
      s.targets = in.get_vector();
      s.time = in.get_vector();
      s.count = in.get<std::int64_t>();
    }
  };
  exchange_owned(comm, results.size(), pack, unpack);
}

}  // namespace distill_systems_detail

std::unique_ptr<DistillSystem> make_quadruped_system(const Experiment& experiment, MpcControllerSpec spec,
                                                     std::vector<InitialState> states, PushOptions pushes,
                                                     double min_height) {
  return std::make_unique<distill_systems_detail::QuadrupedSystem>(experiment, std::move(spec), std::move(states),
                                                                   pushes, min_height);
}

std::unique_ptr<DistillSystem> make_linear_system(LinearSystemSpec spec, PushOptions pushes, std::uint64_t seed) {
  return std::make_unique<distill_systems_detail::LinearSystem>(std::move(spec), pushes, seed);
}

// Runs `episodes` episodes in parallel (each into its own slot, so the
// result does not depend on the thread count).
std::vector<EpisodeResult> run_episodes(const DistillSystem& sys, int first_index, int episodes, double duration,
                                        std::shared_ptr<const nn::Mlp> net, std::vector<EpisodeSamples>* samples,
                                        const std::function<void()>& on_episode, const std::atomic<bool>* stop,
                                        const Communicator* comm) {
  std::vector<EpisodeResult> results(static_cast<size_t>(episodes));
  if (samples) samples->assign(static_cast<size_t>(episodes), EpisodeSamples{});
  std::exception_ptr error;
  std::mutex m;
  tbb::parallel_for(0, episodes, [&](int e) {
    try {
      if (!owns(comm, e) || (stop && stop->load())) return;
      EpisodeSamples* s = samples ? &(*samples)[static_cast<size_t>(e)] : nullptr;
      if (s) {
        const long long cap = sys.samples_per_episode(duration);
        s->features.reserve(static_cast<size_t>(cap * sys.num_features()));
        s->targets.reserve(static_cast<size_t>(cap * sys.num_targets()));
        s->time.reserve(static_cast<size_t>(cap));
      }
      results[static_cast<size_t>(e)] = sys.run(first_index + e, duration, net, s, e == 0);
      if (on_episode) on_episode();
    } catch (...) {
      std::lock_guard<std::mutex> lock(m);
      if (!error) error = std::current_exception();
    }
  });
  if (error) std::rethrow_exception(error);
  if (comm) distill_systems_detail::exchange_episodes(*comm, results, samples);
  return results;
}

DistillDataset assemble_dataset(const DistillSystem& sys, const std::vector<EpisodeSamples>& eps) {
  DistillDataset d;
  d.system = sys.kind();
  d.feature_names = sys.feature_names();
  d.target_names = sys.target_names();
  long long n = 0;
  for (const EpisodeSamples& e : eps) n += e.count;
  d.features.resize(n, sys.num_features());
  d.targets.resize(n, sys.num_targets());
  d.episode.resize(n);
  d.time.resize(n);
  long long row = 0;
  for (size_t e = 0; e < eps.size(); ++e)
    for (long long k = 0; k < eps[e].count; ++k, ++row) {
      d.features.row(row) = Eigen::Map<const Eigen::RowVectorXd>(eps[e].features.data() + k * sys.num_features(),
                                                                  sys.num_features());
      d.targets.row(row) =
          Eigen::Map<const Eigen::RowVectorXd>(eps[e].targets.data() + k * sys.num_targets(), sys.num_targets());
      d.episode[row] = static_cast<double>(e);
      d.time[row] = eps[e].time[static_cast<size_t>(k)];
    }
  return d;
}

}  // namespace neuralsim
