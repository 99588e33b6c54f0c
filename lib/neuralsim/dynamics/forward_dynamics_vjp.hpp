// Vector–Jacobian product of forward dynamics q̈ = FD(q, q̇, τ, f_ext; θ)
// (aba.hpp), by the implicit-function theorem instead of differentiating
// the articulated-body algorithm line by line.
//
// q̈ = FD(q, q̇, τ, f_ext; θ) is the solution of RNEA(q, q̇, q̈, f_ext; θ) = τ.
// Differentiating that identity in any input x (with M = ∂RNEA/∂q̈, the
// mass matrix with armature, symmetric):
//     ∂RNEA/∂x + M ∂q̈/∂x = ∂τ/∂x   ⇒   ∂q̈/∂x = M⁻¹ (∂τ/∂x - ∂RNEA/∂x).
// For a cotangent μ of q̈ (L = μᵀq̈) this gives (Carpentier & Mansard,
// "Analytical derivatives of rigid body dynamics algorithms", RSS 2018;
// the same identity underlies their ABA derivatives):
//     λ = M⁻¹ μ,
//     ∂L/∂τ = λ,
//     ∂L/∂(q, q̇, f_ext, θ) = -λᵀ ∂RNEA(q, q̇, q̈, f_ext; θ)/∂(q, q̇, f_ext, θ),
// evaluated at the q̈ of the forward pass. λ comes from the articulated-body
// factorization aba() already left in `data` (inverse_inertia_joint.hpp: two
// vector sweeps), and the second line is rnea_vjp's backward pass
// (rnea_vjp.hpp) with w = -λ, reusing aba()'s body transforms X_up. The cost
// is therefore O(n) and independent of the number of parameters, with none of
// ABA's 6x6 work: measured 1.65-1.8x an aba() call (bench_dynamics_vjp:
// double pendulum, swimmer5, Panda, Laikago; M⁻¹μ is ~0.2x of it).
//
// In a step, τ is usually gear·u + passive(q, q̇) and f_ext comes from force
// hooks (contact): chain out.tau and out.f_ext through them (on the tape,
// grad/aba_node.hpp does exactly that).
//
// All conventions (tangent coordinates of q, order of the inertial
// parameters, coordinates of f_ext, ...) are those of rnea_vjp.hpp. out.a is
// set to zero (q̈ is this function's output, not an input); out.tau = λ.
//
// PRECONDITION: the last call that wrote `data` was aba(model, data, q, q̇,
// τ) — with the external forces in data.f_ext that are to be differentiated
// — and qdd is its output (data.qdd or a copy). Nothing checks that q, q̇
// match: the factorization and X_up are taken as they are. `data` is only
// read (a floating base's factorization is solved directly, so
// complete_articulated_factorization() is not required; calling it first is
// harmless). In a Stepper, call it right after aba() for the step's state.
#pragma once

#include "neuralsim/dynamics/inverse_inertia_joint.hpp"
#include "neuralsim/dynamics/rnea_vjp.hpp"

namespace neuralsim {

// RneaVjp plus ∂L/∂τ and the workspace of M⁻¹.
template <class S>
struct ForwardDynamicsVjp : RneaVjp<S> {
  VecX<S> tau;                          // nv: ∂L/∂τ = λ = M⁻¹ μ
  VecX<S> w;                            // workspace: -λ
  InverseInertiaWorkspace<S> minv;      // workspace of apply_inverse_inertia_joint

  ForwardDynamicsVjp() = default;
  explicit ForwardDynamicsVjp(const Model<S>& model) { resize(model); }
  void resize(const Model<S>& model) {
    RneaVjp<S>::resize(model);
    tau = VecX<S>::Zero(model.nv);
    w = VecX<S>::Zero(model.nv);
    minv.resize(model.num_bodies());
  }
};

// Gradient of L = μᵀ FD(q, q̇, τ, data.f_ext; θ) into `out` (sized for the
// model), under the precondition above. No allocation.
template <class S>
void forward_dynamics_vjp(const Model<S>& model, const Data<S>& data, const VecX<S>& q, const VecX<S>& qd,
                          const VecX<S>& qdd, const VecX<S>& mu, ForwardDynamicsVjp<S>& out) {
  check_argument_size("forward_dynamics_vjp", "q", q.size(), model.nq);
  check_argument_size("forward_dynamics_vjp", "q̇", qd.size(), model.nv);
  check_argument_size("forward_dynamics_vjp", "q̈", qdd.size(), model.nv);
  check_argument_size("forward_dynamics_vjp", "μ", mu.size(), model.nv);
  check_argument_size("forward_dynamics_vjp", "out (ForwardDynamicsVjp sized for the model)", out.tau.size(),
                      model.nv);
  check_argument_size("forward_dynamics_vjp", "out.minv (ForwardDynamicsVjp sized for the model)",
                      static_cast<long>(out.minv.p.size()), model.num_bodies());
  apply_inverse_inertia_joint(model, data, mu, out.minv, out.tau);  // λ = M⁻¹ μ
  out.w = -out.tau;
  internal::rnea_vjp_sweeps(model, data, qd, qdd, out.w, out, static_cast<VecX<S>*>(nullptr));
  out.a.setZero();
}

// Explicit instantiation for double (dynamics/instantiate_double.cpp); other
// scalars instantiate the template on use.
#define NEURALSIM_FORWARD_DYNAMICS_VJP_TEMPLATES(PREFIX, S)                                                  \
  PREFIX template void forward_dynamics_vjp<S>(const Model<S>&, const Data<S>&, const VecX<S>&, const VecX<S>&, \
                                               const VecX<S>&, const VecX<S>&, ForwardDynamicsVjp<S>&);
NEURALSIM_FORWARD_DYNAMICS_VJP_TEMPLATES(extern, double)

}  // namespace neuralsim
