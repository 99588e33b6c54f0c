// Forward-mode derivatives (ceres::Jet) of a whole rollout against central
// finite differences of the same rollout in double: the final state of a 2 s
// double-pendulum simulation (semi-implicit Euler, dt = 1 ms) with respect to
// named physical parameters and to the initial state.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string>

#include <ceres/jet.h>

#include "neuralsim/model/parameters.hpp"
#include "neuralsim/step/stepper.hpp"
#include "support/test_models.hpp"

namespace neuralsim {
namespace {

// The library's one instantiated Jet width; four lanes are used.
using Jet = Jet8;
constexpr double kDerivativeDt = 1e-3;
constexpr int kDerivativeSteps = 2000;

// Final [q; q̇] after kDerivativeSteps steps from (q, q̇).
template <class S>
VecX<S> final_state(const Model<S>& model, VecX<S> q, VecX<S> qd) {
  Stepper<S> stepper(model, StepOptions{Integrator::kSemiImplicitEuler, kDerivativeDt, 1});
  const VecX<S> u = VecX<S>::Zero(model.nv);
  for (int k = 0; k < kDerivativeSteps; ++k) stepper.step(q, qd, u, k * kDerivativeDt);
  VecX<S> x(q.size() + qd.size());
  x << q, qd;
  return x;
}

struct DerivativeTest : ::testing::Test {
  Model<double> model = load_yaml_model(testing::source_path("configs/models/double_pendulum.yaml"));
  Eigen::VectorXd q0 = Eigen::Vector2d(1.2, -0.8), qd0 = Eigen::Vector2d(0.5, -0.3);

  // Column k of the Jet Jacobian of the final state.
  static Eigen::MatrixXd jet_jacobian(const VecX<Jet>& x) {
    Eigen::MatrixXd J(x.size(), 4);
    for (int i = 0; i < x.size(); ++i) J.row(i) = x[i].v.head<4>().transpose();
    return J;
  }
  static void expect_columns_agree(const Eigen::MatrixXd& J_jet, const Eigen::MatrixXd& J_fd,
                                   const std::array<std::string, 4>& names) {
    double worst = 0;
    for (int k = 0; k < 4; ++k) {
      const double fd_norm = J_fd.col(k).norm();
      const double rel = (J_jet.col(k) - J_fd.col(k)).norm() / fd_norm;
      worst = std::max(worst, rel);
      EXPECT_GT(fd_norm, 1e-3) << names[k] << ": the final state should depend on it";
      EXPECT_LT(rel, 1e-6) << names[k] << ": jet " << J_jet.col(k).transpose() << " vs fd "
                           << J_fd.col(k).transpose();
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3e", worst);
    RecordProperty("max_rel_error_jet_vs_fd", buf);
  }

  // Jet vs central differences for four named parameters of `base`.
  void check_parameters(const Model<double>& base, const std::array<std::string, 4>& names) {
    Model<Jet> mj = base.cast<Jet>();
    Eigen::MatrixXd J_fd(4, 4);
    for (int k = 0; k < 4; ++k) {
      const ParameterRef ref = resolve_parameter(base, names[k]);
      const double p = get_parameter(base, ref);
      set_parameter(mj, ref, Jet(p, k));
      const double h = 1e-6 * std::max(1.0, std::abs(p));
      Model<double> plus = base, minus = base;
      set_parameter(plus, ref, p + h);
      set_parameter(minus, ref, p - h);
      J_fd.col(k) = (final_state(plus, q0, qd0) - final_state(minus, q0, qd0)) / (2 * h);
    }
    const VecX<Jet> x = final_state(mj, q0.cast<Jet>().eval(), qd0.cast<Jet>().eval());
    // The Jet values must reproduce the double rollout.
    const Eigen::VectorXd x_double = final_state(base, q0, qd0);
    for (int i = 0; i < 4; ++i) EXPECT_NEAR(x[i].a, x_double[i], 1e-10);
    expect_columns_agree(jet_jacobian(x), J_fd, names);
  }
};

TEST_F(DerivativeTest, LinkLengthsAndMasses) {
  check_parameters(model, {"link.link1.length", "link.link2.length", "link.link1.mass",
                           "link.link2.mass"});
}

TEST_F(DerivativeTest, DampingAndGravity) {
  Model<double> damped = model;
  damped.joints[0].dynamics.damping = 0.3;
  damped.joints[1].dynamics.damping = 0.2;
  check_parameters(damped, {"joint.joint1.damping", "joint.joint2.damping", "gravity.z", "gravity.x"});
}

TEST_F(DerivativeTest, InitialState) {
  const Model<Jet> mj = model.cast<Jet>();
  VecX<Jet> qj(2), qdj(2);
  for (int i = 0; i < 2; ++i) {
    qj[i] = Jet(q0[i], i);
    qdj[i] = Jet(qd0[i], 2 + i);
  }
  const Eigen::MatrixXd J_jet = jet_jacobian(final_state(mj, qj, qdj));
  Eigen::MatrixXd J_fd(4, 4);
  const double h = 1e-6;
  for (int k = 0; k < 4; ++k) {
    Eigen::Vector4d dx = Eigen::Vector4d::Zero();
    dx[k] = h;
    J_fd.col(k) = (final_state(model, Eigen::VectorXd(q0 + dx.head<2>()), Eigen::VectorXd(qd0 + dx.tail<2>())) -
                   final_state(model, Eigen::VectorXd(q0 - dx.head<2>()), Eigen::VectorXd(qd0 - dx.tail<2>()))) /
                  (2 * h);
  }
  expect_columns_agree(J_jet, J_fd, {"q1(0)", "q2(0)", "qd1(0)", "qd2(0)"});
}

}  // namespace
}  // namespace neuralsim
