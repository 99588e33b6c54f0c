// Transition Jacobians of one step (step/transition_jacobians.hpp): against
// the closed form of a mass-spring-damper under each integrator, and against
// central differences of the double step in tangent coordinates on a double
// pendulum and on a tree with every joint type (free base, ball, hinge,
// slider), with damping and springs.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include <Eigen/Dense>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/io/urdf_model.hpp"
#include "neuralsim/io/yaml_model.hpp"
#include "neuralsim/model/configuration.hpp"
#include "neuralsim/step/stepper.hpp"
#include "neuralsim/step/transition_jacobians.hpp"
#include "support/allocation_counter.hpp"
#include "support/files.hpp"
#include "support/test_models.hpp"

namespace neuralsim {
namespace transition_jacobians_test {
namespace {

constexpr double kMass = 1.7, kStiffness = 30.0, kDamping = 0.8;

Model<double> mass_spring_damper() {
  Model<double> m;
  m.name = "msd";
  Joint<double> slider;
  slider.type = JointType::kPrismatic;
  slider.axis = Eigen::Vector3d::UnitX();
  m.add_body("mass", -1, slider, Inertia<double>::from_com(kMass, Eigen::Vector3d::Zero(),
                                                           Eigen::Matrix3d::Identity() * 0.01));
  m.joints[0].dynamics.spring_stiffness = kStiffness;
  m.joints[0].dynamics.damping = kDamping;
  m.gravity.setZero();
  return m;
}

StepOptions options(Integrator integrator, double dt, int substeps = 1) {
  StepOptions o;
  o.integrator = integrator;
  o.dt = dt;
  o.substeps = substeps;
  return o;
}

// ẋ = F x + G u with x = (q, q̇): F = [0 1; -k/m -c/m], G = [0; 1/m].
TEST(TransitionJacobians, MassSpringDamperMatchesTheIntegratorsClosedForm) {
  const Model<double> model = mass_spring_damper();
  Eigen::Matrix2d F;
  F << 0, 1, -kStiffness / kMass, -kDamping / kMass;
  const Eigen::Vector2d G(0, 1 / kMass);
  const double h = 0.01;
  const Eigen::VectorXd q = Eigen::VectorXd::Constant(1, 0.3), qd = Eigen::VectorXd::Constant(1, -0.7),
                        u = Eigen::VectorXd::Constant(1, 2.0);

  // Semi-implicit Euler: q̇⁺ = q̇ + h(F₂ x + u/m), q⁺ = q + h q̇⁺.
  const TransitionJacobians e = transition_jacobians(model, options(Integrator::kSemiImplicitEuler, h), q, qd, u);
  const Eigen::RowVector2d dqd = Eigen::RowVector2d(0, 1) + h * F.row(1);
  Eigen::Matrix2d A_euler;
  A_euler.row(1) = dqd;
  A_euler.row(0) = Eigen::RowVector2d(1, 0) + h * dqd;
  const Eigen::Vector2d B_euler(h * h / kMass, h / kMass);
  EXPECT_LT((e.A - A_euler).norm(), 1e-13) << e.A;
  EXPECT_LT((e.B - B_euler).norm(), 1e-13) << e.B;

  // RK4 on a linear system: A = Σ_{k≤4} (hF)^k/k!, B = Σ_{k≤3} h^{k+1} F^k/(k+1)! G.
  const TransitionJacobians r = transition_jacobians(model, options(Integrator::kRK4, h), q, qd, u);
  const Eigen::Matrix2d hF = h * F;
  const Eigen::Matrix2d I = Eigen::Matrix2d::Identity();
  const Eigen::Matrix2d A_rk4 = I + hF + hF * hF / 2 + hF * hF * hF / 6 + hF * hF * hF * hF / 24;
  const Eigen::Vector2d B_rk4 = h * (I + hF / 2 + hF * hF / 6 + hF * hF * hF / 24) * G;
  EXPECT_LT((r.A - A_rk4).norm(), 1e-13) << r.A;
  EXPECT_LT((r.B - B_rk4).norm(), 1e-13) << r.B;
}

// The step from (q ⊕ δq, q̇ + δq̇, u + δu) measured as (q⁺ ⊖ q̄⁺, q̇⁺ − q̄̇⁺).
Eigen::VectorXd perturbed_step(const Model<double>& model, const StepOptions& o, const Eigen::VectorXd& q,
                               const Eigen::VectorXd& qd, const Eigen::VectorXd& u, const Eigen::VectorXd& delta,
                               const Eigen::VectorXd& q_next, const Eigen::VectorXd& qd_next) {
  const int nv = model.nv;
  Stepper<double> stepper(model, o);
  Eigen::VectorXd qp(model.nq), qdp = qd + delta.segment(nv, nv), up = u + delta.segment(2 * nv, nv);
  const Eigen::VectorXd dq = delta.head(nv);
  integrate_configuration(model, q, dq, qp);
  stepper.step(qp, qdp, up, 0.0);
  Eigen::VectorXd out(2 * nv), dv(nv);
  difference_configuration(model, q_next, qp, dv);
  out << dv, qdp - qd_next;
  return out;
}

void expect_central_differences_agree(const Model<double>& model, const StepOptions& o, unsigned seed) {
  std::mt19937 rng(seed);
  Eigen::VectorXd q, qd;
  testing::random_state(model, rng, q, qd);
  std::uniform_real_distribution<double> uni(-1, 1);
  Eigen::VectorXd u(model.nv);
  for (int i = 0; i < model.nv; ++i) u[i] = uni(rng);

  const TransitionJacobians J = transition_jacobians(model, o, q, qd, u);
  // The nominal result is the double step's.
  Stepper<double> stepper(model, o);
  Eigen::VectorXd q1 = q, qd1 = qd;
  stepper.step(q1, qd1, u, 0.0);
  EXPECT_LT((J.q_next - q1).cwiseAbs().maxCoeff(), 1e-13);
  EXPECT_LT((J.qd_next - qd1).cwiseAbs().maxCoeff(), 1e-13);

  const int nv = model.nv;
  const double eps = 1e-6;
  Eigen::MatrixXd fd(2 * nv, 3 * nv);
  for (int d = 0; d < 3 * nv; ++d) {
    Eigen::VectorXd delta = Eigen::VectorXd::Zero(3 * nv);
    delta[d] = eps;
    const Eigen::VectorXd plus = perturbed_step(model, o, q, qd, u, delta, q1, qd1);
    const Eigen::VectorXd minus = perturbed_step(model, o, q, qd, u, -delta, q1, qd1);
    fd.col(d) = (plus - minus) / (2 * eps);
  }
  Eigen::MatrixXd exact(2 * nv, 3 * nv);
  exact << J.A, J.B;
  const double scale = std::max(1.0, exact.cwiseAbs().maxCoeff());
  EXPECT_LT((exact - fd).cwiseAbs().maxCoeff(), 1e-6 * scale) << "exact\n" << exact << "\nfd\n" << fd;
}

TEST(TransitionJacobians, DoublePendulumWithDampingAndSpringsAgreesWithCentralDifferences) {
  Model<double> model = load_yaml_model(testing::source_path("configs/models/double_pendulum.yaml"));
  for (auto& j : model.joints) {
    j.dynamics.damping = 0.3;
    j.dynamics.spring_stiffness = 2.0;
    j.dynamics.spring_rest = 0.1;
  }
  for (const Integrator integrator : {Integrator::kSemiImplicitEuler, Integrator::kRK4}) {
    SCOPED_TRACE(integrator_name(integrator));
    expect_central_differences_agree(model, options(integrator, 0.01, 2), 11);
  }
}

TEST(TransitionJacobians, EveryJointTypeAgreesWithCentralDifferencesInTangentCoordinates) {
  Model<double> model = testing::mixed_joint_model();
  model.joints[2].dynamics.damping = 0.2;
  model.joints[4].dynamics.spring_stiffness = 5.0;
  model.joints[5].dynamics.coulomb_friction = 0.1;  // smooth (tanh) friction
  model.joints[5].dynamics.friction_velocity = 0.5;
  for (const Integrator integrator : {Integrator::kSemiImplicitEuler, Integrator::kRK4}) {
    SCOPED_TRACE(integrator_name(integrator));
    expect_central_differences_agree(model, options(integrator, 0.005), 5);
  }
}

// The friction laws' slopes enter the analytical route (semi-implicit Euler)
// through a one-lane Jet: each law on the double pendulum.
TEST(TransitionJacobians, EveryFrictionLawAgreesWithCentralDifferences) {
  const Model<double> base = load_yaml_model(testing::source_path("configs/models/double_pendulum.yaml"));
  for (const FrictionLaw law : {FrictionLaw::kTanh, FrictionLaw::kAtan, FrictionLaw::kStribeck, FrictionLaw::kSigmoid}) {
    SCOPED_TRACE(static_cast<int>(law));
    Model<double> model = base;
    for (auto& j : model.joints) {
      j.dynamics.friction_law = law;
      j.dynamics.coulomb_friction = 0.3;
      j.dynamics.friction_static = 0.5;
      j.dynamics.friction_velocity = 0.8;
      j.dynamics.stribeck_velocity = 0.6;
      j.dynamics.friction_slope = 2.0;
      j.dynamics.friction_shift = 0.1;
    }
    expect_central_differences_agree(model, options(Integrator::kSemiImplicitEuler, 0.01), 13);
  }
}

// Semi-implicit Euler takes the analytical route (aba_derivatives): a floating
// base with damping, friction and springs on every leg joint, two substeps.
TEST(TransitionJacobians, FloatingLaikagoAgreesWithCentralDifferences) {
  NEURALSIM_SKIP_WITHOUT_SHARED("models/laikago/laikago_toes_zup.urdf");
  UrdfOptions floating;
  floating.floating_base = true;
  Model<double> model = load_urdf_model(testing::shared_path("models/laikago/laikago_toes_zup.urdf"), floating);
  for (Joint<double>& j : model.joints) {
    if (j.type != JointType::kRevolute) continue;
    j.dynamics.damping = 0.3;
    j.dynamics.coulomb_friction = 0.2;
    j.dynamics.friction_velocity = 0.5;
    j.dynamics.spring_stiffness = 4.0;
    j.dynamics.gear_ratio = 2.0;
  }
  expect_central_differences_agree(model, options(Integrator::kSemiImplicitEuler, 0.002, 2), 21);
}

TEST(TransitionJacobians, SecondCallAllocatesNothing) {
  if (!testing::AllocationCounter::available()) GTEST_SKIP() << "allocation counting needs glibc, no sanitizer";
  const Model<double> model = testing::mixed_joint_model();
  std::mt19937 rng(3);
  Eigen::VectorXd q, qd;
  testing::random_state(model, rng, q, qd);
  const Eigen::VectorXd u = Eigen::VectorXd::Constant(model.nv, 0.2);
  for (const Integrator integrator : {Integrator::kSemiImplicitEuler, Integrator::kRK4}) {
    TransitionJacobianSolver solver(model, options(integrator, 0.005, 2));
    TransitionJacobians J;
    solver.compute(q, qd, u, 0.0, J);
    testing::AllocationCounter counter;
    solver.compute(q, qd, u, 0.0, J);
    EXPECT_EQ(counter.count(), 0) << integrator_name(integrator);
  }
}

TEST(TransitionJacobians, BadInputIsRefused) {
  const Model<double> model = mass_spring_damper();
  const StepOptions o = options(Integrator::kRK4, 0.01);
  const Eigen::VectorXd one = Eigen::VectorXd::Zero(1), two = Eigen::VectorXd::Zero(2);
  EXPECT_THROW(transition_jacobians(model, o, two, one, one), InvalidArgument);
  EXPECT_THROW(transition_jacobians(model, o, one, two, one), InvalidArgument);
  EXPECT_THROW(transition_jacobians(model, o, one, one, two), InvalidArgument);
  Eigen::VectorXd nan = one;
  nan[0] = std::nan("");
  EXPECT_THROW(transition_jacobians(model, o, nan, one, one), InvalidArgument);
  EXPECT_THROW(transition_jacobians(model, o, one, one, one, std::nan("")), InvalidArgument);
  StepOptions bad = o;
  bad.dt = -1;
  EXPECT_THROW(TransitionJacobianSolver(model, bad), InvalidArgument);
}

}  // namespace
}  // namespace transition_jacobians_test
}  // namespace neuralsim
