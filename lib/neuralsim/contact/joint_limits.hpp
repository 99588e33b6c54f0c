// Joint limits as a stiff one-sided spring-damper on 1-DoF joints with
// finite limits: beyond a limit, τ = -k (q - q_lim) - d q̇ (the damping only
// while moving further out, so the spring releases without sticking),
// clamped so that it only pushes back inside. Being a force, it works with
// every contact model and integrator and is differentiable away from the
// limit boundary; k and d are the contact parameters limit_stiffness and
// limit_damping.
#pragma once

#include "neuralsim/contact/contact_parameters.hpp"
#include "neuralsim/model/data.hpp"

namespace neuralsim {

inline bool has_joint_limits(const Joint<double>& j) {
  return j.nq == 1 && (j.lower > -1e29 || j.upper < 1e29);
}

template <class S>
void apply_joint_limits(const Model<S>& model, const ContactParameters<S>& p, const VecX<S>& q,
                        const VecX<S>& qd, Data<S>& data) {
  for (const Joint<S>& j : model.joints) {
    if (j.nq != 1) continue;
    const S x = q[j.idx_q], v = qd[j.idx_v];
    S tau = S(0);
    if (x > S(j.upper)) {
      tau = -p.limit_stiffness * (x - S(j.upper)) - (v > S(0) ? p.limit_damping * v : S(0));
      if (tau > S(0)) tau = S(0);
    } else if (x < S(j.lower)) {
      tau = -p.limit_stiffness * (x - S(j.lower)) - (v < S(0) ? p.limit_damping * v : S(0));
      if (tau < S(0)) tau = S(0);
    }
    data.tau[j.idx_v] += tau;
  }
}

}  // namespace neuralsim
