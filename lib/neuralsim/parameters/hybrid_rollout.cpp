// Implementation of hybrid_rollout.hpp (declarations and documentation there),
// compiled once in the parameters layer.
#include "neuralsim/parameters/hybrid_rollout.hpp"

#include <string>

namespace neuralsim {

HybridRollout::HybridRollout(RolloutProblem problem)
    : p_(std::move(problem)),
      params_(p_.physical, p_.augment),
      model_d_(p_.model),
      stepper_d_(model_d_, p_.step),
      tape_(),
      model_r_(p_.model.cast<Rev>()),
      stepper_r_(model_r_, p_.step) {
  // A rollout under given controls has no recorded signal to delay.
  if (p_.physical.has(ParameterKind::kControlDelay) || p_.physical.has(ParameterKind::kSensorDelay))
    throw InvalidArgument(
        "HybridRollout: 'controls.delay' and "
        "'observe.*.delay' delay recorded signals; only "
        "simid fits them");
  if (p_.contact) {
    if (p_.contact->model == ContactModelType::kImpulse) p_.contact->pgs.warm_start = false;
    contact_d_ = install_contact<double>(*p_.contact, p_.model, stepper_d_);
    contact_r_ = install_contact<Rev>(*p_.contact, p_.model, stepper_r_);
    contact_base_ = contact_d_->parameters();
  }
  if (!p_.augment.empty()) {
    aug_d_ = install_augmentation<double>(p_.augment, p_.model, stepper_d_, contact_d_.get());
    aug_r_ = install_augmentation<Rev>(p_.augment, p_.model, stepper_r_, contact_r_.get());
    aug_r_->set_tape(&tape_);
  }
  driver_ = std::make_unique<RolloutGradient>(stepper_d_, stepper_r_, tape_);
  if (contact_r_) driver_->use_contact(contact_r_.get(), p_.implicit_impulse);
}

double HybridRollout::value(const std::vector<double>& x, const Eigen::VectorXd& q0, const Eigen::VectorXd& qd0,
                            const Eigen::MatrixXd& controls, const TrajectoryLoss& loss) {
  Eigen::VectorXd qd = qd0;
  prepare(x, qd);
  return driver_->value(q0, qd, controls, loss);
}

double HybridRollout::gradient(const std::vector<double>& x, const Eigen::VectorXd& q0, const Eigen::VectorXd& qd0,
                               const Eigen::MatrixXd& controls, const TrajectoryLoss& loss, HybridRolloutGradient& out,
                               int checkpoint_interval) {
  Eigen::VectorXd qd = qd0;
  prepare(x, qd);
  if (aug_r_) aug_r_->zero_gradient();
  RolloutGradientResult& r = result_;
  const int np = params_.physical().size();
  driver_->gradient(q0, qd, controls, loss, r, xr_.data(), np, checkpoint_interval);
  out.loss = r.loss;
  out.q0 = r.q0;
  out.qd0 = r.qd0;
  out.controls.swap(r.controls);
  out.x.setZero(params_.size());
  out.x.head(np) = r.parameters;
  if (aug_r_)
    for (int i = 0; i < params_.num_weights(); ++i) out.x[np + i] = aug_r_->gradient()[static_cast<std::size_t>(i)];
  // initial.qd.<c> = physical(x_i): the chain rule through the transformation.
  const ParameterSet& ps = params_.physical();
  for (int i = 0; i < np; ++i)
    if (ps[i].kind() == ParameterKind::kInitialVelocity) {
      const int v = ps[i].target.velocity_index;
      Tape t;
      const Rev xi = t.variable(x[static_cast<std::size_t>(i)]);
      t.reverse(ps.physical<Rev>(i, xi));
      out.x[i] += t.adjoint(xi) * out.qd0[v];
      out.qd0[v] = 0.0;
    }
  return out.loss;
}

void HybridRollout::prepare(const std::vector<double>& x, Eigen::VectorXd& qd0) {
  if (static_cast<int>(x.size()) != params_.size())
    throw InvalidArgument("HybridRollout: " + std::to_string(x.size()) + " variables for " +
                          std::to_string(params_.size()) + " parameters");
  model_d_ = p_.model;
  if (contact_d_) contact_d_->parameters() = contact_base_;
  params_.apply<double>(x.data(), &model_d_, contact_d_ ? &contact_d_->parameters() : nullptr, &qd0, aug_d_.get());
  tape_.clear();
  model_r_ = p_.model.cast<Rev>();
  xr_.resize(x.size());
  const int np = params_.physical().size();
  for (int i = 0; i < params_.size(); ++i)
    xr_[static_cast<std::size_t>(i)] = i < np ? tape_.variable(x[static_cast<std::size_t>(i)]) : Rev(x[i]);
  if (contact_r_) {
    contact_r_->parameters() = contact_base_.cast<Rev>();
  }
  params_.apply<Rev>(xr_.data(), &model_r_, contact_r_ ? &contact_r_->parameters() : nullptr, nullptr, aug_r_.get());
}

}  // namespace neuralsim
