// The inverse-dynamics residual from the precomputed regressor (residuals.hpp).
// Per evaluation of a block of samples: the model at θ once (double), π,
// then r_s = Y_s π + τ_rotor,s + armature·q̈_s − passive_s − gear·τ_s. With
// the Jacobian, ⌈P/8⌉ passes of Jet8 over θ give ∂π/∂θ and the joint-local
// terms' derivatives; J_s = Y_s ∂π/∂θ + ∂(armature·q̈ − passive)/∂θ. No RNEA
// runs after the regressor was formed: the rigid-body part is a matrix
// product.
#include <ceres/cost_function.h>

#include "neuralsim/dynamics/inverse_dynamics_regressor.hpp"
#include "neuralsim/dynamics/rnea.hpp"
#include "neuralsim/estimate/residuals.hpp"
#include "neuralsim/step/body_drag.hpp"
#include "neuralsim/step/passive_forces.hpp"

namespace neuralsim {
namespace {

bool joint_local_or_inertial(ParameterRef::Kind k) {
  using K = ParameterRef::Kind;
  switch (k) {
    case K::kMass: case K::kCom: case K::kInertia: case K::kDamping: case K::kFriction:
    case K::kFrictionVelocity: case K::kArmature: case K::kSpringStiffness: case K::kSpringRest:
    case K::kTorqueOffset: case K::kFrictionStatic: case K::kStribeckVelocity: case K::kFrictionSlope:
    case K::kFrictionShift:
      return true;
    default:
      return false;
  }
}

class RegressorCost final : public ceres::CostFunction {
 public:
  RegressorCost(const ResidualContext& ctx, std::shared_ptr<const RegressorSamples> samples, int first, int count,
                double weight, const BaseColumns* base = nullptr)
      : ctx_(ctx), rs_(std::move(samples)), first_(first), count_(count), weight_(weight) {
    set_num_residuals(count * ctx.model->nv);
    mutable_parameter_block_sizes()->push_back(ctx.parameters->size());
    if (base) {
      base_ = *base;
      mutable_parameter_block_sizes()->push_back(static_cast<int>(base_.beta.size()));
    }
  }

  bool Evaluate(double const* const* parameters, double* residuals, double** jacobians) const override {
    const Model<double>& nominal = *ctx_.model;
    const int nv = nominal.nv, P = ctx_.parameters->size(), nb = nominal.num_bodies();
    const InverseDynamicsSamples& s = *rs_->samples;
    Model<double> model = nominal;
    ctx_.parameters->apply(parameters[0], model);
    Eigen::VectorXd pi = model_inertial_parameters(model);
    for (int c : base_.replaced) pi[c] = 0;
    const bool in_base = !base_.beta.empty();
    Data<double> data(model);
    for (int n = 0; n < count_; ++n) {
      const int row = first_ + n;
      const Eigen::VectorXd q = s.q.row(row).transpose(), qd = s.qd.row(row).transpose();
      passive_forces(model, data, q, qd);
      const Eigen::MatrixXd& Y = rs_->Y[static_cast<size_t>(row)];
      Eigen::VectorXd tau = Y * pi + rs_->tau_rotor.row(row).transpose();
      if (in_base)
        for (size_t k = 0; k < base_.beta.size(); ++k) tau += Y.col(base_.beta[k]) * parameters[1][k];
      for (const Joint<double>& j : model.joints)
        for (int k = 0; k < j.nv; ++k) {
          const int i = j.idx_v + k;
          const double t = tau[i] + j.dynamics.armature * s.qdd(row, i) - data.tau_passive[i] -
                           j.dynamics.gear_ratio * s.tau(row, i);
          residuals[n * nv + i] = weight_ * t;
        }
    }
    if (!jacobians) return std::isfinite(pi.sum());
    if (in_base && jacobians[1]) {
      const Eigen::Index B = static_cast<Eigen::Index>(base_.beta.size());
      Eigen::Map<Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> Jb(jacobians[1], count_ * nv, B);
      for (int n = 0; n < count_; ++n)
        for (Eigen::Index k = 0; k < B; ++k)
          Jb.block(n * nv, k, nv, 1) = weight_ * rs_->Y[static_cast<size_t>(first_ + n)].col(base_.beta[static_cast<size_t>(k)]);
    }
    if (!jacobians[0]) return std::isfinite(pi.sum());
    // Row-major count·nv × P.
    Eigen::Map<Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> J(jacobians[0], count_ * nv, P);
    Eigen::MatrixXd dpi(10 * nb, P);  // ∂π/∂θ
    Eigen::MatrixXd local = Eigen::MatrixXd::Zero(count_ * nv, P);  // ∂(armature·q̈ − passive)/∂θ
    const Model<Jet8> jet_nominal = nominal.template cast<Jet8>();
    std::vector<Jet8> x(static_cast<size_t>(P));
    for (int pass = 0; pass < P; pass += 8) {
      for (int i = 0; i < P; ++i) {
        x[static_cast<size_t>(i)] = Jet8(parameters[0][i]);
        if (i >= pass && i < pass + 8) x[static_cast<size_t>(i)].v[i - pass] = 1;
      }
      Model<Jet8> jm = jet_nominal;
      ctx_.parameters->apply(x.data(), jm);
      const int lanes = std::min(8, P - pass);
      for (int b = 0; b < nb; ++b) {
        const Eigen::Matrix<Jet8, 10, 1> p = inertial_parameters(jm.bodies[b].inertia);
        for (int c = 0; c < 10; ++c)
          for (int l = 0; l < lanes; ++l) dpi(10 * b + c, pass + l) = p[c].v[l];
      }
      for (int c : base_.replaced) dpi.row(c).setZero();
      Data<Jet8> jd(jm);
      for (int n = 0; n < count_; ++n) {
        const int row = first_ + n;
        const VecX<Jet8> q = s.q.row(row).transpose().cast<Jet8>(), qd = s.qd.row(row).transpose().cast<Jet8>();
        passive_forces(jm, jd, q, qd);
        for (const Joint<Jet8>& j : jm.joints)
          for (int k = 0; k < j.nv; ++k) {
            const int i = j.idx_v + k;
            const Jet8 t = j.dynamics.armature * s.qdd(row, i) - jd.tau_passive[i];
            for (int l = 0; l < lanes; ++l) local(n * nv + i, pass + l) = t.v[l];
          }
      }
    }
    for (int n = 0; n < count_; ++n) {
      const int row = first_ + n;
      J.middleRows(n * nv, nv) = weight_ * (rs_->Y[static_cast<size_t>(row)] * dpi + local.middleRows(n * nv, nv));
    }
    return std::isfinite(pi.sum());
  }

 private:
  ResidualContext ctx_;
  std::shared_ptr<const RegressorSamples> rs_;
  int first_, count_;
  double weight_;
  BaseColumns base_;  // empty: standard coordinates
};

}  // namespace

bool regressor_route_applies(const Model<double>& model, const ParameterSet& params, std::string* why_not) {
  auto refuse = [&](const std::string& why) {
    if (why_not) *why_not = why;
    return false;
  };
  if (has_body_drag(model)) return refuse("the model has body drag (its wrench depends on the COM)");
  for (int i = 0; i < params.size(); ++i) {
    const EstimatedParameter& p = params[i];
    if (p.kind() == ParameterKind::kLogCholesky) continue;
    if (p.kind() == ParameterKind::kModel && joint_local_or_inertial(p.target.model.kind)) continue;
    return refuse("parameter '" + p.name() + "' is neither inertial nor joint-local");
  }
  return true;
}

std::shared_ptr<const RegressorSamples> prepare_regressor_samples(
    const Model<double>& model, const std::shared_ptr<const InverseDynamicsSamples>& samples) {
  auto out = std::make_shared<RegressorSamples>();
  out->samples = samples;
  const int n = static_cast<int>(samples->q.rows()), nv = model.nv;
  out->Y.resize(static_cast<size_t>(n));
  out->tau_rotor = Eigen::MatrixXd::Zero(n, nv);
  // The rotors' torques: RNEA of the model without link inertias and
  // armature (rnea.hpp: what remains are the rotor couples).
  bool rotors = false;
  Model<double> bare = model;
  for (Body<double>& b : bare.bodies) b.inertia = Inertia<double>();
  for (Joint<double>& j : bare.joints) {
    j.dynamics.armature = 0;
    rotors = rotors || j.has_rotor;
  }
  Data<double> data(model), bare_data(bare);
  for (int r = 0; r < n; ++r) {
    const Eigen::VectorXd q = samples->q.row(r).transpose(), qd = samples->qd.row(r).transpose(),
                          qdd = samples->qdd.row(r).transpose();
    inverse_dynamics_regressor(model, data, q, qd, qdd, out->Y[static_cast<size_t>(r)]);
    if (rotors) {
      rnea(bare, bare_data, q, qd, qdd);
      out->tau_rotor.row(r) = bare_data.tau.transpose();
    }
  }
  return out;
}

ceres::CostFunction* make_regressor_inverse_dynamics_cost(const ResidualContext& ctx,
                                                          const std::shared_ptr<const RegressorSamples>& samples,
                                                          int first, int count, double weight) {
  return new RegressorCost(ctx, samples, first, count, weight);
}

ceres::CostFunction* make_base_parameter_inverse_dynamics_cost(const ResidualContext& ctx,
                                                               const std::shared_ptr<const RegressorSamples>& samples,
                                                               const BaseColumns& base, int first, int count,
                                                               double weight) {
  const int columns = 10 * ctx.model->num_bodies();
  for (const std::vector<int>* v : {&base.beta, &base.replaced})
    for (int c : *v)
      if (c < 0 || c >= columns)
        throw InvalidArgument("make_base_parameter_inverse_dynamics_cost: column " + std::to_string(c) +
                              " outside the model's " + std::to_string(columns) + " standard parameters");
  if (base.beta.empty()) throw InvalidArgument("make_base_parameter_inverse_dynamics_cost: no base parameter");
  return new RegressorCost(ctx, samples, first, count, weight, &base);
}

}  // namespace neuralsim
