#include "neuralsim/step/transition_jacobians.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/model/configuration.hpp"

namespace neuralsim {

namespace transition_jacobians_detail {

constexpr int kLanes = 8;  // Jet8: directions per pass

void check_finite_vector(const Eigen::VectorXd& v, const char* name) {
  for (Eigen::Index i = 0; i < v.size(); ++i)
    if (!std::isfinite(v[i]))
      throw InvalidArgument(std::string("transition_jacobians: ") + name + "[" + std::to_string(i) +
                            "] is not finite (" + std::to_string(v[i]) + ")");
}

}  // namespace transition_jacobians_detail

struct TransitionJacobianSolver::Workspace {
  Workspace(const Model<double>& m, const StepOptions& options)
      : model(m.cast<Jet8>()), stepper(model, with_unchecked_jets(options)) {
    const int nq = model.nq, nv = model.nv;
    q_nominal = VecX<Jet8>(nq);
    q_next_nominal = VecX<Jet8>(nq);
    dq = VecX<Jet8>(nv);
    q = VecX<Jet8>(nq);
    qd = VecX<Jet8>(nv);
    u = VecX<Jet8>(nv);
    dq_next = VecX<Jet8>(nv);
  }
  // The Jet stepper's own check reads only values; the result is checked here.
  static StepOptions with_unchecked_jets(StepOptions o) {
    o.check_finite = false;
    return o;
  }

  Model<Jet8> model;  // before stepper, which keeps a reference to it
  Stepper<Jet8> stepper;
  VecX<Jet8> q_nominal, q_next_nominal, dq, q, qd, u, dq_next;
};

TransitionJacobianSolver::TransitionJacobianSolver(const Model<double>& model, const StepOptions& options)
    : ws_(std::make_unique<Workspace>(model, options)) {}

TransitionJacobianSolver::~TransitionJacobianSolver() = default;

void TransitionJacobianSolver::compute(const Eigen::VectorXd& q, const Eigen::VectorXd& qd,
                                       const Eigen::VectorXd& control, double t, TransitionJacobians& out) {
  using transition_jacobians_detail::check_finite_vector;
  using transition_jacobians_detail::kLanes;
  Workspace& w = *ws_;
  const Model<Jet8>& model = w.model;
  const int nq = model.nq, nv = model.nv;
  check_argument_size("transition_jacobians", "q", q.size(), nq);
  check_argument_size("transition_jacobians", "q̇", qd.size(), nv);
  check_argument_size("transition_jacobians", "control", control.size(), nv);
  check_finite_vector(q, "q");
  check_finite_vector(qd, "q̇");
  check_finite_vector(control, "control");
  if (!std::isfinite(t)) throw InvalidArgument("transition_jacobians: t is not finite");

  out.A.resize(2 * nv, 2 * nv);
  out.B.resize(2 * nv, nv);
  out.q_next.resize(nq);
  out.qd_next.resize(nv);
  for (int i = 0; i < nq; ++i) w.q_nominal[i] = Jet8(q[i]);

  // Directions 0..nv-1 perturb q (as q ⊕ δq), nv..2nv-1 q̇, 2nv..3nv-1 u.
  const int directions = 3 * nv;
  for (int first = 0; first < directions; first += kLanes) {
    const int last = std::min(directions, first + kLanes);
    auto lane_of = [&](int direction) { return direction >= first && direction < last ? direction - first : -1; };
    for (int i = 0; i < nv; ++i) {
      w.dq[i] = Jet8(0.0);
      if (const int k = lane_of(i); k >= 0) w.dq[i].v[k] = 1.0;
      w.qd[i] = Jet8(qd[i]);
      if (const int k = lane_of(nv + i); k >= 0) w.qd[i].v[k] = 1.0;
      w.u[i] = Jet8(control[i]);
      if (const int k = lane_of(2 * nv + i); k >= 0) w.u[i].v[k] = 1.0;
    }
    integrate_configuration(model, w.q_nominal, w.dq, w.q);
    w.stepper.step(w.q, w.qd, w.u, t);

    if (first == 0) {
      for (int i = 0; i < nq; ++i) {
        out.q_next[i] = w.q[i].a;
        w.q_next_nominal[i] = Jet8(w.q[i].a);
      }
      for (int i = 0; i < nv; ++i) out.qd_next[i] = w.qd[i].a;
      check_finite_vector(out.q_next, "q⁺");
      check_finite_vector(out.qd_next, "q̇⁺");
    }
    // δq⁺ = q⁺ ⊖ q̄⁺ (zero in value, the derivatives in the lanes).
    difference_configuration(model, w.q_next_nominal, w.q, w.dq_next);
    for (int d = first; d < last; ++d) {
      const int k = d - first;
      auto column = d < 2 * nv ? out.A.col(d) : out.B.col(d - 2 * nv);
      for (int i = 0; i < nv; ++i) {
        column[i] = w.dq_next[i].v[k];
        column[nv + i] = w.qd[i].v[k];
      }
    }
  }
  for (Eigen::Index i = 0; i < out.A.size(); ++i)
    if (!std::isfinite(out.A.data()[i])) throw NumericalError("transition_jacobians: ∂x⁺/∂x is not finite");
  for (Eigen::Index i = 0; i < out.B.size(); ++i)
    if (!std::isfinite(out.B.data()[i])) throw NumericalError("transition_jacobians: ∂x⁺/∂u is not finite");
}

TransitionJacobians transition_jacobians(const Model<double>& model, const StepOptions& options,
                                         const Eigen::VectorXd& q, const Eigen::VectorXd& qd,
                                         const Eigen::VectorXd& control, double t) {
  TransitionJacobianSolver solver(model, options);
  TransitionJacobians out;
  solver.compute(q, qd, control, t, out);
  return out;
}

}  // namespace neuralsim
