// Forward dynamics (aba) on the reverse-mode tape as ONE external node
// (grad/tape.hpp), with the hand-written VJP of forward_dynamics_vjp.hpp.
//
// WHY. Recording aba<Rev> puts ~7500 elementary nodes per Laikago call on
// the tape and costs ~35x a double ABA (tape.hpp, COST MODEL). As one node,
// the forward pass is aba<double>, whose factorization the node keeps for
// the call (FORWARD CACHE below), and the reverse pass applies
// forward_dynamics_vjp to it (λ = M⁻¹μ through the articulated-body
// factorization, then RNEA's adjoint): about 2.7 double ABAs per call in
// all, and 8 bytes per input on the tape instead of 40 bytes per elementary
// operation.
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
// derivative (treat them as constants in the Model<Rev>). When none of the
// model's parameters (mass ... origin.r) is a tape variable, the call
// records only q, q̇, τ and f_ext as inputs (on the swimmer 49 of 213, for a
// cheaper tape), and the parameters' values travel in the forward cache.
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
// FORWARD CACHE. The reverse sweep visits the calls last to first, long
// after the node's workspace was overwritten by later calls, so each
// recorded call keeps what forward_dynamics_vjp reads from aba()'s Data:
// per body X_up, X_world and the factorization (1-DoF joints: oS, U·e₁,
// D⁻¹; spherical: U (6x3), D⁻¹ (3x3); free: Iᴬ, U, D⁻¹), q̈ and the
// values of the model parameters (which a state-only call does not
// record): 60 doubles per 1-DoF body, 3.4 kB per swimmer call.
// Without it vjp() would run aba() again (a third ABA per step in a
// rollout). The entries form a stack ordered by tape position, reused with
// the tape (grad/call_slots.hpp): the cache holds at most the calls of one
// recording and stops growing after the first segment (no allocation per
// call after warm-up). A call whose entry is gone (recorded on another tape
// since, or whose q̈ differs) falls back to re-running aba() from the
// recorded inputs and checks that it reproduces the recorded q̈ bit for bit
// (a std::logic_error otherwise). The tape keeps each call's inputs and
// outputs (nq + 2nv + 6·bodies inputs, + 23·bodies + 3 with parameters). The node holds a
// workspace: one node per thread, and it must outlive every reverse() of a
// tape that recorded it.
//
// USAGE (one semi-implicit Euler step; the rest of the step stays on the tape):
//   AbaNode node(model);                 // model: Model<Rev>
//   node.record(tape, model, q, qd, tau, data.f_ext, qdd);
//   semi_implicit_velocity_update(model, qd, qdd, h);  ...
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "neuralsim/dynamics/aba.hpp"
#include "neuralsim/dynamics/forward_dynamics_vjp.hpp"
#include "neuralsim/grad/call_slots.hpp"
#include "neuralsim/grad/model_values.hpp"
#include "neuralsim/grad/rev_engine.hpp"

namespace neuralsim {

class AbaNode final : public ExternalFunction {
 public:
  // Sized for the model's structure; `model` is not kept (record() reads the
  // values every call).
  explicit AbaNode(const Model<Rev>& model)
      : model_(model_values(model)), data_(model_), out_(model_) {
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
    qdd_ = VecX<double>::Zero(nv_);
    stride_ = nv_;  // q̈, then per body (cached_doubles below), then the parameter values
    for (const Joint<double>& j : model_.joints) stride_ += cached_doubles(j.nv);
    stride_ += num_parameter_inputs();
  }

  // Inputs of a call: the state (q, q̇, τ, f_ext) and, when any of them is a
  // tape variable, the model parameters (WHAT IS AN INPUT).
  int num_state_inputs() const { return nq_ + 2 * nv_ + 6 * nb_; }
  int num_parameter_inputs() const { return 23 * nb_ + 3; }
  int num_inputs() const { return num_state_inputs() + num_parameter_inputs(); }

  // q̈ = aba(model, q, q̇, τ, f_ext) recorded on `tape` as one node; qdd
  // (size nv) receives the outputs as new variables of `tape`. The node
  // uses the call's tape tag itself (FORWARD CACHE); `tag` is ignored.
  void record(Tape& tape, const Model<Rev>& model, const VecX<Rev>& q, const VecX<Rev>& qd, const VecX<Rev>& tau,
              const std::vector<Vec6<Rev>>& f_ext, VecX<Rev>& qdd, std::int64_t tag = 0) {
    (void)tag;
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
    bool parameters_variable = false;
    auto parameter = [&](const Rev& p) {
      parameters_variable |= !p.is_constant();
      *x++ = p;
    };
    for (int b = 0; b < nb_; ++b) {
      const Inertia<Rev>& I = model.bodies[b].inertia;
      parameter(I.mass);
      for (int c = 0; c < 3; ++c) parameter(I.h[c]);
      for (int c = 0; c < 9; ++c) parameter(I.I_origin(c % 3, c / 3));
    }
    for (int b = 0; b < nb_; ++b) parameter(model.joints[b].dynamics.armature);
    for (int c = 0; c < 3; ++c) parameter(model.gravity[c]);
    for (int b = 0; b < nb_; ++b)
      for (int c = 0; c < 3; ++c) parameter(model.joints[b].origin.r[c]);
    for (int k = 0; k < num_inputs(); ++k) xv_[k] = x_[k].value();
    load_state(xv_.data());
    load_parameters(xv_.data() + num_state_inputs());
    aba(model_, data_, q_, qd_, tau_);
    const std::size_t slot = push_slot(tape);
    save(cache_.data() + slot * stride_);
    const int n_in = parameters_variable ? num_inputs() : num_state_inputs();
    tape.external(*this, x_.data(), n_in, data_.qdd.data(), y_.data(), nv_, slots_.tag(slot));
    for (int k = 0; k < nv_; ++k) qdd[k] = y_[k];
  }

  // Calls whose forward values are cached (entries in use) and the doubles
  // held for them (capacity, kept across segments).
  std::size_t cached_calls() const { return slots_.size(); }
  std::size_t cache_capacity_bytes() const {
    return cache_.capacity() * sizeof(double) + slots_.capacity_bytes();
  }

  void vjp(const ExternalCall& call, const double* out_adj, double* in_adj) override {
    const bool with_parameters = call.n_in == num_inputs();
    if ((!with_parameters && call.n_in != num_state_inputs()) || call.n_out != nv_)
      throw std::logic_error("AbaNode::vjp: a call recorded by another node");
    load_state(call.x);
    const double* c = cached(call);
    if (c != nullptr) {
      restore(c);  // aba()'s factorization of this call, q̈ into qdd_, the parameters into model_
    } else {       // entry gone: recompute (a state-only call with the parameters model_ holds)
      if (with_parameters) load_parameters(call.x + num_state_inputs());
      aba(model_, data_, q_, qd_, tau_);
      for (int k = 0; k < nv_; ++k)
        if (data_.qdd[k] != call.y[k])
          throw std::logic_error("AbaNode::vjp: aba() does not reproduce the recorded q̈ (model structure changed?)");
      qdd_ = data_.qdd;
    }
    for (int k = 0; k < nv_; ++k) mu_[k] = out_adj[k];
    forward_dynamics_vjp(model_, data_, q_, qd_, qdd_, mu_, out_);
    write_input_adjoints(in_adj, with_parameters);
  }

 private:
  // State inputs → q_, q̇_, τ_, data_.f_ext.
  void load_state(const double* x) {
    for (int k = 0; k < nq_; ++k) q_[k] = *x++;
    for (int k = 0; k < nv_; ++k) qd_[k] = *x++;
    for (int k = 0; k < nv_; ++k) tau_[k] = *x++;
    for (int b = 0; b < nb_; ++b)
      for (int c = 0; c < 6; ++c) data_.f_ext[b][c] = *x++;
  }
  // Parameter values (num_parameter_inputs(), in input order) → model_.
  void load_parameters(const double* x) {
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

  // ∂L/∂(inputs) from out_ (tangent coordinates → raw q, see above); the
  // parameters' only when they are inputs.
  void write_input_adjoints(double* g, bool with_parameters) const {
    for (const Joint<double>& j : model_.joints) {
      switch (j.type) {
        case JointType::kFixed: break;
        case JointType::kRevolute:
        case JointType::kPrismatic: g[j.idx_q] = out_.q[j.idx_v]; break;
        case JointType::kSpherical:
          quaternion_adjoint(q_.data() + j.idx_q, Vec3<double>(out_.q.segment<3>(j.idx_v)), g + j.idx_q);
          break;
        case JointType::kFree: {
          const Quat<double> r = joint_quaternion<double>(q_, j.idx_q + 3).normalized();
          const Vec3<double> gp = r.toRotationMatrix() * out_.q.segment<3>(j.idx_v + 3);
          for (int c = 0; c < 3; ++c) g[j.idx_q + c] = gp[c];
          quaternion_adjoint(q_.data() + j.idx_q + 3, Vec3<double>(out_.q.segment<3>(j.idx_v)), g + j.idx_q + 3);
          break;
        }
      }
    }
    g += nq_;
    for (int k = 0; k < nv_; ++k) *g++ = out_.v[k];
    for (int k = 0; k < nv_; ++k) *g++ = out_.tau[k];
    for (int b = 0; b < nb_; ++b)
      for (int c = 0; c < 6; ++c) *g++ = out_.f_ext[b][c];
    if (!with_parameters) return;
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

  // ---- forward cache (see FORWARD CACHE above) ----
  // Doubles kept per body by save(), by the joint's number of velocities.
  static int cached_doubles(int nv) {
    switch (nv) {
      case 0: return 24;                 // X_up, X_world
      case 1: return 24 + 6 + 6 + 1;     // + oS, U·e₁, D⁻¹(0,0)
      case 3: return 24 + 18 + 9;        // + U (6x3), D⁻¹ (3x3)
      default: return 24 + 36 + 36 + 36; // free: + Iᴬ (floating base), U, D⁻¹
    }
  }
  static double* put(double* c, const Transform<double>& X) {
    std::memcpy(c, X.E.data(), 9 * sizeof(double));
    std::memcpy(c + 9, X.r.data(), 3 * sizeof(double));
    return c + 12;
  }
  static const double* get(const double* c, Transform<double>& X) {
    std::memcpy(X.E.data(), c, 9 * sizeof(double));
    std::memcpy(X.r.data(), c + 9, 3 * sizeof(double));
    return c + 12;
  }
  // data_ (after aba()) → one entry: what apply_inverse_inertia_joint and
  // rnea_vjp_sweeps read, q̈, and the parameter values of the call.
  void save(double* c) const {
    std::memcpy(c, data_.qdd.data(), static_cast<std::size_t>(nv_) * sizeof(double));
    c += nv_;
    for (int i = 0; i < nb_; ++i) {
      c = put(c, data_.X_up[i]);
      c = put(c, data_.X_world[i]);
      switch (model_.joints[i].nv) {
        case 0: break;
        case 1:
          for (int k = 0; k < 6; ++k) *c++ = data_.oS[i][k];
          for (int k = 0; k < 6; ++k) *c++ = data_.U[i](k, 0);
          *c++ = data_.Dinv[i](0, 0);
          break;
        case 3:
          for (int col = 0; col < 3; ++col)
            for (int k = 0; k < 6; ++k) *c++ = data_.U[i](k, col);
          for (int col = 0; col < 3; ++col)
            for (int k = 0; k < 3; ++k) *c++ = data_.Dinv[i](k, col);
          break;
        default:
          std::memcpy(c, data_.oYaba[i].data(), 36 * sizeof(double));
          std::memcpy(c + 36, data_.U[i].data(), 36 * sizeof(double));
          std::memcpy(c + 72, data_.Dinv[i].data(), 36 * sizeof(double));
          c += 108;
          break;
      }
    }
    std::memcpy(c, xv_.data() + num_state_inputs(), static_cast<std::size_t>(num_parameter_inputs()) * sizeof(double));
  }
  // One entry → data_, qdd_ and model_'s parameters (the inverse of save()).
  void restore(const double* c) {
    std::memcpy(qdd_.data(), c, static_cast<std::size_t>(nv_) * sizeof(double));
    c += nv_;
    for (int i = 0; i < nb_; ++i) {
      c = get(c, data_.X_up[i]);
      c = get(c, data_.X_world[i]);
      switch (model_.joints[i].nv) {
        case 0: break;
        case 1:
          for (int k = 0; k < 6; ++k) data_.oS[i][k] = *c++;
          for (int k = 0; k < 6; ++k) data_.U[i](k, 0) = *c++;
          data_.Dinv[i](0, 0) = *c++;
          break;
        case 3:
          for (int col = 0; col < 3; ++col)
            for (int k = 0; k < 6; ++k) data_.U[i](k, col) = *c++;
          for (int col = 0; col < 3; ++col)
            for (int k = 0; k < 3; ++k) data_.Dinv[i](k, col) = *c++;
          break;
        default:
          std::memcpy(data_.oYaba[i].data(), c, 36 * sizeof(double));
          std::memcpy(data_.U[i].data(), c + 36, 36 * sizeof(double));
          std::memcpy(data_.Dinv[i].data(), c + 72, 36 * sizeof(double));
          c += 108;
          break;
      }
    }
    load_parameters(c);
  }
  // The cache entry for a call about to be recorded on `tape` (CallSlots);
  // the cache grows only while warming up.
  std::size_t push_slot(const Tape& tape) {
    const std::size_t slot = slots_.push(tape);
    if (cache_.size() < slots_.size() * stride_)
      cache_.resize(std::max(slots_.size(), 2 * (cache_.size() / stride_)) * stride_);
    return slot;
  }
  // The entry of a recorded call, nullptr if it is gone.
  const double* cached(const ExternalCall& call) const {
    const std::size_t slot = slots_.find(call.tag);
    if (slot == CallSlots::kGone) return nullptr;
    const double* c = cache_.data() + slot * stride_;
    if (std::memcmp(c, call.y, static_cast<std::size_t>(nv_) * sizeof(double)) != 0) return nullptr;
    return c;
  }

  Model<double> model_;
  Data<double> data_;
  ForwardDynamicsVjp<double> out_;
  int nq_ = 0, nv_ = 0, nb_ = 0;
  VecX<double> q_, qd_, tau_, mu_;
  std::vector<Rev> x_;
  std::vector<double> xv_;
  std::vector<Rev> y_;
  VecX<double> qdd_;  // q̈ of the call being reversed
  // Forward cache: entry k at cache_[k·stride_].
  std::size_t stride_ = 0;
  std::vector<double> cache_;
  CallSlots slots_;
};

}  // namespace neuralsim
