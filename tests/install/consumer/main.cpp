// A ten-line user of the installed library: a pendulum from YAML simulated
// for one second with RK4; prints its energy drift (run_consumer.cmake checks it).
#include <iostream>
#include "neuralsim/dynamics/energy.hpp"
#include "neuralsim/io/yaml_model.hpp"
#include "neuralsim/step/stepper.hpp"
int main(int argc, char** argv) {
  const neuralsim::Model<double> model = neuralsim::load_yaml_model(argv[argc - 1]);
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
