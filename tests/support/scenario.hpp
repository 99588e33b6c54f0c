// Runs a shipped contact config through the library (model, step options,
// first initial state, controls, contact system), step by step, so tests
// can observe the state and the contacts between steps.
#pragma once

#include <memory>
#include <random>

#include "neuralsim/contact/contact_system.hpp"
#include "neuralsim/experiment/experiment.hpp"
#include "support/test_models.hpp"

namespace neuralsim::testing {

class Scenario {
 public:
  explicit Scenario(const std::string& config, const std::vector<std::string>& sets = {})
      : cfg_(Config::load(source_path("configs/" + config + ".yaml"), sets)),
        experiment(load_experiment(cfg_)),
        model(experiment.model),
        options(experiment.step),
        stepper(model, options) {
    std::mt19937_64 rng(1);
    const InitialState s = read_initial_states(cfg_.at("initial_states"), model, rng, 1000).front();
    q = s.q;
    qd = s.qd;
    u = Eigen::VectorXd::Zero(model.nv);
    const Config controls = cfg_.has("controls") ? cfg_.at("controls") : Config::parse("type: zero", "inline");
    controller = standard_controllers().make(controls, model, 0, nullptr);
    if (experiment.contact) contact = install_contact(*experiment.contact, model, stepper);
  }
  Scenario(const Scenario&) = delete;
  Scenario& operator=(const Scenario&) = delete;

  void step() {
    controller->compute(k, t, q, qd, u);
    stepper.step(q, qd, u, t);
    ++k;
    t = k * options.dt;
  }
  double duration() const { return cfg_.get<double>("sim.duration"); }
  long long steps(double seconds) const { return std::llround(seconds / options.dt); }
  const Config& config() const { return cfg_; }

 private:
  Config cfg_;
  Experiment experiment;

 public:
  const Model<double>& model;
  StepOptions options;
  Stepper<double> stepper;
  std::shared_ptr<ContactSystem<double>> contact;
  std::unique_ptr<Controller<double>> controller;
  Eigen::VectorXd q, qd, u;
  long long k = 0;
  double t = 0;
};

}  // namespace neuralsim::testing
