// Forward kinematics with velocities on the reverse-mode tape as ONE
// external node (grad/tape.hpp), with a hand-written VJP.
//
// WHY. A Stepper<Rev> with force hooks (augmentation sites, force-level
// contact) runs forward_kinematics(model, data, q, q̇) before the hooks. On
// the tape that is two 3x3 products per body and a motion transform, ~350
// elementary nodes per body: on the 5-link swimmer it cost more than the
// whole double rollout (rollout_gradient_bench, callgrind). As one node the
// forward pass is forward_kinematics<double> and the reverse pass one sweep
// over the bodies, leaf to root.
//
// WHAT. Outputs, per body b, as new tape variables written into Data<Rev>
// exactly where forward_kinematics writes them: X_up[b] (E column-major, r),
// X_world[b] (E, r) and v[b] (body coordinates): 30 per body. Inputs: q (nq
// raw coordinates), q̇ (nv) and, when any of them is a tape variable, every
// joint's origin.r (3 per joint, e.g. identified link lengths). The joint
// axes and origin rotations (origin.E) are structure: when one of them is a
// tape variable, record() tapes forward_kinematics<Rev> operation by
// operation instead (no derivative is dropped), and their values must not
// change after construction (checked at each record()).
//
// VJP (RBDA §4.1 recursions, reversed). With X_up = X_J(q) X_T,
// X_world = X_up X_world[λ] (E_w = E_u E_wλ, r_w = r_wλ + E_wλᵀ r_u) and
// v = X_up v[λ] + S q̇ (ω = E ω_λ, ν = E(ν_λ - r × ω_λ)), each body from
// the leaves to the root adds into its parent
//   Ē_wλ += E_uᵀ Ē_w + r_u r̄_wᵀ,  r̄_wλ += r̄_w,
//   ω̄_λ += Eᵀ ω̄ + r × (Eᵀ ν̄),  ν̄_λ += Eᵀ ν̄,
// and into its own joint transform
//   Ē_u += Ē_w E_wλᵀ + ω̄ ω_λᵀ + ν̄ (ν_λ - r × ω_λ)ᵀ,  r̄_u += E_wλ r̄_w + (Eᵀ ν̄) × ω_λ.
// A joint rotation perturbed on the right, R ← R exp([δ]×), changes
// E_u by -[δ]× E_u, so ∂L/∂δ = -vee(N - Nᵀ) with N = E_u Ē_uᵀ; a revolute
// joint takes a·(∂L/∂δ), a quaternion quaternion_adjoint (model_values.hpp).
// A prismatic joint and a free joint's position move r_u by E_Tᵀ dr_J, and
// r̄_T = r̄_u. Every value the sweep needs is an output of the call itself
// (ExternalCall::y), so the node keeps no per-call cache.
//
// The node holds a workspace: one node per thread, outliving every
// reverse() of a tape that recorded it.
#pragma once

#include <cstring>
#include <vector>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/dynamics/kinematics.hpp"
#include "neuralsim/grad/model_values.hpp"
#include "neuralsim/grad/rev_engine.hpp"

namespace neuralsim {

class KinematicsNode final : public ExternalFunction {
 public:
  static constexpr int kOutputsPerBody = 30;  // X_up (12), X_world (12), v (6)

  explicit KinematicsNode(const Model<Rev>& model) : model_(model_values(model)), data_(model_) {
    nq_ = model_.nq;
    nv_ = model_.nv;
    nb_ = model_.num_bodies();
    q_ = VecX<double>::Zero(nq_);
    qd_ = VecX<double>::Zero(nv_);
    x_.assign(static_cast<std::size_t>(nq_ + nv_ + 3 * nb_), Rev(0.0));
    yv_.assign(static_cast<std::size_t>(kOutputsPerBody * nb_), 0.0);
    y_.assign(yv_.size(), Rev(0.0));
    Ew_bar_.assign(static_cast<std::size_t>(nb_), Mat3<double>::Zero());
    rw_bar_.assign(static_cast<std::size_t>(nb_), Vec3<double>::Zero());
    v_bar_.assign(static_cast<std::size_t>(nb_), Vec6<double>::Zero());
  }

  // forward_kinematics(model, data, q, q̇) on `tape`: data.X_up, X_world and
  // v receive the node's outputs. Returns false when the model's axes or
  // origin rotations carry derivatives and the kinematics were taped
  // operation by operation instead.
  bool record(Tape& tape, const Model<Rev>& model, Data<Rev>& data, const VecX<Rev>& q, const VecX<Rev>& qd) {
    check_argument_size("KinematicsNode::record", "q", q.size(), nq_);
    check_argument_size("KinematicsNode::record", "q̇", qd.size(), nv_);
    check_argument_size("KinematicsNode::record", "model bodies", model.num_bodies(), nb_);
    bool origins = false;
    for (int b = 0; b < nb_; ++b) {
      const Joint<Rev>& j = model.joints[b];
      const Joint<double>& jd = model_.joints[b];
      for (int c = 0; c < 3; ++c) {
        if (!j.axis[c].is_constant()) return taped(model, data, q, qd);
        if (j.axis[c].value() != jd.axis[c]) structure_changed(jd);
        origins |= !j.origin.r[c].is_constant();
      }
      for (int c = 0; c < 9; ++c) {
        const Rev& e = j.origin.E(c % 3, c / 3);
        if (!e.is_constant()) return taped(model, data, q, qd);
        if (e.value() != jd.origin.E(c % 3, c / 3)) structure_changed(jd);
      }
    }
    Rev* x = x_.data();
    for (int k = 0; k < nq_; ++k) q_[k] = (*x++ = q[k]).value();
    for (int k = 0; k < nv_; ++k) qd_[k] = (*x++ = qd[k]).value();
    for (int b = 0; b < nb_; ++b) {
      Vec3<double>& r = model_.joints[b].origin.r;
      for (int c = 0; c < 3; ++c) {
        r[c] = model.joints[b].origin.r[c].value();
        if (origins) *x++ = model.joints[b].origin.r[c];
      }
    }
    forward_kinematics(model_, data_, q_, qd_);
    double* y = yv_.data();
    for (int b = 0; b < nb_; ++b) {
      y = put(y, data_.X_up[b]);
      y = put(y, data_.X_world[b]);
      std::memcpy(y, data_.v[b].data(), 6 * sizeof(double));
      y += 6;
    }
    const int n_in = static_cast<int>(x - x_.data());
    tape.external(*this, x_.data(), n_in, yv_.data(), y_.data(), kOutputsPerBody * nb_);
    const Rev* yr = y_.data();
    for (int b = 0; b < nb_; ++b) {
      yr = get(yr, data.X_up[b]);
      yr = get(yr, data.X_world[b]);
      for (int c = 0; c < 6; ++c) data.v[b][c] = *yr++;
    }
    return true;
  }

  void vjp(const ExternalCall& call, const double* out_adj, double* in_adj) override {
    const bool origins = call.n_in == nq_ + nv_ + 3 * nb_;
    if ((!origins && call.n_in != nq_ + nv_) || call.n_out != kOutputsPerBody * nb_)
      throw std::logic_error("KinematicsNode::vjp: a call recorded by another node");
    for (int b = 0; b < nb_; ++b) {
      const double* a = out_adj + b * kOutputsPerBody;
      Ew_bar_[b] = Eigen::Map<const Mat3<double>>(a + 12);
      rw_bar_[b] = Eigen::Map<const Vec3<double>>(a + 21);
      v_bar_[b] = Eigen::Map<const Vec6<double>>(a + 24);
    }
    const double* q = call.x;
    double* gq = in_adj;
    double* gv = in_adj + nq_;
    for (int i = nb_ - 1; i >= 0; --i) {
      const Joint<double>& j = model_.joints[i];
      const double* yi = call.y + i * kOutputsPerBody;
      const double* ai = out_adj + i * kOutputsPerBody;
      const Eigen::Map<const Mat3<double>> Eu(yi);
      const Eigen::Map<const Vec3<double>> ru(yi + 9);
      Mat3<double> Eu_bar = Eigen::Map<const Mat3<double>>(ai);
      Vec3<double> ru_bar = Eigen::Map<const Vec3<double>>(ai + 9);
      const Vec3<double> w_bar = v_bar_[i].head<3>(), n_bar = v_bar_[i].tail<3>();
      if (j.parent < 0) {  // X_world = X_up, v = v_J
        Eu_bar += Ew_bar_[i];
        ru_bar += rw_bar_[i];
      } else {
        const int p = j.parent;
        const double* yp = call.y + p * kOutputsPerBody;
        const Eigen::Map<const Mat3<double>> Ewp(yp + 12);
        const Eigen::Map<const Vec3<double>> wp(yp + 24), np(yp + 27);
        Eu_bar.noalias() += Ew_bar_[i] * Ewp.transpose();
        Ew_bar_[p].noalias() += Eu.transpose() * Ew_bar_[i];
        Ew_bar_[p].noalias() += ru * rw_bar_[i].transpose();
        rw_bar_[p] += rw_bar_[i];
        ru_bar.noalias() += Ewp * rw_bar_[i];
        const Vec3<double> Etn = Eu.transpose() * n_bar;
        const Vec3<double> lin = np - ru.cross(wp);
        Eu_bar.noalias() += w_bar * wp.transpose();
        Eu_bar.noalias() += n_bar * lin.transpose();
        v_bar_[p].head<3>() += Eu.transpose() * w_bar + ru.cross(Etn);
        v_bar_[p].tail<3>() += Etn;
        ru_bar += Etn.cross(wp);
      }
      // ∂L/∂δ for a right perturbation of the joint rotation.
      const Mat3<double> N = Eu * Eu_bar.transpose();
      const Vec3<double> g_rot(N(2, 1) - N(1, 2), N(0, 2) - N(2, 0), N(1, 0) - N(0, 1));
      switch (j.type) {
        case JointType::kFixed: break;
        case JointType::kRevolute:
          gq[j.idx_q] = j.axis.dot(g_rot);
          gv[j.idx_v] = j.axis.dot(w_bar);
          break;
        case JointType::kPrismatic:
          gq[j.idx_q] = ru_bar.dot(j.origin.E.transpose() * j.axis);
          gv[j.idx_v] = j.axis.dot(n_bar);
          break;
        case JointType::kSpherical:
          quaternion_adjoint(q + j.idx_q, g_rot, gq + j.idx_q);
          for (int c = 0; c < 3; ++c) gv[j.idx_v + c] = w_bar[c];
          break;
        case JointType::kFree: {
          const Vec3<double> gp = j.origin.E * ru_bar;
          for (int c = 0; c < 3; ++c) gq[j.idx_q + c] = gp[c];
          quaternion_adjoint(q + j.idx_q + 3, g_rot, gq + j.idx_q + 3);
          for (int c = 0; c < 3; ++c) gv[j.idx_v + c] = w_bar[c];
          for (int c = 0; c < 3; ++c) gv[j.idx_v + 3 + c] = n_bar[c];
          break;
        }
      }
      if (origins)
        for (int c = 0; c < 3; ++c) in_adj[nq_ + nv_ + 3 * i + c] = ru_bar[c];
    }
  }

 private:
  bool taped(const Model<Rev>& model, Data<Rev>& data, const VecX<Rev>& q, const VecX<Rev>& qd) {
    forward_kinematics(model, data, q, qd);
    return false;
  }
  [[noreturn]] static void structure_changed(const Joint<double>& j) {
    throw InvalidArgument("KinematicsNode: the axis or origin rotation of joint '" + j.name +
                          "' changed after the node was built (they are structure: build a new node)");
  }
  static double* put(double* y, const Transform<double>& X) {
    std::memcpy(y, X.E.data(), 9 * sizeof(double));
    std::memcpy(y + 9, X.r.data(), 3 * sizeof(double));
    return y + 12;
  }
  static const Rev* get(const Rev* y, Transform<Rev>& X) {
    for (int c = 0; c < 9; ++c) X.E(c % 3, c / 3) = *y++;
    for (int c = 0; c < 3; ++c) X.r[c] = *y++;
    return y;
  }

  Model<double> model_;
  Data<double> data_;
  int nq_ = 0, nv_ = 0, nb_ = 0;
  VecX<double> q_, qd_;
  std::vector<Rev> x_, y_;
  std::vector<double> yv_;
  std::vector<Mat3<double>> Ew_bar_;
  std::vector<Vec3<double>> rw_bar_;
  std::vector<Vec6<double>> v_bar_;
};

}  // namespace neuralsim
