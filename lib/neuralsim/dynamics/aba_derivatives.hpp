// Analytical derivatives of forward dynamics: q̈ = ABA(q, q̇, τ, f_ext) and
// ∂q̈/∂q (tangent), ∂q̈/∂q̇, ∂q̈/∂τ = M⁻¹, as full nv × nv matrices
// (Carpentier & Mansard, "Analytical derivatives of rigid body dynamics
// algorithms", RSS 2018, §V; as Pinocchio's computeABADerivatives).
//
// q̈ solves RNEA(q, q̇, q̈) = τ. Differentiating that identity,
//   ∂q̈/∂x = -M⁻¹ ∂RNEA/∂x  at q̈ = ABA(q, q̇, τ),   x = q, q̇;   ∂q̈/∂τ = M⁻¹,
// so one call is: aba() (q̈ and its articulated-body factorization), the
// RNEA derivatives at that q̈ (rnea_derivatives.hpp, reusing aba()'s body
// poses), M⁻¹ from the factorization (inverse_inertia_matrix,
// inverse_inertia_joint.hpp), and two nv × nv products.
//
// Conventions are rnea_derivatives.hpp's: tangent coordinates of q as
// integrate_configuration's, body-frame external forces from data.f_ext,
// armature included (as aba() includes it), passive joint forces (damping,
// friction, springs) not included: τ is the total generalized force aba()
// takes. Motor rotors are refused (InvalidArgument).
//
// DATA. Writes everything aba() writes (data.qdd, the kinematics and the
// factorization), everything rnea_derivatives() writes except data.tau
// (data.M, dtau_dq, dtau_dv and the workspace), and data.Minv,
// data.dqdd_dq, data.dqdd_dv (and the workspace data.minv_F). No allocation.
// Tests: tests/dynamics/aba_derivatives_test.cpp.
#pragma once

#include "neuralsim/dynamics/inverse_inertia_joint.hpp"
#include "neuralsim/dynamics/rnea_derivatives.hpp"

namespace neuralsim {

// q̈, ∂q̈/∂q, ∂q̈/∂q̇ and M⁻¹ into data.qdd, data.dqdd_dq, data.dqdd_dv,
// data.Minv (see DATA above). InvalidArgument on wrong sizes or a model with
// motor rotors.
template <class S>
void aba_derivatives(const Model<S>& model, Data<S>& data, const VecX<S>& q, const VecX<S>& qd,
                     const VecX<S>& tau) {
  check_argument_size("aba_derivatives", "data.dqdd_dq (Data built for the model)", data.dqdd_dq.rows(), model.nv);
  internal::refuse_rotors(model, "aba_derivatives");
  aba(model, data, q, qd, tau);  // checks the sizes of q, q̇, τ
  internal::rnea_derivatives_sweeps(model, data, qd, data.qdd, static_cast<VecX<S>*>(nullptr));
  inverse_inertia_matrix(model, data);
  data.dqdd_dq.noalias() = -data.Minv * data.dtau_dq;
  data.dqdd_dv.noalias() = -data.Minv * data.dtau_dv;
}

// Explicit instantiation for double (dynamics/instantiate_double.cpp); other
// scalars instantiate the template on use.
#define NEURALSIM_ABA_DERIVATIVES_TEMPLATES(PREFIX, S) \
  PREFIX template void aba_derivatives<S>(const Model<S>&, Data<S>&, const VecX<S>&, const VecX<S>&, const VecX<S>&);
NEURALSIM_ABA_DERIVATIVES_TEMPLATES(extern, double)

}  // namespace neuralsim
