// Experiment 4 of train-augment (issue #12): policy search through the
// differentiable simulator. A small MLP policy (the cart force, as a
// `joint.slider.torque` augmentation site in residual mode, inputs the raw
// joint positions and velocities) is trained on a task loss either by
// backpropagation through time (HybridRollout::gradient, Adam) or by CMA-ES
// (train/evolution_strategy.hpp, loss values only), from the same initial
// weights, on the same loss and parameter vector. Reports iterations,
// loss evaluations and wall time to a stated success criterion, median and
// range over seeds, and the fraction of seeds that succeed within the
// budget (Degrave et al. 2016: 88 gradient iterations against 2 422 for
// CMA-ES on a 6-parameter problem; Liang & Lin 2020).
//
// TASK: cart-pole balance from tilted initial states (not the swing-up:
// see docs/train-augment-policy.md). Four fixed initial states; success =
// at the end of the 1 s episode, for every initial state, |angle from
// upright| < 0.1 rad, |angular velocity| < 0.5 rad/s, |cart| < 1.5 m, and
// the pole never beyond π/2 on the way.
//
// Usage: study_policy_search [--seeds N] [--quick] [--threads N] [--model PATH]
// Environment overrides (exploration; scripts/experiment_policy.sh uses
// STUDY_T and STUDY_THETA for its 3 s variants): STUDY_T (steps), STUDY_THETA
// (|θ0| of the first two states), STUDY_LR, STUDY_CLIP, STUDY_ITERS,
// STUDY_SIGMA, STUDY_EVALS, STUDY_FMAX, STUDY_OUTINIT, STUDY_COS (angle cost
// 2(1 - cos θ)), STUDY_NO_ES, STUDY_NO_BPTT, STUDY_VERBOSE (per-iteration
// BPTT losses and final states on stderr).
#include <tbb/enumerable_thread_specific.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "neuralsim/io/yaml_model.hpp"
#include "neuralsim/parameters/hybrid_rollout.hpp"
#include "neuralsim/train/evolution_strategy.hpp"
#include "neuralsim/train/optimizer.hpp"

using namespace neuralsim;

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// ---------------------------------------------------------------- task

struct Start {
  Eigen::VectorXd q0, qd0;  // [x, θ], [ẋ, θ̇]
};

struct Task {
  Model<double> model;
  StepOptions step;
  int steps = 50;        // 1 s at dt = 0.02 (3 s: neither method succeeded, see the notes)
  double force_max = 20;  // N: the policy output is force_max · tanh(·)
  std::vector<nn::Index> hidden = {8};
  double output_init = 0.1;  // scale of the output layer's initial weights
  std::vector<Start> starts;
  // Success tolerances (final state of every episode).
  double angle_tol = 0.1, rate_tol = 0.5, cart_tol = 1.5;
  double max_tilt = M_PI / 2;  // the pole never falls below the horizontal (no swing-back, no full turn)
};

Task make_task(const std::string& model_path) {
  Task t;
  t.model = load_yaml_model(model_path);
  t.step.dt = 0.02;
  t.step.integrator = Integrator::kSemiImplicitEuler;
  auto start = [](double x, double th, double xd, double thd) {
    Start s;
    s.q0 = Eigen::Vector2d(x, th);
    s.qd0 = Eigen::Vector2d(xd, thd);
    return s;
  };
  t.starts = {start(0, 0.6, 0, 0), start(0, -0.6, 0, 0), start(0.5, 0.2, 0, 1.0), start(-0.5, -0.2, 0, -1.0)};
  return t;
}

// The policy: u = F_max tanh(W2 tanh(W1 s + b1) + b2), s = (x, ẋ, θ, θ̇) raw
// (sin/cos features are not augmentation inputs; for a balance task the
// raw angle is adequate). Xavier-uniform weights from `seed`, zero biases.
AugmentBlueprint policy_blueprint(const Task& t, std::uint64_t seed) {
  AugmentBlueprint bp;
  bp.name = "policy";
  bp.site.quantity = SiteQuantity::kJointTorque;
  bp.site.joint = t.model.joint_index("slider");
  bp.mode = AugmentMode::kResidual;  // the cart has no passive force: u is the whole force
  for (const char* n : {"joint.slider.q", "joint.slider.qd", "joint.hinge.q", "joint.hinge.qd"}) {
    const auto in = find_augment_input(n, t.model, false);
    if (!in) throw InvalidArgument(std::string("study: no input ") + n);
    bp.inputs.push_back(*in);
  }
  std::vector<nn::LayerSpec> layers;
  for (nn::Index w : t.hidden) layers.push_back({w, nn::Activation::kTanh});
  layers.push_back({1, nn::Activation::kTanh});
  bp.network = nn::Mlp(total_input_size(bp.inputs), layers);
  std::mt19937_64 rng(seed);
  bp.network.initialize(nn::Init::kXavierUniform, rng);
  // The output layer starts small (× output_init): the initial policy is
  // nearly passive, so the cart does not run away before anything is learnt.
  {
    std::vector<double> w(static_cast<std::size_t>(bp.network.num_parameters()));
    bp.network.get_parameters(w.data());
    const nn::Index last = bp.network.num_layers() - 1;
    for (nn::Index i = bp.network.weight_offset(last); i < bp.network.bias_offset(last); ++i)
      w[static_cast<std::size_t>(i)] *= t.output_init;
    bp.network.set_parameters(w.data());
  }
  bp.network.set_output_scaling(Eigen::VectorXd::Constant(1, t.force_max), Eigen::VectorXd::Zero(1));
  check_blueprint(bp, t.model);
  return bp;
}

// Cost of the angle from upright: θ² (raw, not wrapped: a full turn is not
// upright). 2(1 - cos θ) was tried first and lets the optimizer "balance" by
// spinning the pole once round (θ → 2π), a local minimum both methods found.
bool g_cos_cost = false;
Rev angle_cost(const Rev& th) { return g_cos_cost ? 2.0 * (1.0 - cos(th)) : th * th; }

// Final state of an episode, as the terminal term saw it.
struct Final {
  double x = 0, theta = 0, xd = 0, thetad = 0;
};

// One simulator (double and Rev systems) with the task loss of one episode:
//   L = Σ_k dt (θ² + 0.1 θ̇² + 0.1 x² + 0.01 ẋ²)  +  θ_T² + 0.1 θ̇_T² + 0.1 x_T² + 0.1 ẋ_T²
// averaged over the initial states. No control cost: the loss sees the
// state only (TrajectoryLoss), the force is bounded by the tanh output.
// One per thread.
class Episodes {
 public:
  Episodes(const Task& task, const AugmentBlueprint& policy) : task_(task), controls_(Eigen::MatrixXd::Zero(2, task.steps)) {
    RolloutProblem p;
    p.model = task.model;
    p.step = task.step;
    p.augment = {policy};
    sim_ = std::make_unique<HybridRollout>(std::move(p));
    const double dt = task.step.dt;
    loss_.stage = [this, dt](const LossState& s) {
      max_tilt_ = std::max(max_tilt_, std::abs(s.q[1].value()));
      return dt * (angle_cost(s.q[1]) + 0.1 * s.qd[1] * s.qd[1] + 0.1 * s.q[0] * s.q[0] + 0.01 * s.qd[0] * s.qd[0]);
    };
    loss_.terminal = [this](const LossState& s) {
      last_ = {s.q[0].value(), s.q[1].value(), s.qd[0].value(), s.qd[1].value()};
      return angle_cost(s.q[1]) + 0.1 * s.qd[1] * s.qd[1] + 0.1 * s.q[0] * s.q[0] + 0.1 * s.qd[0] * s.qd[0];
    };
  }
  int size() const { return sim_->parameters().size(); }
  const Final& last() const { return last_; }
  double max_tilt() const { return max_tilt_; }
  std::vector<double> initial() const { return sim_->parameters().initial_variables(); }

  bool ok(const Final& f) const {
    return max_tilt_ < task_.max_tilt && std::abs(f.theta) < task_.angle_tol && std::abs(f.thetad) < task_.rate_tol &&
           std::abs(f.x) < task_.cart_tol;
  }
  // Loss of episode i (unscaled); sets *success to whether it meets the criterion.
  double value(const std::vector<double>& x, int i, bool* success) {
    const Start& s = task_.starts[static_cast<std::size_t>(i)];
    max_tilt_ = std::abs(s.q0[1]);
    const double L = sim_->value(x, s.q0, s.qd0, controls_, loss_);
    if (success) *success = ok(last_);
    return L;
  }
  double gradient(const std::vector<double>& x, int i, Eigen::VectorXd& g, bool* success) {
    const Start& s = task_.starts[static_cast<std::size_t>(i)];
    max_tilt_ = std::abs(s.q0[1]);
    const double L = sim_->gradient(x, s.q0, s.qd0, controls_, loss_, grad_);
    g = grad_.x;
    if (success) *success = ok(last_);
    return L;
  }
  // Mean loss over all initial states; *success: all of them succeed. A
  // diverged rollout (NumericalError) is +∞.
  double mean_value(const std::vector<double>& x, bool* success) {
    double L = 0;
    bool all = true;
    const int n = static_cast<int>(task_.starts.size());
    try {
      for (int i = 0; i < n; ++i) {
        bool ok_i = false;
        L += value(x, i, &ok_i);
        all = all && ok_i;
      }
    } catch (const NumericalError&) {
      if (success) *success = false;
      return std::numeric_limits<double>::infinity();
    }
    if (success) *success = all;
    return L / n;
  }

 private:
  const Task& task_;
  std::unique_ptr<HybridRollout> sim_;
  TrajectoryLoss loss_;
  Eigen::MatrixXd controls_;
  HybridRolloutGradient grad_;
  Final last_;
  double max_tilt_ = 0;  // max |θ| over the episode
};

// ---------------------------------------------------------------- methods

struct Run {
  bool success = false;
  int iterations = 0;          // gradient steps / generations until success (or the budget)
  long long evaluations = 0;   // loss evaluations (a gradient = 1: one forward + one reverse pass)
  double seconds = 0;
  double final_loss = 0;       // loss at the last evaluated / best point
};

struct BpttOptions {
  double learning_rate = 3e-2;
  double clip = 10;  // global-norm clipping of the gradient (Pascanu et al. 2013)
  int max_iterations = 300;
};

// BPTT + Adam: the gradient of the mean loss over the initial states (one
// Episodes per initial state, evaluated in parallel, summed in order).
Run run_bptt(const Task& task, const AugmentBlueprint& policy, const BpttOptions& o) {
  const int n = static_cast<int>(task.starts.size());
  std::vector<std::unique_ptr<Episodes>> eps;
  for (int i = 0; i < n; ++i) eps.push_back(std::make_unique<Episodes>(task, policy));
  std::vector<double> xs = eps[0]->initial();
  Eigen::VectorXd x = Eigen::Map<Eigen::VectorXd>(xs.data(), static_cast<Eigen::Index>(xs.size()));
  Adam adam(static_cast<int>(x.size()), AdamOptions{o.learning_rate});
  std::vector<Eigen::VectorXd> g(static_cast<std::size_t>(n));
  std::vector<double> L(static_cast<std::size_t>(n));
  std::vector<char> ok(static_cast<std::size_t>(n));
  Run r;
  const auto t0 = Clock::now();
  for (int it = 0; it <= o.max_iterations; ++it) {
    std::vector<double> xv(x.data(), x.data() + x.size());
    bool diverged = false;
    std::atomic<bool> bad{false};
    tbb::parallel_for(0, n, [&](int i) {
      bool s = false;
      try {
        L[static_cast<std::size_t>(i)] = eps[static_cast<std::size_t>(i)]->gradient(xv, i, g[static_cast<std::size_t>(i)], &s);
      } catch (const NumericalError&) {
        bad = true;
      }
      ok[static_cast<std::size_t>(i)] = s;
    });
    diverged = bad;
    ++r.evaluations;
    if (diverged) break;  // never observed with the bounded policy; reported as a failure
    Eigen::VectorXd grad = Eigen::VectorXd::Zero(x.size());
    double loss = 0;
    bool all = true;
    for (int i = 0; i < n; ++i) {
      grad += g[static_cast<std::size_t>(i)] / n;
      loss += L[static_cast<std::size_t>(i)] / n;
      all = all && ok[static_cast<std::size_t>(i)];
    }
    r.final_loss = loss;
    r.iterations = it;  // steps taken before this point
    if (std::getenv("STUDY_VERBOSE"))
      std::fprintf(stderr, "bptt %d loss %.4f |g| %.3g ok %d%d%d%d\n", it, loss, grad.norm(), ok[0], ok[1], ok[2], ok[3]);
    if (all) {
      r.success = true;
      break;
    }
    if (it == o.max_iterations) break;
    clip_gradient_norm(grad, o.clip);
    adam.step(x, grad);
  }
  r.seconds = seconds_since(t0);
  if (std::getenv("STUDY_VERBOSE")) {
    std::vector<double> xv(x.data(), x.data() + x.size());
    nn::Mlp net = policy.network;
    net.set_parameters(xv.data());
    nn::Workspace<double> ws(net);
    for (int i = 0; i < n; ++i) {
      bool s = false;
      const double L = eps[0]->value(xv, i, &s);
      const Start& st = task.starts[static_cast<std::size_t>(i)];
      double in[4] = {st.q0[0], st.qd0[0], st.q0[1], st.qd0[1]}, u = 0;
      net.forward(in, &u, ws);
      const Final& f = eps[0]->last();
      std::fprintf(stderr, "  episode %d: L %.3f ok %d final x %.3f th %.3f xd %.3f thd %.3f max tilt %.3f u0 %.3f\n", i, L,
                   int(s), f.x, f.theta, f.xd, f.thetad, eps[0]->max_tilt(), u);
    }
  }
  return r;
}

struct EsOptions {
  double sigma0 = 0.3;
  long long max_evaluations = 12000;
};

// CMA-ES on the same mean loss; one Episodes per TBB worker. Success: any
// sample of a generation meets the criterion (the most favourable reading
// for the ES: the best-ranked sample need not be the successful one).
Run run_cmaes(const Task& task, const AugmentBlueprint& policy, std::uint64_t seed, const EsOptions& o) {
  tbb::enumerable_thread_specific<std::unique_ptr<Episodes>> local;
  Episodes probe(task, policy);
  const std::vector<double> xs = probe.initial();
  const Eigen::VectorXd x0 = Eigen::Map<const Eigen::VectorXd>(xs.data(), static_cast<Eigen::Index>(xs.size()));
  std::atomic<bool> hit{false};
  auto f = [&](const Eigen::VectorXd& x) {
    std::unique_ptr<Episodes>& e = local.local();
    if (!e) e = std::make_unique<Episodes>(task, policy);
    bool s = false;
    const double v = e->mean_value(std::vector<double>(x.data(), x.data() + x.size()), &s);
    if (s) hit = true;
    return v;
  };
  CmaesOptions co;
  co.sigma0 = o.sigma0;
  co.seed = seed;
  co.max_evaluations = o.max_evaluations;
  co.tol_x = 0;
  co.tol_fun = 0;
  Run r;
  const auto t0 = Clock::now();
  const CmaesResult res = minimize_cmaes(f, x0, co, [&](const CmaesIteration& it) {
    r.iterations = it.generation;
    r.evaluations = it.evaluations;
    r.final_loss = it.best_ever_f;
    if (hit) r.success = true;
    return !r.success;
  });
  r.seconds = seconds_since(t0);
  r.final_loss = res.f;
  return r;
}

// ---------------------------------------------------------------- report

template <class T>
T median_of(std::vector<T> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  if (n == 0) return T(0);
  return n % 2 ? v[n / 2] : static_cast<T>((v[n / 2 - 1] + v[n / 2]) / 2);
}

std::string stat(const std::vector<double>& v, const char* fmt) {
  if (v.empty()) return "—";
  char a[64], b[64], c[64];
  std::snprintf(a, sizeof a, fmt, median_of(v));
  std::snprintf(b, sizeof b, fmt, *std::min_element(v.begin(), v.end()));
  std::snprintf(c, sizeof c, fmt, *std::max_element(v.begin(), v.end()));
  return std::string(a) + " [" + b + ", " + c + "]";
}

struct Summary {
  std::vector<double> iterations, evaluations, seconds;  // successful seeds only
  std::vector<double> all_seconds;
  int successes = 0, seeds = 0;
};

Summary summarize(const std::vector<Run>& runs) {
  Summary s;
  for (const Run& r : runs) {
    ++s.seeds;
    s.all_seconds.push_back(r.seconds);
    if (!r.success) continue;
    ++s.successes;
    s.iterations.push_back(r.iterations);
    s.evaluations.push_back(static_cast<double>(r.evaluations));
    s.seconds.push_back(r.seconds);
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  int seeds = 5, threads = 0;
  bool quick = false;
  std::string model_path = "configs/models/cartpole.yaml";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--seeds" && i + 1 < argc)
      seeds = std::max(1, std::atoi(argv[++i]));
    else if (a == "--threads" && i + 1 < argc)
      threads = std::max(1, std::atoi(argv[++i]));
    else if (a == "--model" && i + 1 < argc)
      model_path = argv[++i];
    else if (a == "--quick")
      quick = true;
    else {
      std::fprintf(stderr, "usage: study_policy_search [--seeds N] [--quick] [--threads N] [--model PATH]\n");
      return 2;
    }
  }
  std::unique_ptr<tbb::global_control> gc;
  if (threads > 0) gc = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism, threads);
  try {
    Task task = make_task(model_path);
    BpttOptions bo;
    EsOptions eo;
    if (quick) {
      bo.max_iterations = 100;
      eo.max_evaluations = 3000;
    }
    // Exploration overrides (not used by scripts/experiment_policy.sh).
    auto env = [](const char* n, double d) { const char* v = std::getenv(n); return v ? std::atof(v) : d; };
    bo.learning_rate = env("STUDY_LR", bo.learning_rate);
    bo.clip = env("STUDY_CLIP", bo.clip);
    eo.sigma0 = env("STUDY_SIGMA", eo.sigma0);
    bo.max_iterations = static_cast<int>(env("STUDY_ITERS", bo.max_iterations));
    eo.max_evaluations = static_cast<long long>(env("STUDY_EVALS", static_cast<double>(eo.max_evaluations)));
    task.force_max = env("STUDY_FMAX", task.force_max);
    task.output_init = env("STUDY_OUTINIT", task.output_init);
    g_cos_cost = env("STUDY_COS", 0) != 0;
    task.steps = static_cast<int>(env("STUDY_T", task.steps));
    const double big = env("STUDY_THETA", 0.3);
    task.starts[0].q0[1] = big;
    task.starts[1].q0[1] = -big;
    const bool skip_es = env("STUDY_NO_ES", 0) != 0, skip_bptt = env("STUDY_NO_BPTT", 0) != 0;
    std::vector<Run> bptt, es;
    int n_params = 0, lambda = 0;
    double t_value = 0, t_grad = 0;
    for (int s = 0; s < seeds; ++s) {
      const std::uint64_t seed = 1000 + static_cast<std::uint64_t>(s);
      const AugmentBlueprint policy = policy_blueprint(task, seed);
      if (s == 0) {  // cost of one loss value vs one gradient (all initial states, one thread)
        Episodes e(task, policy);
        n_params = e.size();
        lambda = Cmaes(Eigen::VectorXd::Zero(n_params), CmaesOptions{}).population();
        const std::vector<double> x = e.initial();
        Eigen::VectorXd g;
        const int reps = 20;
        auto t0 = Clock::now();
        for (int r = 0; r < reps; ++r) e.mean_value(x, nullptr);
        t_value = seconds_since(t0) / reps;
        t0 = Clock::now();
        for (int r = 0; r < reps; ++r)
          for (int i = 0; i < static_cast<int>(task.starts.size()); ++i) e.gradient(x, i, g, nullptr);
        t_grad = seconds_since(t0) / reps;
      }
      bptt.push_back(skip_bptt ? Run() : run_bptt(task, policy, bo));
      es.push_back(skip_es ? Run() : run_cmaes(task, policy, seed, eo));
      std::fprintf(stderr, "seed %d: bptt %s it %d (%.1f s), cma-es %s gen %d evals %lld (%.1f s)\n", s,
                   bptt.back().success ? "ok" : "FAIL", bptt.back().iterations, bptt.back().seconds,
                   es.back().success ? "ok" : "FAIL", es.back().iterations, es.back().evaluations, es.back().seconds);
    }
    const Summary sb = summarize(bptt), se = summarize(es);
    const int n_starts = static_cast<int>(task.starts.size());
    std::printf("### Cart-pole balance, θ0 = ±%.2g rad, %.1f s episodes\n\n", task.starts[0].q0[1],
                task.steps * task.step.dt);
    std::printf(
        "Task: cart-pole (%s: cart 1 kg, pole 0.1 kg, 1 m), balance from %d fixed initial states "
        "(x, θ, ẋ, θ̇) = (0, ±%.2g, 0, 0), (±0.5, ±0.2, 0, ±1.0); dt = %.2f s semi-implicit Euler, %d steps (%.1f s). "
        "Policy: MLP 4 → %d tanh → 1 tanh × %.0f N on the `joint.slider.torque` site (residual), inputs the raw "
        "joint positions and velocities; %d weights, Xavier-uniform from the seed, output layer × %g (a nearly passive start; the same start for both methods). "
        "Loss: mean over the initial states of Σ dt(θ² + 0.1θ̇² + 0.1x² + 0.01ẋ²) + θ_T² + 0.1θ̇_T² + 0.1x_T² + 0.1ẋ_T² (θ raw) "
        "(no control cost: a TrajectoryLoss sees only the state; the force is bounded by the tanh). "
        "Success: at t = %.1f s, for every initial state, |θ| < %.1f rad, |θ̇| < %.1f rad/s, |x| < %.1f m, and |θ| < π/2 throughout (the pole never falls; θ is not wrapped, so a full turn does not count as upright).\n\n",
        model_path.c_str(), n_starts, task.starts[0].q0[1], task.step.dt, task.steps, task.steps * task.step.dt,
        static_cast<int>(task.hidden[0]), task.force_max, n_params, task.output_init, task.steps * task.step.dt, task.angle_tol,
        task.rate_tol, task.cart_tol);
    std::printf(
        "Methods: **BPTT** = HybridRollout::gradient through the whole rollout (checkpointed reverse mode), Adam "
        "(α = %g, β = 0.9/0.999), gradient clipped to norm %g, budget %d steps. **CMA-ES** = (μ/μ_w, λ)-CMA-ES "
        "(Hansen 2016 defaults, λ = %d, μ = %d), σ0 = %g, loss values only, budget %lld evaluations; a generation "
        "succeeds if any of its samples does. One evaluation = the loss over the %d initial states (%d episodes); a "
        "BPTT iteration is one evaluation with its gradient (one forward + one reverse pass). Seeds: %d%s.\n\n",
        bo.learning_rate, bo.clip, bo.max_iterations, lambda, lambda / 2, eo.sigma0,
        static_cast<long long>(eo.max_evaluations), n_starts, n_starts, seeds, quick ? " (--quick budgets)" : "");
    std::printf("| method | succeeded | iterations to success | loss evaluations to success | wall time to success (s) |\n");
    std::printf("|---|---:|---:|---:|---:|\n");
    auto row = [&](const char* name, const Summary& s) {
      std::printf("| %s | %d / %d | %s | %s | %s |\n", name, s.successes, s.seeds, stat(s.iterations, "%.0f").c_str(),
                  stat(s.evaluations, "%.0f").c_str(), stat(s.seconds, "%.2f").c_str());
    };
    row("BPTT + Adam", sb);
    row("CMA-ES", se);
    std::printf("\nMedian [min, max] over the seeds that succeeded. Cost of one evaluation at the initial weights "
                "(one thread, all %d episodes): loss value %.2f ms, loss + gradient %.2f ms (%.1f×).\n\n",
                n_starts, 1e3 * t_value, 1e3 * t_grad, t_grad / t_value);
    std::printf("Per seed (iterations / evaluations / s; FAIL = budget exhausted):\n\n| seed | BPTT | CMA-ES |\n|---:|---|---|\n");
    for (int s = 0; s < seeds; ++s) {
      auto cell = [](const Run& r) {
        char b[128];
        std::snprintf(b, sizeof b, "%s%d / %lld / %.2f (loss %.3g)", r.success ? "" : "FAIL ", r.iterations,
                      r.evaluations, r.seconds, r.final_loss);
        return std::string(b);
      };
      std::printf("| %d | %s | %s |\n", 1000 + s, cell(bptt[static_cast<std::size_t>(s)]).c_str(),
                  cell(es[static_cast<std::size_t>(s)]).c_str());
    }
    std::printf("\n");
    // Conclusion from the numbers.
    if (sb.successes > 0 && se.successes > 0) {
      const double re = median_of(se.evaluations) / median_of(sb.evaluations);
      const double rt = median_of(se.seconds) / median_of(sb.seconds);
      std::printf(
          "**Conclusion.** BPTT succeeded on %d/%d seeds and CMA-ES on %d/%d; where both succeeded, CMA-ES needed "
          "%.1f× more loss evaluations (median %.0f vs %.0f) and %.1f× the wall time (median %.2f s vs %.2f s; a "
          "gradient costs %.1f× a loss value). %s\n",
          sb.successes, sb.seeds, se.successes, se.seeds, re, median_of(se.evaluations), median_of(sb.evaluations), rt,
          median_of(se.seconds), median_of(sb.seconds), t_grad / t_value,
          rt > 1.25 ? "BPTT is also faster in wall time here, in line with Degrave et al. (88 vs 2 422 iterations)."
          : rt > 0.8 ? "In wall time the two are comparable on this task: the gradient's cost and the ES's parallel "
                       "generations cancel BPTT's advantage in evaluations."
                     : "In wall time BPTT does NOT beat CMA-ES on this task.");
    } else {
      std::printf("**Conclusion.** BPTT succeeded on %d/%d seeds, CMA-ES on %d/%d within the budgets.\n", sb.successes,
                  sb.seeds, se.successes, se.seeds);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "study_policy_search: %s\n", e.what());
    return 1;
  }
  return 0;
}
