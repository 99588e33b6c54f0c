// An IMU on a link at an offset (estimate/imu.hpp) against finite
// differences of the link's pose along a simulated trajectory: the gyro is
// the rotation rate of the sensor frame, the accelerometer the second
// difference of the sensor origin's world position minus g, both in sensor
// coordinates. A floating, branching 3-D tree in free fall (every joint
// type) with a tilted gravity.
#include <gtest/gtest.h>

#include <random>

#include "neuralsim/dynamics/kinematics.hpp"
#include "neuralsim/dynamics/rnea.hpp"
#include "neuralsim/estimate/imu.hpp"
#include "neuralsim/step/stepper.hpp"
#include "support/test_models.hpp"

namespace neuralsim::imu_test {

TEST(Imu, GyroAndAccelerometerMatchFiniteDifferencesOfThePose) {
  const Model<double> model = testing::mixed_joint_model();
  std::mt19937 rng(11);
  Eigen::VectorXd q, qd;
  testing::random_state(model, rng, q, qd);
  StepOptions options;
  options.integrator = Integrator::kRK4;
  const double h = 1e-3;
  options.dt = h;
  Stepper<double> stepper(model, options);
  const Eigen::VectorXd u = Eigen::VectorXd::Zero(model.nv);
  std::vector<Eigen::VectorXd> qs{q}, qds{qd};
  for (int k = 0; k < 40; ++k) {
    stepper.step(q, qd, u, k * h);
    qs.push_back(q);
    qds.push_back(qd);
  }
  ImuMount mount;
  mount.position = Eigen::Vector3d(0.05, -0.12, 0.08);
  mount.rotation = Eigen::AngleAxisd(0.7, Eigen::Vector3d(1, 2, -1).normalized()).toRotationMatrix();
  Data<double> data(model);
  for (const char* link : {"elbow", "slider", "base"}) {
    mount.body = model.body_index(link);
    // The sensor's world pose at sample k.
    auto pose = [&](int k, Eigen::Matrix3d& R_ws, Eigen::Vector3d& x) {
      forward_kinematics(model, data, qs[static_cast<size_t>(k)]);
      const Transform<double>& X = data.X_world[static_cast<size_t>(mount.body)];
      R_ws = X.E.transpose() * mount.rotation;
      x = X.r + X.E.transpose() * mount.position;
    };
    for (const int k : {10, 25, 39}) {
      stepper.forward_dynamics(qs[static_cast<size_t>(k)], qds[static_cast<size_t>(k)], u, k * h);
      const Eigen::VectorXd qdd = stepper.data().qdd;
      rnea(model, data, qs[static_cast<size_t>(k)], qds[static_cast<size_t>(k)], qdd);
      const ImuReading<double> imu = imu_reading(data, mount);
      Eigen::Matrix3d Rm, R0, Rp;
      Eigen::Vector3d xm, x0, xp;
      pose(k - 1, Rm, xm);
      pose(k, R0, x0);
      pose(k + 1, Rp, xp);
      const Eigen::Vector3d accel = (xp - 2 * x0 + xm) / (h * h);
      const Eigen::Vector3d specific_force = R0.transpose() * (accel - model.gravity);
      const Eigen::AngleAxisd turn(Eigen::Matrix3d(Rm.transpose() * Rp));  // sensor frame, over 2h
      const Eigen::Vector3d gyro = turn.angle() * turn.axis() / (2 * h);
      EXPECT_LT((imu.gyro - gyro).norm(), 1e-5 * (1 + gyro.norm())) << link << " sample " << k;
      EXPECT_LT((imu.specific_force - specific_force).norm(), 1e-4 * (1 + specific_force.norm()))
          << link << " sample " << k << ": " << imu.specific_force.transpose() << " vs " << specific_force.transpose();
      EXPECT_GT(gyro.norm(), 0.1);  // the links turn: the check is not vacuous
    }
  }
}

}  // namespace neuralsim::imu_test
