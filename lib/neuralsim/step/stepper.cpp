#include "neuralsim/step/stepper.hpp"

#include <sstream>

namespace neuralsim {

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

void throw_bad_state_size(long nq, long nv, long nu, int model_nq, int model_nv) {
  std::ostringstream msg;
  msg << "Stepper::step: q, q̇ and the control have sizes " << nq << ", " << nv << ", " << nu
      << "; the model needs nq = " << model_nq << ", nv = " << model_nv << ", nv = " << model_nv;
  throw InvalidArgument(msg.str());
}
}  // namespace internal

}  // namespace neuralsim
