// Forward dynamics (aba) on the reverse-mode tape as ONE external node
// (grad/tape.hpp), with the hand-written VJP of forward_dynamics_vjp.hpp.
//
// WHY. Recording aba<Rev> puts ~7500 elementary nodes per Laikago call on
// the tape and costs ~35x a double ABA (tape.hpp, COST MODEL). As one node,
// the forward pass is aba<double> and the reverse pass re-runs aba<double>
// at the recorded inputs and applies forward_dynamics_vjp (λ = M⁻¹μ through
// the articulated-body factorization, then RNEA's adjoint): about 3 double
// ABAs per call in all, and 8 bytes per input on the tape instead of 40
// bytes per elementary operation.
//
// WHAT IS AN INPUT. Everything aba() reads that may carry a derivative, as
// the Revs that the caller's Model<Rev> and state hold (constants are
// fine: their adjoints are dropped by the tape):
//   q (nq raw coordinates, quaternions included), q̇ (nv), τ (nv),
//   f_ext (6 per body, body coordinates, as Data::f_ext),
//   per body: mass, h (3), the 9 entries of Ī (column-major),
//   per joint: armature, then gravity (3), then per joint origin.r (3).
// The joint axes, the rotations of the joint origins (origin.E) and the tree
// are structure: their values are taken at record time and they get no
// derivative (treat them as constants in the Model<Rev>).
//
// DERIVATIVES OF RAW COORDINATES. forward_dynamics_vjp gives ∂L/∂δ in the
// tangent coordinates of rnea_vjp.hpp. The engine normalizes quaternions
// (joint_transform), so for a quaternion q = n·q̂, q̂ = (w, u):
//   δ = (2/n) Im(q̂* ⊗ dq)   ⇒   ∂L/∂u = (2/n)(w ḡ + u × ḡ),  ∂L/∂w = -(2/n) u·ḡ
// with ḡ = ∂L/∂δ_ω (a change of n alone changes nothing), and for a free
// joint's position p: dp = R δ_lin ⇒ ∂L/∂p = R ∂L/∂δ_lin.
// Off-diagonal entries of Ī get half of the pair's derivative each, so a
// symmetric parameterization (both entries one variable, or equal
// expressions) receives the whole.
//
// MEMORY AND ALLOCATION. The tape keeps each call's inputs and outputs
// (nq + 2nv + 23·bodies + 3 inputs); the node keeps one workspace. vjp()
// recomputes aba() from the recorded inputs (the calls are reversed last to
// first, so the factorization of the recording pass is long overwritten)
// and checks that it reproduces the recorded q̈ bit for bit (a
// std::logic_error otherwise, e.g. if the model's structure changed). No
// allocation per call once constructed (the tape's arenas aside:
// Tape::reserve). The node holds a workspace: one node per thread, and it
// must outlive every reverse() of a tape that recorded it.
//
// USAGE (one semi-implicit Euler step; the rest of the step stays on the tape):
//   AbaNode node(model);                 // model: Model<Rev>
//   node.record(tape, model, q, qd, tau, data.f_ext, qdd);
//   semi_implicit_velocity_update(model, qd, qdd, h);  ...
#pragma once

#include <cmath>
#include <stdexcept>
#include <vector>

#include "neuralsim/dynamics/aba.hpp"
#include "neuralsim/dynamics/forward_dynamics_vjp.hpp"
#include "neuralsim/grad/rev_engine.hpp"

namespace neuralsim {

class AbaNode final : public ExternalFunction {
 public:
  // Sized for the model's structure; `model` is not kept (record() reads the
  // values every call).
  explicit AbaNode(const Model<Rev>& model)
      : model_(values_of(model)), data_(model_), out_(model_) {
    // rnea_vjp() has no rotor terms: refuse rather than return a wrong gradient.
    for (const Joint<double>& j : model_.joints)
      if (j.has_rotor)
        throw ModelError("reverse-mode gradients do not support motor rotors yet (joint '" + j.name +
                         "' has one); use armature = gear_ratio²·Ir, which drops the coupling to the parent link");
    nq_ = model_.nq;
    nv_ = model_.nv;
    nb_ = model_.num_bodies();
    q_ = VecX<double>::Zero(nq_);
    qd_ = VecX<double>::Zero(nv_);
    tau_ = VecX<double>::Zero(nv_);
    mu_ = VecX<double>::Zero(nv_);
    x_.assign(num_inputs(), Rev(0.0));
    xv_.assign(num_inputs(), 0.0);
    y_.assign(nv_, Rev(0.0));
  }

  int num_inputs() const { return nq_ + 2 * nv_ + 23 * nb_ + 3; }

  // q̈ = aba(model, q, q̇, τ, f_ext) recorded on `tape` as one node; qdd
  // (size nv) receives the outputs as new variables of `tape`.
  void record(Tape& tape, const Model<Rev>& model, const VecX<Rev>& q, const VecX<Rev>& qd, const VecX<Rev>& tau,
              const std::vector<Vec6<Rev>>& f_ext, VecX<Rev>& qdd, std::int64_t tag = 0) {
    check_argument_size("AbaNode::record", "q", q.size(), nq_);
    check_argument_size("AbaNode::record", "q̇", qd.size(), nv_);
    check_argument_size("AbaNode::record", "τ", tau.size(), nv_);
    check_argument_size("AbaNode::record", "f_ext", static_cast<long>(f_ext.size()), nb_);
    check_argument_size("AbaNode::record", "q̈", qdd.size(), nv_);
    check_argument_size("AbaNode::record", "model bodies", model.num_bodies(), nb_);
    Rev* x = x_.data();
    for (int k = 0; k < nq_; ++k) *x++ = q[k];
    for (int k = 0; k < nv_; ++k) *x++ = qd[k];
    for (int k = 0; k < nv_; ++k) *x++ = tau[k];
    for (int b = 0; b < nb_; ++b)
      for (int c = 0; c < 6; ++c) *x++ = f_ext[b][c];
    for (int b = 0; b < nb_; ++b) {
      const Inertia<Rev>& I = model.bodies[b].inertia;
      *x++ = I.mass;
      for (int c = 0; c < 3; ++c) *x++ = I.h[c];
      for (int c = 0; c < 9; ++c) *x++ = I.I_origin(c % 3, c / 3);
    }
    for (int b = 0; b < nb_; ++b) *x++ = model.joints[b].dynamics.armature;
    for (int c = 0; c < 3; ++c) *x++ = model.gravity[c];
    for (int b = 0; b < nb_; ++b)
      for (int c = 0; c < 3; ++c) *x++ = model.joints[b].origin.r[c];
    for (int k = 0; k < num_inputs(); ++k) xv_[k] = x_[k].value();
    load(xv_.data());
    aba(model_, data_, q_, qd_, tau_);
    tape.external(*this, x_.data(), num_inputs(), data_.qdd.data(), y_.data(), nv_, tag);
    for (int k = 0; k < nv_; ++k) qdd[k] = y_[k];
  }

  void vjp(const ExternalCall& call, const double* out_adj, double* in_adj) override {
    if (call.n_in != num_inputs() || call.n_out != nv_)
      throw std::logic_error("AbaNode::vjp: a call recorded by another node");
    load(call.x);
    aba(model_, data_, q_, qd_, tau_);
    for (int k = 0; k < nv_; ++k)
      if (data_.qdd[k] != call.y[k])
        throw std::logic_error("AbaNode::vjp: aba() does not reproduce the recorded q̈ (model structure changed?)");
    for (int k = 0; k < nv_; ++k) mu_[k] = out_adj[k];
    forward_dynamics_vjp(model_, data_, q_, qd_, data_.qdd, mu_, out_);
    write_input_adjoints(in_adj);
  }

 private:
  // The structure and current values of a Model<Rev> in double (Model::cast
  // converts with T(x), which a Rev deliberately does not offer).
  static Model<double> values_of(const Model<Rev>& m) {
    Model<double> d;
    d.name = m.name;
    for (const Body<Rev>& b : m.bodies) {
      Body<double> bd;
      bd.name = b.name;
      bd.inertia = b.inertia.values();
      bd.length = to_double(b.length);
      bd.length_spec = b.length_spec;
      d.bodies.push_back(bd);
    }
    auto vec = [](const Vec3<Rev>& v) { return Vec3<double>(to_double(v[0]), to_double(v[1]), to_double(v[2])); };
    for (const Joint<Rev>& j : m.joints) {
      Joint<double> jd;
      jd.name = j.name;
      jd.type = j.type;
      jd.axis = vec(j.axis);
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) jd.origin.E(r, c) = to_double(j.origin.E(r, c));
      jd.origin.r = vec(j.origin.r);
      jd.parent = j.parent;
      jd.idx_q = j.idx_q;
      jd.idx_v = j.idx_v;
      jd.nq = j.nq;
      jd.nv = j.nv;
      const JointDynamics<Rev>& a = j.dynamics;
      JointDynamics<double>& b = jd.dynamics;
      b.damping = to_double(a.damping);
      b.coulomb_friction = to_double(a.coulomb_friction);
      b.friction_velocity = to_double(a.friction_velocity);
      b.spring_stiffness = to_double(a.spring_stiffness);
      b.spring_rest = to_double(a.spring_rest);
      b.armature = to_double(a.armature);
      b.gear_ratio = to_double(a.gear_ratio);
      b.torque_offset = to_double(a.torque_offset);
      b.rotor_inertia = to_double(a.rotor_inertia);
      jd.has_rotor = j.has_rotor;
      jd.coordinate_axis = j.coordinate_axis;
      jd.axis_negative = j.axis_negative;
      jd.lower = j.lower;
      jd.upper = j.upper;
      jd.effort = j.effort;
      jd.velocity = j.velocity;
      d.joints.push_back(jd);
    }
    d.geometries = m.geometries;
    d.gravity = vec(m.gravity);
    d.nq = m.nq;
    d.nv = m.nv;
    d.origin_follows_parent_length = m.origin_follows_parent_length;
    return d;
  }

  // Inputs → model_ parameters, q_, q̇_, τ_, data_.f_ext.
  void load(const double* x) {
    for (int k = 0; k < nq_; ++k) q_[k] = *x++;
    for (int k = 0; k < nv_; ++k) qd_[k] = *x++;
    for (int k = 0; k < nv_; ++k) tau_[k] = *x++;
    for (int b = 0; b < nb_; ++b)
      for (int c = 0; c < 6; ++c) data_.f_ext[b][c] = *x++;
    for (int b = 0; b < nb_; ++b) {
      Inertia<double>& I = model_.bodies[b].inertia;
      I.mass = *x++;
      for (int c = 0; c < 3; ++c) I.h[c] = *x++;
      for (int c = 0; c < 9; ++c) I.I_origin(c % 3, c / 3) = *x++;
    }
    for (int b = 0; b < nb_; ++b) model_.joints[b].dynamics.armature = *x++;
    for (int c = 0; c < 3; ++c) model_.gravity[c] = *x++;
    for (int b = 0; b < nb_; ++b)
      for (int c = 0; c < 3; ++c) model_.joints[b].origin.r[c] = *x++;
  }

  // ∂L/∂(inputs) from out_ (tangent coordinates → raw q, see above).
  void write_input_adjoints(double* g) const {
    for (const Joint<double>& j : model_.joints) {
      switch (j.type) {
        case JointType::kFixed: break;
        case JointType::kRevolute:
        case JointType::kPrismatic: g[j.idx_q] = out_.q[j.idx_v]; break;
        case JointType::kSpherical: quaternion_adjoint(j.idx_q, Vec3<double>(out_.q.segment<3>(j.idx_v)), g); break;
        case JointType::kFree: {
          const Quat<double> r = joint_quaternion<double>(q_, j.idx_q + 3).normalized();
          const Vec3<double> gp = r.toRotationMatrix() * out_.q.segment<3>(j.idx_v + 3);
          for (int c = 0; c < 3; ++c) g[j.idx_q + c] = gp[c];
          quaternion_adjoint(j.idx_q + 3, Vec3<double>(out_.q.segment<3>(j.idx_v)), g);
          break;
        }
      }
    }
    g += nq_;
    for (int k = 0; k < nv_; ++k) *g++ = out_.v[k];
    for (int k = 0; k < nv_; ++k) *g++ = out_.tau[k];
    for (int b = 0; b < nb_; ++b)
      for (int c = 0; c < 6; ++c) *g++ = out_.f_ext[b][c];
    for (int b = 0; b < nb_; ++b) {
      const InertiaParameters<double>& p = out_.inertia[b];
      for (int c = 0; c < 4; ++c) *g++ = p[c];  // m, h
      // Ī column-major; p = [.., xx, yy, zz, xy, xz, yz]: pairs split in half.
      const double xy = 0.5 * p[7], xz = 0.5 * p[8], yz = 0.5 * p[9];
      const double Ibar[9] = {p[4], xy, xz, xy, p[5], yz, xz, yz, p[6]};
      for (int c = 0; c < 9; ++c) *g++ = Ibar[c];
    }
    for (int b = 0; b < nb_; ++b) *g++ = out_.armature[b];
    for (int c = 0; c < 3; ++c) *g++ = out_.gravity[c];
    for (int b = 0; b < nb_; ++b)
      for (int c = 0; c < 3; ++c) *g++ = out_.origin[b][c];
  }

  // Raw quaternion (x y z w at g[i..i+4)) adjoint from ḡ = ∂L/∂δ_ω.
  void quaternion_adjoint(int i, const Vec3<double>& gw, double* g) const {
    const double n = std::sqrt(q_[i] * q_[i] + q_[i + 1] * q_[i + 1] + q_[i + 2] * q_[i + 2] + q_[i + 3] * q_[i + 3]);
    const Vec3<double> u(q_[i] / n, q_[i + 1] / n, q_[i + 2] / n);
    const double w = q_[i + 3] / n;
    const Vec3<double> gu = (2.0 / n) * (w * gw + u.cross(gw));
    for (int c = 0; c < 3; ++c) g[i + c] = gu[c];
    g[i + 3] = -(2.0 / n) * u.dot(gw);
  }

  Model<double> model_;
  Data<double> data_;
  ForwardDynamicsVjp<double> out_;
  int nq_ = 0, nv_ = 0, nb_ = 0;
  VecX<double> q_, qd_, tau_, mu_;
  std::vector<Rev> x_;
  std::vector<double> xv_;
  std::vector<Rev> y_;
};

}  // namespace neuralsim
