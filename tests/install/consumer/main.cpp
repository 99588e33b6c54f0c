// A user of the installed library. With a pendulum model: one second with
// RK4, printing the energy drift. With a simid config: identify() fits it,
// printing each fitted value (run_consumer.cmake checks both).
#include <iostream>
#include <string>
#include "neuralsim/dynamics/energy.hpp"
#include "neuralsim/io/yaml_model.hpp"
#include "neuralsim/step/stepper.hpp"
#include "neuralsim/tools/identify.hpp"
int main(int argc, char** argv) {
  const std::string file = argv[argc - 1];
  if (file.find("simid_") != std::string::npos) {
    const neuralsim::IdentificationResult r = neuralsim::identify({neuralsim::Config::load(file), 1});
    for (const neuralsim::IdentifiedParameter& p : r.parameters) std::cout << "fitted " << p.name << " " << p.value << "\n";
    return r.status == neuralsim::RunStatus::kOk ? 0 : 1;
  }
  const neuralsim::Model<double> model = neuralsim::load_yaml_model(file);
  neuralsim::Stepper<double> stepper(model, {neuralsim::Integrator::kRK4, 1e-3, 1, true});
  Eigen::VectorXd q = Eigen::VectorXd::Constant(model.nq, 0.5), qd = Eigen::VectorXd::Zero(model.nv);
  auto energy = [&] {
    neuralsim::forward_kinematics(model, stepper.data(), q, qd);
    return neuralsim::kinetic_energy(model, stepper.data(), qd) + neuralsim::potential_energy(model, stepper.data(), q);
  };
  const double e0 = energy();
  for (int k = 0; k < 1000; ++k) stepper.step(q, qd, Eigen::VectorXd::Zero(model.nv), k * 1e-3);
  std::cout << "energy drift " << energy() - e0 << "\n";
}
