// Simulators: a model with its step options, contact and neural
// augmentations; steps, whole rollouts in one call, and the exact
// vector–Jacobian product of a rollout by the library's reverse mode
// (parameters/hybrid_rollout.hpp, checkpointed).
#include <chrono>
#include <limits>
#include <map>
#include <optional>

#include "bindings.hpp"
#include "neuralsim/augment/augmented_dynamics.hpp"
#include "neuralsim/contact/contact_system.hpp"
#include "neuralsim/core/errors.hpp"
#include "neuralsim/experiment/augment_config.hpp"
#include "neuralsim/experiment/contact_config.hpp"
#include "neuralsim/step/simulate.hpp"
#include "neuralsim/experiment/experiment.hpp"
#include "neuralsim/parameters/hybrid_rollout.hpp"
#include "neuralsim/step/transition_jacobians.hpp"

namespace neuralsim::python {
namespace {

// The double-precision system a simulator steps: rebuilt when the model's
// parameters or the networks' weights change.
struct Runner {
  std::uint64_t generation = 0;
  std::unique_ptr<Stepper<double>> stepper;
  std::shared_ptr<ContactSystem<double>> contact;
  std::shared_ptr<AugmentedDynamics<double>> augment;
};

// The gradient of a rollout.
struct RolloutGradients {
  double loss = 0;
  std::map<std::string, double> parameters;  // ∂L/∂(named physical parameter)
  Eigen::VectorXd q0, qd0;                   // ∂L/∂q0 (raw coordinates), ∂L/∂q̇0
  Eigen::MatrixXd controls;                  // ∂L/∂u, T × nv
  Eigen::VectorXd weights;                   // ∂L/∂(network weights), in Simulator.weights order
};

using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

class Simulator {
 public:
  Simulator(ModelHandle model, StepOptions step, std::optional<ContactSettings> contact,
            std::vector<AugmentBlueprint> augment)
      : model_(std::move(model)), step_(step), contact_(std::move(contact)), augment_(std::move(augment)) {}

  const ModelHandle& model() const { return model_; }
  const StepOptions& options() const { return step_; }
  bool has_hooks() const { return contact_.has_value() || !augment_.empty(); }
  int nq() const { return model_->model.nq; }
  int nv() const { return model_->model.nv; }

  Eigen::VectorXd weights() const {
    std::vector<double> w;
    for (const AugmentBlueprint& b : augment_) {
      const double* p = b.network.parameters();
      w.insert(w.end(), p, p + b.network.num_parameters());
    }
    return Eigen::Map<const Eigen::VectorXd>(w.data(), static_cast<Eigen::Index>(w.size()));
  }
  void set_weights(const Eigen::VectorXd& w) {
    Eigen::Index k = 0;
    for (AugmentBlueprint& b : augment_) {
      b.network.set_parameters(w.data() + k);
      k += b.network.num_parameters();
    }
    ++weights_generation_;
  }
  Eigen::Index num_weights() const {
    Eigen::Index n = 0;
    for (const AugmentBlueprint& b : augment_) n += b.network.num_parameters();
    return n;
  }

  Runner& runner() {
    const std::uint64_t g = model_->generation * 1000003ULL + weights_generation_;
    if (!runner_.stepper || runner_.generation != g) {
      runner_ = Runner{};
      runner_.generation = g;
      runner_.stepper = std::make_unique<Stepper<double>>(model_->model, step_);
      if (contact_) runner_.contact = install_contact(*contact_, model_->model, *runner_.stepper);
      if (!augment_.empty())
        runner_.augment = install_augmentation<double>(augment_, model_->model, *runner_.stepper, runner_.contact.get());
    }
    return runner_;
  }

  // T steps from (q0, q̇0) under controls (T × nv): the states after each step.
  // T steps from (q0, q̇0) under controls (T × nv) into Q, QD (T × nq, T × nv,
  // row-major: numpy's layout). `poll` (may be empty) runs every 1000 steps,
  // before the stop flag is read.
  void rollout(const Eigen::VectorXd& q0, const Eigen::VectorXd& qd0, const Eigen::Ref<const RowMatrix>& controls,
               Eigen::Ref<RowMatrix> Q, Eigen::Ref<RowMatrix> QD, const RunContext& context,
               const std::function<void()>& poll = {}) {
    Eigen::VectorXd q = q0, qd = qd0;
    rollout_controls(*runner().stepper, q, qd, controls, Q, QD, [&] {
      if (poll) poll();
      return context.stop_requested();
    });
  }

  // ∂L/∂(parameters, q0, q̇0, controls, weights) for L = Σ_k <dQ_k, q_k> + <dQD_k, q̇_k> (the states
  // after steps 1..T), or the given loss.
  RolloutGradients vjp(const std::vector<std::string>& names, const Eigen::VectorXd& q0, const Eigen::VectorXd& qd0,
                       const Eigen::MatrixXd& controls, const TrajectoryLoss& loss) {
    HybridRollout& h = gradient_system(names);
    std::vector<double> x;
    for (const std::string& n : names)
      x.push_back(named_parameter_value(*resolve(n), model_->model, contact_ ? &contact_->parameters : nullptr, &qd0));
    const Eigen::VectorXd w = weights();
    x.insert(x.end(), w.data(), w.data() + w.size());
    HybridRolloutGradient g;
    h.gradient(x, q0, qd0, controls.transpose(), loss, g);
    RolloutGradients out;
    out.loss = g.loss;
    for (size_t i = 0; i < names.size(); ++i) out.parameters[names[i]] = g.x[static_cast<Eigen::Index>(i)];
    out.q0 = g.q0;
    out.qd0 = g.qd0;
    out.controls = g.controls.transpose();
    out.weights = g.x.tail(w.size());
    return out;
  }

 private:
  std::optional<NamedParameter> resolve(const std::string& name) const {
    std::optional<NamedParameter> p = resolve_named_parameter(name, model_->model, contact_.has_value());
    if (!p) throw ConfigError("parameters: " + unknown_parameter_message(name, model_->model, contact_.has_value()));
    return p;
  }

  // The double and tape systems of HybridRollout for `names`, kept while the
  // names and the model's parameters stay the same.
  HybridRollout& gradient_system(const std::vector<std::string>& names) {
    if (!gradient_ || gradient_names_ != names || gradient_generation_ != model_->generation ||
        gradient_weights_generation_ != weights_generation_) {
      std::vector<EstimatedParameter> params;
      for (const std::string& n : names) {
        EstimatedParameter p;
        p.target = *resolve(n);
        p.initial = named_parameter_value(p.target, model_->model, contact_ ? &contact_->parameters : nullptr, nullptr);
        params.push_back(p);
      }
      RolloutProblem problem;
      problem.model = model_->model;
      problem.step = step_;
      problem.contact = contact_;
      problem.augment = augment_;
      problem.physical = ParameterSet(params);
      gradient_ = std::make_unique<HybridRollout>(std::move(problem));
      gradient_names_ = names;
      gradient_generation_ = model_->generation;
      gradient_weights_generation_ = weights_generation_;
    }
    return *gradient_;
  }

  ModelHandle model_;
  StepOptions step_;
  std::optional<ContactSettings> contact_;
  std::vector<AugmentBlueprint> augment_;
  std::uint64_t weights_generation_ = 0;
  Runner runner_;
  std::unique_ptr<HybridRollout> gradient_;
  std::vector<std::string> gradient_names_;
  std::uint64_t gradient_generation_ = 0, gradient_weights_generation_ = 0;
};

// L = Σ_k <dQ_k, q_k> + <dQD_k, q̇_k>: the loss whose gradient is the VJP.
TrajectoryLoss vjp_loss(const Eigen::MatrixXd& dQ, const Eigen::MatrixXd& dQD) {
  TrajectoryLoss loss;
  loss.stage = [&dQ, &dQD](const LossState& s) {
    Rev acc(0.0);
    const Eigen::Index k = s.step - 1;
    for (Eigen::Index i = 0; i < dQ.cols(); ++i)
      if (dQ(k, i) != 0.0) acc = acc + dQ(k, i) * s.q[i];
    for (Eigen::Index i = 0; i < dQD.cols(); ++i)
      if (dQD(k, i) != 0.0) acc = acc + dQD(k, i) * s.qd[i];
    return acc;
  };
  return loss;
}

StepOptions step_options(double dt, const std::string& integrator, int substeps, bool check_finite) {
  const nlohmann::json sim{{"dt", dt}, {"integrator", integrator}, {"substeps", substeps}, {"check_finite", check_finite}};
  return read_step_options(Config::parse(sim.dump(), "<Simulator arguments>"));
}

std::unique_ptr<Simulator> make_simulator(ModelHandle model, double dt, const std::string& integrator, int substeps,
                                          bool check_finite, const py::object& contact, const py::object& augment) {
  const StepOptions step = step_options(dt, integrator, substeps, check_finite);
  std::optional<ContactSettings> c;
  if (!contact.is_none()) c = read_contact_settings(config_arg(contact, {}), model->model);
  std::vector<AugmentBlueprint> a;
  if (!augment.is_none()) {
    py::dict root;
    root["augment"] = augment;
    a = read_augment_section(config_arg(root, {}), model->model, c ? &*c : nullptr);
  }
  return std::make_unique<Simulator>(std::move(model), step, std::move(c), std::move(a));
}

}  // namespace

void bind_simulation(py::module_& m) {
  py::class_<RolloutGradients>(m, "RolloutGradients",
                               "The gradient of a loss through a rollout (Simulator.rollout_vjp, value_and_grad).")
      .def_readonly("loss", &RolloutGradients::loss)
      .def_readonly("parameters", &RolloutGradients::parameters, "∂L/∂(named physical parameter), by name.")
      .def_readonly("q0", &RolloutGradients::q0)
      .def_readonly("qd0", &RolloutGradients::qd0)
      .def_readonly("controls", &RolloutGradients::controls, "∂L/∂u, T × nv.")
      .def_readonly("weights", &RolloutGradients::weights, "∂L/∂(network weights), in Simulator.weights order.");

  py::class_<Simulator>(m, "Simulator", R"doc(
A model with its integrator, time step, contact and neural augmentations.
Simulator(model, dt, integrator="semi_implicit_euler", substeps=1,
check_finite=True, contact=None, augment=None): `contact` is a config's
`contact:` section and `augment` its `augment:` list, as dicts.
Simulator.from_config(config) builds one from an experiment config.)doc")
      .def(py::init(&make_simulator), py::arg("model"), py::arg("dt"), py::arg("integrator") = "semi_implicit_euler",
           py::arg("substeps") = 1, py::arg("check_finite") = true, py::arg("contact") = py::none(),
           py::arg("augment") = py::none())
      .def_static(
          "from_config",
          [](const py::handle& config, const std::vector<std::string>& overrides, const py::object& weights) {
            Experiment e = load_experiment(config_arg(config, overrides));
            if (!weights.is_none()) load_augment_weights(e.augment, py::str(py::module_::import("os").attr("fspath")(weights)));
            auto model = std::make_shared<SharedModel>(SharedModel{std::move(e.model), 0});
            return std::make_unique<Simulator>(std::move(model), e.step, std::move(e.contact), std::move(e.augment));
          },
          py::arg("config"), py::arg("overrides") = std::vector<std::string>{}, py::arg("weights") = py::none(),
          "The model, `sim:`, `contact:`, `augment:` and `params:` of an experiment config (a YAML path or a "
          "dict); `weights`: a train-augment weights file for the augment: networks.")
      .def_property_readonly("model", &Simulator::model, "The model (shared: changing its parameters changes the simulation).")
      .def_property_readonly("dt", [](const Simulator& s) { return s.options().dt; })
      .def_property_readonly("integrator", [](const Simulator& s) { return std::string(integrator_name(s.options().integrator)); })
      .def_property("weights", &Simulator::weights,
                    [](Simulator& s, const py::handle& w) { s.set_weights(vector_arg(w, "weights", s.num_weights())); },
                    "The augment: networks' weights, one float64 vector in blueprint order.")
      .def(
          "step",
          [](Simulator& s, const py::handle& q, const py::handle& qd, const py::handle& u, double t) {
            Eigen::VectorXd x = vector_arg(q, "q", s.nq()), v = vector_arg(qd, "qd", s.nv());
            const Eigen::VectorXd c = vector_arg(u, "u", s.nv());
            {
              py::gil_scoped_release release;
              s.runner().stepper->step(x, v, c, t);
            }
            return std::make_pair(x, v);
          },
          py::arg("q"), py::arg("qd"), py::arg("u"), py::arg("t") = 0.0, "One step: (q, q̇) after dt under joint forces u.")
      .def(
          "transition_jacobians",
          [](Simulator& s, const py::handle& q, const py::handle& qd, const py::handle& u, double t) {
            if (s.has_hooks())
              throw py::value_error("transition_jacobians: a simulator with contact or augment: networks is not "
                                    "supported (the Jacobians cover the smooth step without force hooks)");
            const Eigen::VectorXd x = vector_arg(q, "q", s.nq()), v = vector_arg(qd, "qd", s.nv());
            const Eigen::VectorXd c = vector_arg(u, "u", s.nv());
            TransitionJacobians J;
            {
              py::gil_scoped_release release;
              TransitionJacobianSolver(s.model()->model, s.options()).compute(x, v, c, t, J);
            }
            return std::make_pair(J.A, J.B);
          },
          py::arg("q"), py::arg("qd"), py::arg("u"), py::arg("t") = 0.0,
          "Exact Jacobians of one step, (A, B) = (∂x⁺/∂x, ∂x⁺/∂u) with x = (q, q̇) in tangent coordinates "
          "(q ⊕ δq; a free or ball joint has 3 rotation coordinates): A is 2nv × 2nv, B 2nv × nv "
          "(step/transition_jacobians.hpp). Not for simulators with contact or networks.")
      .def(
          "rollout",
          [](Simulator& s, const py::handle& q0, const py::handle& qd0, const py::handle& controls) {
            const Eigen::VectorXd q = vector_arg(q0, "q0", s.nq()), v = vector_arg(qd0, "qd0", s.nv());
            // The controls are read in place and the states written into the
            // numpy arrays returned: no copies of T-sized buffers.
            const auto u = rows_arg(controls, "controls", -1, s.nv());
            const Eigen::Index T = u.shape(0);
            py::array_t<double> Q({T, static_cast<Eigen::Index>(s.nq())}), QD({T, static_cast<Eigen::Index>(s.nv())});
            const Eigen::Map<const RowMatrix> U(u.data(), T, s.nv());
            Eigen::Map<RowMatrix> Qm(Q.mutable_data(), T, s.nq()), QDm(QD.mutable_data(), T, s.nv());
            // In this thread with the GIL released (no worker thread: a rollout is
            // often milliseconds); Python's signals are checked every 1000 steps.
            std::atomic<bool> stop{false};
            RunContext context;
            context.stop = &stop;
            {
              py::gil_scoped_release release;
              s.rollout(q, v, U, Qm, QDm, context, [&stop] {
                py::gil_scoped_acquire acquire;
                if (PyErr_CheckSignals() != 0) stop = true;  // the KeyboardInterrupt stays pending
              });
            }
            if (stop) throw py::error_already_set();
            return std::make_pair(Q, QD);
          },
          py::arg("q0"), py::arg("qd0"), py::arg("controls"),
          "T steps from (q0, q̇0) under controls (T × nv): (Q, QD), the states after each step (T × nq, T × nv). "
          "Ctrl-C stops it (KeyboardInterrupt).")
      .def(
          "rollout_vjp",
          [](Simulator& s, const py::handle& q0, const py::handle& qd0, const py::handle& controls, const py::handle& dQ,
             const py::handle& dQD, const std::vector<std::string>& parameters) {
            const Eigen::VectorXd q = vector_arg(q0, "q0", s.nq()), v = vector_arg(qd0, "qd0", s.nv());
            const Eigen::MatrixXd u = matrix_arg(controls, "controls", -1, s.nv());
            const Eigen::MatrixXd gq = matrix_arg(dQ, "dQ", u.rows(), s.nq()), gv = matrix_arg(dQD, "dQD", u.rows(), s.nv());
            RolloutGradients g;
            run_interruptibly([&](const RunContext&) { g = s.vjp(parameters, q, v, u, vjp_loss(gq, gv)); });
            return g;
          },
          py::arg("q0"), py::arg("qd0"), py::arg("controls"), py::arg("dQ"), py::arg("dQD"),
          py::arg("parameters") = std::vector<std::string>{},
          "The vector–Jacobian product of rollout(): given ∂L/∂Q and ∂L/∂QD (T × nq, T × nv), ∂L with respect "
          "to the named `parameters`, q0, q̇0, the controls and the network weights, exact (reverse mode).")
      .def(
          "value_and_grad",
          [](Simulator& s, const py::handle& q0, const py::handle& qd0, const py::handle& controls,
             const py::handle& target_q, const py::object& target_qd, double wq, double wqd,
             const std::vector<std::string>& parameters, bool terminal_only) {
            const Eigen::VectorXd q = vector_arg(q0, "q0", s.nq()), v = vector_arg(qd0, "qd0", s.nv());
            const Eigen::MatrixXd u = matrix_arg(controls, "controls", -1, s.nv());
            const Eigen::Index T = terminal_only ? 1 : u.rows();
            const Eigen::MatrixXd tq = matrix_arg(target_q, "target_q", T, s.nq());
            const Eigen::MatrixXd tv = target_qd.is_none() ? Eigen::MatrixXd::Zero(T, s.nv())
                                                           : matrix_arg(target_qd, "target_qd", T, s.nv());
            if (!(wq >= 0) || !(wqd >= 0)) throw py::value_error("wq, wqd: expected weights >= 0");
            TrajectoryLoss loss;
            LossTerm term = state_tracking_loss(tq.transpose(), tv.transpose(), Eigen::VectorXd::Constant(s.nq(), wq),
                                                Eigen::VectorXd::Constant(s.nv(), wqd));
            (terminal_only ? loss.terminal : loss.stage) = term;
            RolloutGradients g;
            run_interruptibly([&](const RunContext&) { g = s.vjp(parameters, q, v, u, loss); });
            return g;
          },
          py::arg("q0"), py::arg("qd0"), py::arg("controls"), py::arg("target_q"), py::arg("target_qd") = py::none(),
          py::arg("wq") = 1.0, py::arg("wqd") = 0.0, py::arg("parameters") = std::vector<std::string>{},
          py::arg("terminal_only") = false,
          "The state-tracking loss ½ Σ_k wq |q_k − q*_k|² + wqd |q̇_k − q̇*_k|² over the rollout (or of the final "
          "state only: terminal_only, targets of one row) and its exact gradient.");

  // For bench/python_bench.py: the same calls timed inside C++ (no Python,
  // no worker thread, no array conversion), the least of `repeats`.
  auto least_seconds = [](int repeats, const std::function<void()>& f) {
    double best = std::numeric_limits<double>::infinity();
    py::gil_scoped_release release;
    for (int r = 0; r < repeats; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      f();
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return best;
  };
  m.def("_benchmark_rollout", [least_seconds](Simulator& s, const py::handle& q0, const py::handle& qd0,
                                              const py::handle& controls, int repeats) {
    const Eigen::VectorXd q = vector_arg(q0, "q0", s.nq()), v = vector_arg(qd0, "qd0", s.nv());
    const RowMatrix u = matrix_arg(controls, "controls", -1, s.nv());
    RowMatrix Q(u.rows(), s.nq()), QD(u.rows(), s.nv());
    const RunContext context;
    return least_seconds(repeats, [&] { s.rollout(q, v, u, Q, QD, context); });
  });
  m.def("_benchmark_vjp", [least_seconds](Simulator& s, const py::handle& q0, const py::handle& qd0,
                                          const py::handle& controls, const py::handle& dQ, const py::handle& dQD,
                                          const std::vector<std::string>& parameters, int repeats) {
    const Eigen::VectorXd q = vector_arg(q0, "q0", s.nq()), v = vector_arg(qd0, "qd0", s.nv());
    const Eigen::MatrixXd u = matrix_arg(controls, "controls", -1, s.nv());
    const Eigen::MatrixXd gq = matrix_arg(dQ, "dQ", u.rows(), s.nq()), gv = matrix_arg(dQD, "dQD", u.rows(), s.nv());
    return least_seconds(repeats, [&] { s.vjp(parameters, q, v, u, vjp_loss(gq, gv)); });
  });
}

}  // namespace neuralsim::python
