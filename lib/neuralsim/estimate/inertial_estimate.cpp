#include "neuralsim/estimate/inertial_estimate.hpp"

#include <ceres/jet.h>

#include <cmath>
#include <limits>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/model/parameterization.hpp"

namespace neuralsim {

const std::array<const char*, 10>& InertialEstimate::coordinate_names() {
  static const std::array<const char*, 10> names = {"mass",       "com.x",      "com.y",      "com.z",
                                                    "inertia.xx", "inertia.yy", "inertia.zz", "inertia.xy",
                                                    "inertia.yz", "inertia.xz"};
  return names;
}

Eigen::Matrix<double, 10, 1> inertial_coordinates(const Eigen::Matrix<double, 10, 1>& theta,
                                                  Eigen::Matrix<double, 10, 10>* jacobian) {
  using J10 = ceres::Jet<double, 10>;
  Eigen::Matrix<J10, 10, 1> th;
  for (int i = 0; i < 10; ++i) th[i] = J10(theta[i], i);
  const Inertia<J10> I = inertia_from_log_cholesky<J10>(th);
  const Vec3<J10> c = I.h / I.mass;
  const Mat3<J10> Ic = I.I_origin - I.mass * (c.squaredNorm() * Mat3<J10>::Identity() - c * c.transpose());
  const J10 out[10] = {I.mass, c[0], c[1], c[2], Ic(0, 0), Ic(1, 1), Ic(2, 2), Ic(0, 1), Ic(1, 2), Ic(0, 2)};
  Eigen::Matrix<double, 10, 1> value;
  for (int k = 0; k < 10; ++k) {
    value[k] = out[k].a;
    if (jacobian) jacobian->row(k) = out[k].v.transpose();
  }
  return value;
}

std::vector<InertialEstimate> inertial_estimates(const Model<double>& model, const ParameterSet& params,
                                                 const std::vector<double>& values,
                                                 const Eigen::MatrixXd& covariance) {
  const int P = params.size();
  if (static_cast<int>(values.size()) != P || covariance.rows() != P || covariance.cols() != P)
    throw InvalidArgument("inertial_estimates: " + std::to_string(values.size()) + " values and a " +
                          std::to_string(covariance.rows()) + "×" + std::to_string(covariance.cols()) +
                          " covariance for " + std::to_string(P) + " parameters");
  std::vector<InertialEstimate> out;
  for (int i = 0; i < P; ++i) {
    // ParameterSet keeps a block's ten coordinates together and in order.
    if (params[i].kind() != ParameterKind::kLogCholesky || params[i].target.component != 0) continue;
    if (i + 10 > P) throw InvalidArgument("inertial_estimates: the log-Cholesky block of parameter " +
                                          params[i].name() + " is incomplete");
    Eigen::Matrix<double, 10, 1> theta;
    for (int k = 0; k < 10; ++k) theta[k] = values[static_cast<size_t>(i + k)];
    Eigen::Matrix<double, 10, 10> G;
    InertialEstimate e;
    e.link = model.bodies[static_cast<size_t>(params[i].target.body)].name;
    e.value = inertial_coordinates(theta, &G);
    const Eigen::Matrix<double, 10, 10> S = covariance.block<10, 10>(i, i);
    for (int k = 0; k < 10; ++k) {
      double var = 0;
      for (int a = 0; a < 10; ++a)
        for (int b = 0; b < 10; ++b)
          if (G(k, a) != 0.0 && G(k, b) != 0.0) var += G(k, a) * S(a, b) * G(k, b);
      e.std_error[k] = std::isnan(var) ? std::numeric_limits<double>::quiet_NaN() : std::sqrt(std::max(0.0, var));
    }
    out.push_back(std::move(e));
    i += 9;
  }
  return out;
}

}  // namespace neuralsim
