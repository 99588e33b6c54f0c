#include "neuralsim/step/transition_jacobians.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include <ceres/jet.h>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/dynamics/aba_derivatives.hpp"
#include "neuralsim/model/configuration.hpp"
#include "neuralsim/step/body_drag.hpp"

namespace neuralsim {

namespace transition_jacobians_detail {

constexpr int kLanes = 8;  // Jet8: directions per pass

void check_finite_vector(const Eigen::VectorXd& v, const char* name) {
  for (Eigen::Index i = 0; i < v.size(); ++i)
    if (!std::isfinite(v[i]))
      throw InvalidArgument(std::string("transition_jacobians: ") + name + "[" + std::to_string(i) +
                            "] is not finite (" + std::to_string(v[i]) + ")");
}

// Right Jacobian of SO(3): exp(φ + δ) = exp(φ) exp(Jr(φ) δ) + O(δ²)
// (Chirikjian, "Stochastic models, information theory and Lie groups",
// vol. 2, 2012, §10.6):  Jr = I - (1 - cos θ)/θ² [φ]× + (θ - sin θ)/θ³ [φ]×².
Eigen::Matrix3d so3_right_jacobian(const Eigen::Vector3d& phi) {
  const double theta2 = phi.squaredNorm();
  const Eigen::Matrix3d K = skew<double>(phi);
  double a, b;
  if (theta2 < 1e-10) {  // Taylor: 1/2 - θ²/24, 1/6 - θ²/120
    a = 0.5 - theta2 / 24;
    b = 1.0 / 6 - theta2 / 120;
  } else {
    const double theta = std::sqrt(theta2);
    a = (1 - std::cos(theta)) / theta2;
    b = (theta - std::sin(theta)) / (theta2 * theta);
  }
  return Eigen::Matrix3d::Identity() - a * K + b * K * K;
}

// Whether one step can be differentiated analytically (aba_derivatives plus
// the diagonal passive terms): semi-implicit Euler, no motor rotors, no body
// drag. Everything else takes the Jet route.
bool analytic_step_applies(const Model<double>& model, const StepOptions& options) {
  if (options.integrator != Integrator::kSemiImplicitEuler || has_body_drag(model)) return false;
  for (const Joint<double>& j : model.joints)
    if (j.has_rotor) return false;
  return true;
}

// The analytical route (semi-implicit Euler). One substep of length h from
// (q, q̇) with q̈ = FD(q, q̇, G u + τ_p(q, q̇)):
//   q̇' = q̇ + h q̈ (+ h ω × v on a free joint's linear rows: the world-frame
//   update of configuration.hpp),  q⁺ = q ⊕ h q̇',  q̇⁺ = q̇' (a free joint's
//   linear velocity re-expressed in the new frame, v⁺ = E⁺ᵀ v', E⁺ = exp(hω')).
// Linearized with K_x = ∂q̈/∂x = aba_derivatives' ∂q̈/∂x + M⁻¹ ∂τ_p/∂x
// (damping, friction and springs are diagonal), V = ∂q̇'/∂(δq, δq̇, u) =
// [h K_q, 1 + h K_v (+ the ω × v terms), h M⁻¹G], and per joint
//   δq⁺ = P δq + Q δq̇',   δq̇⁺ = T δq̇':
//   hinge, slider: P = 1, Q = h, T = 1;
//   ball:          P = E⁺ᵀ, Q = h Jr(hω'), T = 1;
//   free:          P = [E⁺ᵀ 0; -h E⁺ᵀ[v']× E⁺ᵀ], Q = [h Jr 0; 0 h E⁺ᵀ],
//                  T = [1 0; h [v⁺]× Jr 1·E⁺ᵀ],
// from R⁺ = R exp(δθ) exp(h ω'), p⁺ = p + R δp + R exp(δθ) h v' measured as
// q⁺ ⊖ q̄⁺. Substeps chain: A = A_s A, B = A_s B + B_s.
struct AnalyticStep {
  Model<double> model;
  Data<double> data;
  StepOptions options;
  Eigen::VectorXd q, qd, qd_pre, qd_next, q_next, dv, tau;
  Eigen::MatrixXd V, out, A, B, tmp, tmp_B;
  AnalyticStep(const Model<double>& m, const StepOptions& o) : model(m), data(model), options(o) {
    const int nq = model.nq, nv = model.nv;
    q = q_next = Eigen::VectorXd::Zero(nq);
    qd = qd_pre = qd_next = dv = tau = Eigen::VectorXd::Zero(nv);
    V = Eigen::MatrixXd::Zero(nv, 3 * nv);
    out = Eigen::MatrixXd::Zero(2 * nv, 3 * nv);
    A = tmp = Eigen::MatrixXd::Zero(2 * nv, 2 * nv);
    B = tmp_B = Eigen::MatrixXd::Zero(2 * nv, nv);
  }

  void step(const Eigen::VectorXd& q0, const Eigen::VectorXd& qd0, const Eigen::VectorXd& u, TransitionJacobians& J) {
    const int nv = model.nv;
    const int n = options.substeps;  // Stepper::advance with dt = options.dt
    const double h = options.dt / n;
    q = q0;
    qd = qd0;
    for (int s = 0; s < n; ++s) {
      // Forces and q̈ as Stepper::forward_dynamics, with the derivatives.
      data.clear_external_forces();
      passive_forces(model, data, q, qd);
      for (const Joint<double>& j : model.joints)
        for (int k = 0; k < j.nv; ++k) tau[j.idx_v + k] = j.dynamics.gear_ratio * u[j.idx_v + k];
      tau += data.tau_passive;
      aba_derivatives(model, data, q, qd, tau);
      // V = [h K_q, 1 + h K_v, h M⁻¹ G] with the passive terms' diagonal.
      V.leftCols(nv) = h * data.dqdd_dq;
      V.middleCols(nv, nv) = h * data.dqdd_dv;
      for (const Joint<double>& j : model.joints) {
        const JointDynamics<double>& d = j.dynamics;
        for (int k = 0; k < j.nv; ++k) {
          const int c = j.idx_v + k;
          double dtau_dv = -d.damping;
          if (!(d.friction_law == FrictionLaw::kStribeck ? d.coulomb_friction == 0 && d.friction_static == 0
                                                          : d.coulomb_friction == 0)) {
            using J1 = ceres::Jet<double, 1>;
            dtau_dv += friction_torque(d.cast<J1>(), J1(qd[c], 0)).v[0];
          }
          const double dtau_dq = j.nq == 1 ? -d.spring_stiffness : 0.0;
          V.col(c) += (h * dtau_dq) * data.Minv.col(c);
          V.col(nv + c) += (h * dtau_dv) * data.Minv.col(c);
          V(c, nv + c) += 1;
          V.col(2 * nv + c) = (h * d.gear_ratio) * data.Minv.col(c);
        }
      }
      qd_pre = qd;
      semi_implicit_velocity_update(model, qd_pre, data.qdd, h);
      for (const Joint<double>& j : model.joints) {
        if (j.type != JointType::kFree) continue;
        const int r = j.idx_v;  // δv' += h(δω × v + ω × δv), pre-step ω, v
        const Eigen::Vector3d w = qd.segment<3>(r), v = qd.segment<3>(r + 3);
        V.block<3, 3>(r + 3, nv + r) -= h * skew<double>(v);
        V.block<3, 3>(r + 3, nv + r + 3) += h * skew<double>(w);
      }
      dv = h * qd_pre;
      integrate_configuration(model, q, dv, q_next);
      qd_next = qd_pre;
      transport_free_velocities(model, dv, qd_next);
      // out = [P_ext + Q V; T V] per joint.
      out.setZero();
      for (const Joint<double>& j : model.joints) {
        const int r = j.idx_v;
        switch (j.type) {
          case JointType::kFixed: break;
          case JointType::kRevolute:
          case JointType::kPrismatic:
            out.row(r) = h * V.row(r);
            out(r, r) += 1;
            out.row(nv + r) = V.row(r);
            break;
          case JointType::kSpherical:
          case JointType::kFree: {
            const Eigen::Vector3d hw = h * qd_pre.segment<3>(r);
            const Eigen::Matrix3d Et = quat_exp<double>(hw).toRotationMatrix().transpose();
            const Eigen::Matrix3d hJr = h * so3_right_jacobian(hw);
            out.middleRows(r, 3).noalias() = hJr * V.middleRows(r, 3);
            out.block<3, 3>(r, r) += Et;
            out.middleRows(nv + r, 3) = V.middleRows(r, 3);
            if (j.type == JointType::kSpherical) break;
            const Eigen::Vector3d v_pre = qd_pre.segment<3>(r + 3), v_next = qd_next.segment<3>(r + 3);
            out.middleRows(r + 3, 3).noalias() = (h * Et) * V.middleRows(r + 3, 3);
            out.block<3, 3>(r + 3, r) -= h * Et * skew<double>(v_pre);
            out.block<3, 3>(r + 3, r + 3) += Et;
            out.middleRows(nv + r + 3, 3).noalias() = Et * V.middleRows(r + 3, 3);
            out.middleRows(nv + r + 3, 3).noalias() += (skew<double>(v_next) * hJr) * V.middleRows(r, 3);
            break;
          }
        }
      }
      if (s == 0) {
        A = out.leftCols(2 * nv);
        B = out.rightCols(nv);
      } else {
        tmp.noalias() = out.leftCols(2 * nv) * A;
        A = tmp;
        tmp_B.noalias() = out.leftCols(2 * nv) * B;
        B = tmp_B + out.rightCols(nv);
      }
      q = q_next;
      qd = qd_next;
    }
    J.A = A;
    J.B = B;
    J.q_next = q;
    J.qd_next = qd;
  }
};

}  // namespace transition_jacobians_detail

struct TransitionJacobianSolver::Workspace {
  Workspace(const Model<double>& m, const StepOptions& options)
      : model(m.cast<Jet8>()), stepper(model, with_unchecked_jets(options)) {
    if (transition_jacobians_detail::analytic_step_applies(m, options))
      analytic = std::make_unique<transition_jacobians_detail::AnalyticStep>(m, options);
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
  std::unique_ptr<transition_jacobians_detail::AnalyticStep> analytic;  // semi-implicit Euler (see AnalyticStep)
  VecX<Jet8> q_nominal, q_next_nominal, dq, q, qd, u, dq_next;
};

TransitionJacobianSolver::TransitionJacobianSolver(const Model<double>& model, const StepOptions& options)
    : ws_(std::make_unique<Workspace>(model, options)) {}

TransitionJacobianSolver::~TransitionJacobianSolver() = default;

void TransitionJacobianSolver::compute(const Eigen::VectorXd& q, const Eigen::VectorXd& qd,
                                       const Eigen::VectorXd& control, double t, TransitionJacobians& out) {
  using transition_jacobians_detail::check_finite_vector;
  Workspace& w = *ws_;
  const int nq = w.model.nq, nv = w.model.nv;
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
  if (w.analytic) {
    w.analytic->step(q, qd, control, out);
    check_finite_vector(out.q_next, "q⁺");
    check_finite_vector(out.qd_next, "q̇⁺");
  } else {
    compute_with_jets(q, qd, control, t, out);
  }
  for (Eigen::Index i = 0; i < out.A.size(); ++i)
    if (!std::isfinite(out.A.data()[i])) throw NumericalError("transition_jacobians: ∂x⁺/∂x is not finite");
  for (Eigen::Index i = 0; i < out.B.size(); ++i)
    if (!std::isfinite(out.B.data()[i])) throw NumericalError("transition_jacobians: ∂x⁺/∂u is not finite");
}

void TransitionJacobianSolver::compute_with_jets(const Eigen::VectorXd& q, const Eigen::VectorXd& qd,
                                                 const Eigen::VectorXd& control, double t, TransitionJacobians& out) {
  using transition_jacobians_detail::check_finite_vector;
  using transition_jacobians_detail::kLanes;
  Workspace& w = *ws_;
  const Model<Jet8>& model = w.model;
  const int nq = model.nq, nv = model.nv;
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
