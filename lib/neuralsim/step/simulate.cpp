#include "neuralsim/step/simulate.hpp"

#include "neuralsim/core/errors.hpp"

namespace neuralsim {

Eigen::Index rollout_controls(Stepper<double>& stepper, Eigen::VectorXd& q, Eigen::VectorXd& qd,
                              const Eigen::Ref<const RowMatrixXd>& controls, Eigen::Ref<RowMatrixXd> Q,
                              Eigen::Ref<RowMatrixXd> QD, const std::function<bool()>& should_stop) {
  const Model<double>& model = stepper.model();
  const Eigen::Index T = controls.rows();
  if (q.size() != model.nq || qd.size() != model.nv || controls.cols() != model.nv || Q.rows() != T ||
      Q.cols() != model.nq || QD.rows() != T || QD.cols() != model.nv)
    throw ModelError("rollout_controls: shapes do not match the model (nq " + std::to_string(model.nq) + ", nv " +
                     std::to_string(model.nv) + ")");
  Eigen::VectorXd u(model.nv);
  const double dt = stepper.options().dt;
  for (Eigen::Index k = 0; k < T; ++k) {
    if (k % 1000 == 999 && should_stop && should_stop()) return k;
    u = controls.row(k).transpose();
    stepper.step(q, qd, u, static_cast<double>(k) * dt);
    Q.row(k) = q.transpose();
    QD.row(k) = qd.transpose();
  }
  return T;
}

}  // namespace neuralsim
