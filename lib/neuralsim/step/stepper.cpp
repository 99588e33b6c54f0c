#include "neuralsim/step/stepper.hpp"

#include <sstream>

namespace neuralsim {

Integrator integrator_from_name(const std::string& name) {
  if (name == "semi_implicit_euler" || name == "euler") return Integrator::kSemiImplicitEuler;
  if (name == "rk4") return Integrator::kRK4;
  throw ConfigError("unknown integrator '" + name + "' (expected semi_implicit_euler or rk4)");
}

const char* integrator_name(Integrator integrator) {
  return integrator == Integrator::kRK4 ? "rk4" : "semi_implicit_euler";
}

namespace internal {
void throw_non_finite(const std::string& what, int index, double t, double value) {
  std::ostringstream msg;
  msg << "simulation diverged at t = " << t << " s: " << what << " (coordinate " << index
      << ") is " << value << "; try a smaller time step, more substeps or rk4";
  throw NumericalError(msg.str());
}
}  // namespace internal

}  // namespace neuralsim
