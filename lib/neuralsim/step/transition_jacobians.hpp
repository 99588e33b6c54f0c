// Exact Jacobians of one simulation step, x⁺ = f(x, u), with x = (q, q̇):
//
//   A = ∂x⁺/∂x  (2nv × 2nv),   B = ∂x⁺/∂u  (2nv × nv),
//
// in tangent coordinates: a configuration is perturbed as q ⊕ δq and the
// result measured as q⁺ ⊖ q̄⁺ (model/configuration.hpp), so a free or
// spherical joint contributes 3 rotation coordinates, not 4 quaternion
// components, and A is square. Rows and columns are ordered [δq; δq̇].
//
// What a linearization for MPC or iLQR, an extended Kalman filter or a
// forward-sensitivity fit needs; MuJoCo offers the same only by finite
// differences (mjd_transitionFD). The step is the Stepper's (StepOptions:
// semi-implicit Euler or RK4, substeps; the control held over the step),
// with everything passive_forces applies (damping, springs, friction,
// armature, gear ratios, torque offsets) and no force hooks (contact,
// drag, networks).
//
// Method: semi-implicit Euler (no motor rotors, no body drag) analytically,
// from aba_derivatives (∂q̈/∂q, ∂q̈/∂q̇, M⁻¹) per substep, the passive forces'
// diagonal derivatives and the manifold update linearized joint by joint
// (transition_jacobians.cpp, AnalyticStep; ~15x faster on Laikago). RK4,
// rotors and body drag: forward-mode differentiation of the step itself, 8
// directions per pass (the engine's Jet8 instantiation): ⌈(3 nv)/8⌉ passes.
// Both exact to rounding. Where the step is not differentiable (a friction
// law's kink is smoothed; a quaternion's sign flip is not), the one-sided
// derivative of the branch the nominal state takes is returned.
#pragma once

#include <memory>

#include <Eigen/Core>

#include "neuralsim/step/stepper.hpp"

namespace neuralsim {

struct TransitionJacobians {
  Eigen::MatrixXd A;  // 2nv × 2nv, ∂[δq⁺; δq̇⁺]/∂[δq; δq̇]
  Eigen::MatrixXd B;  // 2nv × nv,  ∂[δq⁺; δq̇⁺]/∂u
  Eigen::VectorXd q_next, qd_next;  // the nominal step's result
};

// Holds the differentiated copy of the model and the workspace: compute()
// allocates nothing after the first call.
class TransitionJacobianSolver {
 public:
  // InvalidArgument when `options` are invalid (the Stepper's checks).
  TransitionJacobianSolver(const Model<double>& model, const StepOptions& options);
  ~TransitionJacobianSolver();
  TransitionJacobianSolver(const TransitionJacobianSolver&) = delete;
  TransitionJacobianSolver& operator=(const TransitionJacobianSolver&) = delete;

  // One step of options.dt from (q, q̇) at time t under `control` (length
  // nv, before gear ratios, as Stepper::step takes it). InvalidArgument on
  // wrong sizes or non-finite input; NumericalError when the step diverges.
  void compute(const Eigen::VectorXd& q, const Eigen::VectorXd& qd, const Eigen::VectorXd& control, double t,
               TransitionJacobians& out);

 private:
  void compute_with_jets(const Eigen::VectorXd& q, const Eigen::VectorXd& qd, const Eigen::VectorXd& control,
                         double t, TransitionJacobians& out);
  struct Workspace;
  std::unique_ptr<Workspace> ws_;
};

// Convenience form of the above (builds the solver for one call).
TransitionJacobians transition_jacobians(const Model<double>& model, const StepOptions& options,
                                         const Eigen::VectorXd& q, const Eigen::VectorXd& qd,
                                         const Eigen::VectorXd& control, double t = 0);

}  // namespace neuralsim
