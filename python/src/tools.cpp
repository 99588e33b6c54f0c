// The tools as Python functions: the library calls of lib/neuralsim/tools/
// on a config (a YAML path or a dict), returning their typed results.
#include <optional>

#include "bindings.hpp"
#include "neuralsim/tools/distill_mpc.hpp"
#include "neuralsim/tools/identify.hpp"
#include "neuralsim/tools/import_recordings.hpp"
#include "neuralsim/tools/rollout.hpp"
#include "neuralsim/tools/discover.hpp"
#include "neuralsim/tools/train_augment.hpp"
#include "neuralsim/tools/training_checkpoint.hpp"

namespace neuralsim::python {
namespace {

// "key=value" overrides from a list of such strings or a dict (values as JSON, which is YAML).
std::vector<std::string> overrides_arg(const py::handle& overrides) {
  std::vector<std::string> out;
  if (overrides.is_none()) return out;
  if (py::isinstance<py::dict>(overrides)) {
    const py::object dumps = py::module_::import("json").attr("dumps");
    for (const auto& [k, v] : py::reinterpret_borrow<py::dict>(overrides))
      out.push_back(std::string(py::str(k)) + "=" + std::string(py::str(dumps(v))));
    return out;
  }
  for (const py::handle& o : overrides) out.push_back(py::str(o));
  return out;
}

py::dict trajectories_dict(const TrajectorySet& set) {
  py::dict d;
  for (const Trajectory& t : set.trajectories) {
    py::dict one;
    one["time"] = t.time;
    one["q"] = t.q;
    one["qd"] = t.qd;
    if (t.has_tau()) one["tau"] = t.tau;
    for (const auto& [link, poses] : t.link_poses) one[py::str("pose." + link)] = poses;
    d[py::str(t.name)] = one;
  }
  return d;
}

// A CheckpointFile when a path is given.
struct Checkpoint {
  std::unique_ptr<CheckpointFile> file;
  Checkpoint(const py::object& path, bool resume) {
    if (!path.is_none()) file = std::make_unique<CheckpointFile>(py::str(py::module_::import("os").attr("fspath")(path)));
    if (resume && !file) throw py::value_error("resume: needs a checkpoint path");
  }
  RunContext with(const RunContext& c, bool resume) const {
    RunContext r = c;
    r.checkpoint = file.get();
    r.resume = resume;
    return r;
  }
};

template <class R>
void bind_report(py::class_<R>& c) {
  c.def_property_readonly("status", [](const R& r) { return std::string(run_status_name(r.status)); },
                          "\"ok\", \"interrupted\", \"diverged\", \"target_missed\" or \"gradient_check_failed\".")
      .def_readonly("message", &R::message)
      .def_readonly("warnings", &R::warnings)
      .def_readonly("timings", &R::timings);
}

py::list fits(const FitEvaluation& e) {
  py::list l;
  for (const TrajectoryFit& t : e.per_trajectory)
    l.append(py::dict(py::arg("name") = t.name, py::arg("rmse_q") = t.rmse_q,
                      py::arg("rmse_link_position") = t.rmse_link_position, py::arg("cost") = t.cost));
  return l;
}

py::dict torque_dict(const TorqueError& t) {
  py::dict per;
  for (size_t i = 0; i < t.names.size(); ++i) per[py::str(t.names[i])] = t.rmse_per_dof[static_cast<Eigen::Index>(i)];
  return py::dict(py::arg("rmse") = t.rmse, py::arg("rmse_per_joint") = per, py::arg("samples") = t.samples);
}

void bind_identify(py::module_& m) {
  py::class_<IdentificationResult> c(m, "IdentificationResult", "What identify() returns.");
  bind_report(c);
  c.def_readonly("model_name", &IdentificationResult::model_name)
      .def_readonly("configuration", &IdentificationResult::configuration,
                    "In `configurations`: the configuration's name (empty otherwise).")
      .def_readonly("configurations", &IdentificationResult::configurations,
                    "A joint fit (configurations:): each configuration's own result, in config order: its "
                    "parameters under their names in its model, its predictions (fitted, measured) and errors; "
                    "correlation and singular values are the joint vector's, in the top level's order.")
      .def_readonly("has_fit", &IdentificationResult::has_fit)
      .def_readonly("evaluate_only", &IdentificationResult::evaluate_only,
                    "The values were evaluated (evaluate=, or max_iterations 0), not fitted.")
      .def_readonly("cost", &IdentificationResult::cost)
      .def_property_readonly("parameters",
                             [](const IdentificationResult& r) {
                               py::dict d;
                               for (const auto& p : r.parameters) d[py::str(p.name)] = p.value;
                               return d;
                             },
                             "The fitted values, by name.")
      .def_property_readonly("std_errors",
                             [](const IdentificationResult& r) {
                               py::dict d;
                               for (const auto& p : r.parameters) d[py::str(p.name)] = p.std_error;
                               return d;
                             },
                             "Standard errors of the reported method (NaN: not determined by the data).")
      .def_property_readonly("covariance_method",
                             [](const IdentificationResult& r) {
                               return std::string(uncertainty_method_name(r.uncertainty.covariance.method));
                             })
      .def_property_readonly("correlation", [](const IdentificationResult& r) { return r.identifiability.correlation; })
      .def_property_readonly("singular_values", [](const IdentificationResult& r) { return r.identifiability.singular_values; })
      .def_property_readonly("identifiable",
                             [](const IdentificationResult& r) { return r.identifiability.weak_directions.empty(); })
      .def_property_readonly("weak_directions",
                             [](const IdentificationResult& r) {
                               py::list l;
                               for (const auto& d : r.identifiability.weak_directions)
                                 l.append(py::dict(py::arg("relative_singular_value") = d.relative_singular_value,
                                                   py::arg("description") = d.description,
                                                   py::arg("direction") = d.direction));
                               return l;
                             })
      .def_readonly("physically_consistent", &IdentificationResult::physically_consistent)
      .def_readonly("relative_error", &IdentificationResult::relative_error)
      .def_property_readonly("train", [](const IdentificationResult& r) { return fits(r.train); },
                             "Per training trajectory: prediction RMSE of q (and link positions), cost.")
      .def_property_readonly("validation",
                             [](const IdentificationResult& r) { return r.validation ? py::object(fits(*r.validation)) : py::none(); })
      .def_property_readonly("train_rmse_q", [](const IdentificationResult& r) { return r.train.mean_rmse_q; })
      .def_property_readonly("validation_rmse_q", [](const IdentificationResult& r) {
        return r.validation ? py::object(py::float_(r.validation->mean_rmse_q)) : py::none();
      })
      .def_property_readonly("train_torque", [](const IdentificationResult& r) {
        return r.train_torque ? py::object(torque_dict(r.train_torque->fitted)) : py::none();
      })
      .def_property_readonly("stop_reason", [](const IdentificationResult& r) { return r.search.stop_reason; })
      .def_property_readonly("rounds", [](const IdentificationResult& r) { return r.search.state.next_round; })
      .def_property_readonly("fitted", [](const IdentificationResult& r) { return trajectories_dict(r.fitted); },
                             "The fitted model's predictions, by trajectory (dicts of numpy arrays); a joint fit "
                             "has them in each of `configurations`.")
      .def_property_readonly("measured", [](const IdentificationResult& r) { return trajectories_dict(r.measured); },
                             "The recorded trajectories the fit compared with; a joint fit has them in each of "
                             "`configurations`.")
      .def_property_readonly("start_states",
                             [](const IdentificationResult& r) {
                               py::dict d;
                               for (const FittedStartStates& f : r.start_states)
                                 d[py::str(f.name)] = py::dict(py::arg("samples") = f.states.samples,
                                                               py::arg("q") = Eigen::MatrixXd(f.states.q),
                                                               py::arg("qd") = Eigen::MatrixXd(f.states.qd));
                               return d;
                             },
                             "Fitted starting states by training trajectory (residual.fit_initial_state, or "
                             "multiple shooting's segments): {samples, q, qd}, one row per window start.")
      .def("full_report", &IdentificationResult::full_report, "The identifiability report, as simid writes it.");

  m.def(
      "identify",
      [](const py::handle& config, const py::handle& overrides, long long seed, int threads, const py::object& checkpoint,
         bool resume, const py::object& evaluate) {
        const IdentificationRequest request{config_arg(config, overrides_arg(overrides)), seed,
                                            evaluate.is_none() ? std::string() : py::str(evaluate).cast<std::string>()};
        const Checkpoint store(checkpoint, resume);
        IdentificationResult r;
        run_interruptibly([&](const RunContext& c) { r = identify(request, store.with(c, resume)); }, threads);
        return r;
      },
      py::arg("config"), py::arg("overrides") = py::none(), py::arg("seed") = 0, py::arg("threads") = 0,
      py::arg("checkpoint") = py::none(), py::arg("resume") = false, py::arg("evaluate") = py::none(),
      "simid's fit of a config (a YAML path or a dict, docs/simid.md): IdentificationResult. `overrides`: "
      "{'key.path': value} or ['key.path=value']; `checkpoint`: a file saved every round (`resume` continues it); "
      "`evaluate`: a params.json whose values are evaluated instead of fitted (simid --evaluate).");
}

void bind_rollout(py::module_& m) {
  py::class_<RolloutResult> r(m, "RolloutResult", "What rollout() returns.");
  bind_report(r);
  r.def_property_readonly("trajectories", [](const RolloutResult& x) { return trajectories_dict(x.trajectories); })
      .def_readonly("num_samples", &RolloutResult::num_samples)
      .def_readonly("steps_per_second", &RolloutResult::steps_per_second)
      .def_property_readonly("targets", [](const RolloutResult& x) {
        py::list l;
        for (const TargetCheck& t : x.targets)
          l.append(py::dict(py::arg("trajectory") = t.trajectory, py::arg("link") = t.link, py::arg("distance") = t.distance,
                            py::arg("hit") = t.hit));
        return l;
      });
  m.def(
      "rollout",
      [](const py::handle& config, const py::handle& overrides, long long seed, int threads, const py::object& weights) {
        RolloutRequest request{config_arg(config, overrides_arg(overrides)), seed, ""};
        if (!weights.is_none()) request.weights_path = py::str(py::module_::import("os").attr("fspath")(weights));
        RolloutResult out;
        run_interruptibly([&](const RunContext& c) { out = rollout(request, c); }, threads);
        return out;
      },
      py::arg("config"), py::arg("overrides") = py::none(), py::arg("seed") = 0, py::arg("threads") = 0,
      py::arg("weights") = py::none(), "The rollout tool's simulation of a config (docs/rollout.md): RolloutResult.");

  py::class_<CompareResult> c(m, "CompareResult", "What compare() returns.");
  bind_report(c);
  c.def_property_readonly("predictions", [](const CompareResult& x) { return trajectories_dict(x.predictions); })
      .def_readonly("mean_rmse_q", &CompareResult::mean_rmse_q)
      .def_readonly("mean_rmse_qd", &CompareResult::mean_rmse_qd)
      .def_property_readonly("pooled", [](const CompareResult& x) {
        py::dict d;
        d["rmse_q"] = x.pooled.rmse_q;
        d["rmse_qd"] = x.pooled.rmse_qd;
        d["samples"] = x.pooled.samples;
        py::dict hz;
        for (const auto& [h, v] : x.pooled.rmse_q_by_horizon) hz[py::int_(h)] = v;
        d["rmse_q_by_horizon"] = hz;
        d["rmse_position"] = x.pooled.rmse_position;
        py::dict hp;
        for (const auto& [h, v] : x.pooled.rmse_position_by_horizon) hp[py::int_(h)] = v;
        d["rmse_position_by_horizon"] = hp;
        return d;
      }, "Errors pooled over every sample of every recording (docs/rollout.md, 'Pooled errors').")
      .def_property_readonly("per_trajectory", [](const CompareResult& x) {
        py::list l;
        for (const PredictionError& e : x.per_trajectory)
          l.append(py::dict(py::arg("name") = e.name, py::arg("rmse_q") = e.rmse_q, py::arg("rmse_qd") = e.rmse_qd,
                            py::arg("rmse_q_by_horizon") = e.rmse_q_by_horizon,
                            py::arg("position_links") = e.position_links, py::arg("rmse_position") = e.rmse_position,
                            py::arg("rmse_position_by_horizon") = e.rmse_position_by_horizon));
        return l;
      })
      .def_property_readonly("torque", [](const CompareResult& x) { return x.torque ? py::object(torque_dict(*x.torque)) : py::none(); });
  m.def(
      "compare",
      [](const py::handle& config, const py::handle& data, const py::handle& overrides, long long seed, int threads,
         const py::object& weights) {
        CompareRequest request{config_arg(config, overrides_arg(overrides)), seed,
                               py::str(py::module_::import("os").attr("fspath")(data)), ""};
        if (!weights.is_none()) request.weights_path = py::str(py::module_::import("os").attr("fspath")(weights));
        CompareResult out;
        run_interruptibly([&](const RunContext& c) { out = compare(request, c); }, threads);
        return out;
      },
      py::arg("config"), py::arg("data"), py::arg("overrides") = py::none(), py::arg("seed") = 0,
      py::arg("threads") = 0, py::arg("weights") = py::none(),
      "rollout --compare: replays recordings (HDF5 or a CSV-import description) with the config's model.");
}

py::list history(const TrainingState& s) {
  py::list l;
  for (const EpochRecord& e : s.history)
    l.append(py::dict(py::arg("epoch") = e.epoch, py::arg("train_loss") = e.train_loss,
                      py::arg("validation_loss") = e.validation_loss, py::arg("learning_rate") = e.learning_rate));
  return l;
}

void bind_training(py::module_& m) {
  py::class_<TrainAugmentResult> t(m, "TrainAugmentResult", "What train_augment() returns.");
  bind_report(t);
  t.def_readonly("trained_model", &TrainAugmentResult::trained_model)
      .def_readonly("num_parameters", &TrainAugmentResult::num_parameters)
      .def_property_readonly("epochs_completed", [](const TrainAugmentResult& r) { return r.state.epoch; })
      .def_property_readonly("best_epoch", [](const TrainAugmentResult& r) { return r.state.best_epoch; })
      .def_property_readonly("best_validation_loss", [](const TrainAugmentResult& r) { return r.state.best_validation; })
      .def_readonly("initial_validation_loss", &TrainAugmentResult::initial_validation_loss)
      .def_property_readonly("history", [](const TrainAugmentResult& r) { return history(r.state); })
      .def_property_readonly("best_parameters", [](const TrainAugmentResult& r) { return r.state.best_x; })
      .def_property_readonly("physical", [](const TrainAugmentResult& r) {
        py::dict d;
        for (const auto& [n, v] : r.trained.physical) d[py::str(n)] = v;
        return d;
      })
      .def_property_readonly("validation_rmse_q", [](const TrainAugmentResult& r) {
        return r.validation ? py::object(py::float_(r.validation->mean_rmse_q)) : py::none();
      });
  m.def(
      "train_augment",
      [](const py::handle& config, const py::handle& overrides, long long seed, int threads, const py::object& checkpoint,
         bool resume) {
        const TrainAugmentRequest request{config_arg(config, overrides_arg(overrides)), seed};
        const Checkpoint store(checkpoint, resume);
        TrainAugmentResult r;
        run_interruptibly([&](const RunContext& c) { r = train_augment(request, store.with(c, resume)); }, threads);
        return r;
      },
      py::arg("config"), py::arg("overrides") = py::none(), py::arg("seed") = 0, py::arg("threads") = 0,
      py::arg("checkpoint") = py::none(), py::arg("resume") = false,
      "train-augment on a config (docs/train-augment.md): TrainAugmentResult.");

  py::class_<DiscoverResult> disc(m, "DiscoverResult", "What discover() returns.");
  bind_report(disc);
  disc.def_readonly("verdict", &DiscoverResult::verdict)
      .def_readonly("explained_by_candidates", &DiscoverResult::explained_by_candidates)
      .def_readonly("explained_fraction", &DiscoverResult::explained)
      .def_readonly("sites", &DiscoverResult::sites)
      .def_readonly("analytical_validation_loss", &DiscoverResult::analytical_validation_loss)
      .def_readonly("dense_validation_loss", &DiscoverResult::dense_validation_loss)
      .def_readonly("chosen_validation_loss", &DiscoverResult::chosen_validation_loss)
      .def_readonly("chosen_lambda", &DiscoverResult::chosen_lambda)
      .def_readonly("retrained_validation_loss", &DiscoverResult::retrained_validation_loss)
      .def_readonly("augment_yaml", &DiscoverResult::augment_yaml)
      .def_property_readonly("groups",
                             [](const DiscoverResult& r) {
                               py::list l;
                               for (const DiscoverGroup& g : r.groups)
                                 l.append(py::dict(py::arg("site") = r.sites[static_cast<std::size_t>(g.site)],
                                                   py::arg("input") = g.input.empty() ? py::object(py::none())
                                                                                      : py::object(py::str(g.input)),
                                                   py::arg("value") = g.value, py::arg("label") = g.label,
                                                   py::arg("norm") = g.norm,
                                                   py::arg("removal_increase") = g.removal_increase,
                                                   py::arg("entry_lambda") = g.entry_lambda,
                                                   py::arg("entry_rank") = g.entry_rank,
                                                   py::arg("frequency") = g.frequency,
                                                   py::arg("selected") = g.selected));
                               return l;
                             })
      .def_property_readonly("selected", [](const DiscoverResult& r) {
        py::dict d;
        for (const AugmentBlueprint& bp : r.pruned) {
          py::list inputs;
          for (const AugmentInput& in : bp.inputs) inputs.append(in.name);
          d[py::str(bp.name)] = inputs;
        }
        return d;
      })
      .def_property_readonly("path", [](const DiscoverResult& r) {
        py::list l;
        if (!r.repetitions.empty())
          for (const DiscoverPathPoint& p : r.repetitions.front().points)
            l.append(py::dict(py::arg("lambda") = p.lambda, py::arg("train_loss") = p.train_loss,
                              py::arg("validation_loss") = p.validation_loss,
                              py::arg("selected_groups") = p.selected_groups));
        return l;
      });
  m.def(
      "discover",
      [](const py::handle& config, const py::handle& overrides, long long seed, int threads, const py::object& checkpoint,
         bool resume) {
        const DiscoverRequest request{config_arg(config, overrides_arg(overrides)), seed};
        const Checkpoint store(checkpoint, resume);
        DiscoverResult r;
        run_interruptibly([&](const RunContext& c) { r = discover(request, store.with(c, resume)); }, threads);
        return r;
      },
      py::arg("config"), py::arg("overrides") = py::none(), py::arg("seed") = 0, py::arg("threads") = 0,
      py::arg("checkpoint") = py::none(), py::arg("resume") = false,
      "discover on a config (docs/discover.md): DiscoverResult (groups with importances and selection "
      "frequencies, the path, the pruned augment: section as YAML).");

  py::class_<DistillResult> d(m, "DistillResult", "What distill_mpc() returns.");
  bind_report(d);
  d.def_readonly("system", &DistillResult::system)
      .def_property_readonly("dataset_samples", [](const DistillResult& r) { return r.dataset.size(); })
      .def_property_readonly("history", [](const DistillResult& r) { return r.training ? py::object(history(*r.training)) : py::none(); })
      .def_readonly("validation_rmse", &DistillResult::validation_rmse)
      .def_property_readonly("mpc_ok", [](const DistillResult& r) { return r.mpc ? py::object(py::int_(r.mpc->ok)) : py::none(); })
      .def_property_readonly("network_ok",
                             [](const DistillResult& r) { return r.with_network ? py::object(py::int_(r.with_network->ok)) : py::none(); });
  m.def(
      "distill_mpc",
      [](const py::handle& config, const py::handle& overrides, long long seed, int threads, const py::object& checkpoint,
         bool resume) {
        DistillRequest request{config_arg(config, overrides_arg(overrides)), seed, "", {}};
        const Checkpoint store(checkpoint, resume);
        DistillResult r;
        run_interruptibly([&](const RunContext& c) { r = distill_mpc(request, store.with(c, resume)); }, threads);
        return r;
      },
      py::arg("config"), py::arg("overrides") = py::none(), py::arg("seed") = 0, py::arg("threads") = 0,
      py::arg("checkpoint") = py::none(), py::arg("resume") = false,
      "distill-mpc on a config (docs/distill-mpc.md): DistillResult.");

  m.def(
      "import_recordings",
      [](const py::handle& config, bool with_validation) -> py::object {
        const ImportRequest request{config_arg(config, {})};
        ImportResult r;
        run_interruptibly([&](const RunContext& c) { r = import_recordings(request, c); });
        const bool split = !r.validation.trajectories.empty();
        if (split && !with_validation)
          throw py::value_error("import_recordings: the description's csv_import.split makes a validation part "
                                "(import-csv writes it to validation.h5); pass with_validation=True to get "
                                "(training, validation)");
        if (with_validation)
          return py::make_tuple(trajectories_dict(r.trajectories), trajectories_dict(r.validation));
        return trajectories_dict(r.trajectories);
      },
      py::arg("config"), py::arg("with_validation") = false,
      "import-csv: the trajectories of a CSV-import description, by name; with_validation=True returns "
      "(training, validation), the two parts of csv_import.split (validation empty without a split).");
}

}  // namespace

// --check-gradients of simid and train-augment (docs/gradients.md).
void bind_gradient_checks(py::module_& m) {
  py::class_<GradientCheckSummary>(m, "GradientCheckSummary", "A gradient against central differences, per coordinate.")
      .def_readonly("passed", &GradientCheckSummary::passed)
      .def_readonly("methods", &GradientCheckSummary::methods)
      .def_readonly("tolerance", &GradientCheckSummary::tolerance)
      .def_readonly("max_relative_error", &GradientCheckSummary::max_relative_error)
      .def_readonly("disagreeing", &GradientCheckSummary::disagreeing)
      .def_readonly("unresolved", &GradientCheckSummary::unresolved)
      .def_readonly("cost", &GradientCheckSummary::cost)
      .def_property_readonly("rows", [](const GradientCheckSummary& s) {
        py::list l;
        for (const GradientCheckRow& r : s.rows)
          l.append(py::dict(py::arg("name") = r.name, py::arg("value") = r.value, py::arg("gradient") = r.gradient,
                            py::arg("central_difference") = r.central_difference,
                            py::arg("central_difference_error") = r.difference_error,
                            py::arg("relative_error") = r.relative_error,
                            py::arg("verdict") = gradient_check_verdict_name(r.verdict)));
        return l;
      })
      .def("report", &GradientCheckSummary::report, "The table simid/train-augment --check-gradients print.");
  m.def(
      "check_identification_gradient",
      [](const py::handle& config, const py::handle& overrides, long long seed, int threads, double tolerance) {
        const IdentificationRequest request{config_arg(config, overrides_arg(overrides)), seed, ""};
        IdentificationGradientCheckOptions options;
        options.check.tolerance = tolerance;
        IdentificationGradientCheck r;
        run_interruptibly([&](const RunContext& c) { r = check_identification_gradient(request, options, c); }, threads);
        return r.check;
      },
      py::arg("config"), py::arg("overrides") = py::none(), py::arg("seed") = 0, py::arg("threads") = 0,
      py::arg("tolerance") = 1e-5,
      "simid --check-gradients: the fit's gradient (forward mode) against central differences at the initial values.");
  m.def(
      "check_training_gradient",
      [](const py::handle& config, const py::handle& overrides, long long seed, int threads, double tolerance,
         int max_weights) {
        const TrainAugmentRequest request{config_arg(config, overrides_arg(overrides)), seed};
        TrainingGradientCheckOptions options;
        options.check.tolerance = tolerance;
        options.max_weights = max_weights;
        TrainingGradientCheck r;
        run_interruptibly([&](const RunContext& c) { r = check_training_gradient(request, options, c); }, threads);
        return r.check;
      },
      py::arg("config"), py::arg("overrides") = py::none(), py::arg("seed") = 0, py::arg("threads") = 0,
      py::arg("tolerance") = 1e-5, py::arg("max_weights") = 40,
      "train-augment --check-gradients: the training loss's gradient (reverse mode) against central differences "
      "at the initial parameters (every physical parameter, `max_weights` network weights chosen by the seed).");
}

void bind_tools(py::module_& m) {
  bind_gradient_checks(m);
  bind_identify(m);
  bind_rollout(m);
  bind_training(m);
}

}  // namespace neuralsim::python
