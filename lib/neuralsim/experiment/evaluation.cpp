#include "neuralsim/experiment/evaluation.hpp"

#include <cmath>

#include "neuralsim/augment/augmented_dynamics.hpp"
#include "neuralsim/contact/contact_system.hpp"
#include "neuralsim/model/configuration.hpp"
#include "neuralsim/step/replay.hpp"

namespace neuralsim {

PredictionError prediction_error(const Model<double>& model, const Trajectory& recorded, const Trajectory& predicted,
                                 const std::vector<long long>& horizons) {
  PredictionError e;
  e.name = recorded.name;
  const Eigen::Index T = recorded.size();
  std::vector<double> sq_q(T, 0.0);
  Eigen::VectorXd dq(model.nv);
  double sum_q = 0, sum_qd = 0;
  for (Eigen::Index k = 0; k < T; ++k) {
    difference_configuration(model, Eigen::VectorXd(recorded.q.row(k).transpose()),
                             Eigen::VectorXd(predicted.q.row(k).transpose()), dq);
    sq_q[k] = dq.squaredNorm();
    sum_q += sq_q[k];
    sum_qd += (predicted.qd.row(k) - recorded.qd.row(k)).squaredNorm();
  }
  e.rmse_q = std::sqrt(sum_q / (T * model.nv));
  e.rmse_qd = std::sqrt(sum_qd / (T * model.nv));
  for (long long h : horizons) {
    const long long n = std::min<long long>(h, T);
    double s = 0;
    for (long long k = 0; k < n; ++k) s += sq_q[k];
    e.rmse_q_by_horizon.emplace_back(n, std::sqrt(s / (n * model.nv)));
  }
  return e;
}

double link_position_rmse(const std::vector<std::string>& links, const Trajectory& recorded,
                          const Trajectory& predicted) {
  double s = 0;
  long long n = 0;
  for (const std::string& link : links)
    for (Eigen::Index k = 1; k < recorded.size(); ++k) {
      s += (recorded.link_poses.at(link).row(k).head<3>() - predicted.link_poses.at(link).row(k).head<3>()).squaredNorm();
      n += 3;
    }
  return n > 0 ? std::sqrt(s / n) : 0.0;
}

Trajectory replay_recording(const Model<double>& model, const StepOptions& options,
                            const std::optional<ContactSettings>& contact, const Trajectory& recorded,
                            const std::vector<AugmentBlueprint>& augment) {
  Stepper<double> stepper(model, options);
  std::shared_ptr<ContactSystem<double>> contact_system;
  if (contact) contact_system = install_contact(*contact, model, stepper);
  std::shared_ptr<AugmentedDynamics<double>> networks;
  if (!augment.empty()) networks = install_augmentation<double>(augment, model, stepper, contact_system.get());
  return predict_recording(stepper, recorded, recorded.size());
}

}  // namespace neuralsim
