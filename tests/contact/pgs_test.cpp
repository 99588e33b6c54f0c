// The impulse-level solver (PGS on the Delassus matrix): a resting box's
// normal impulses sum to m g h; friction impulses stay in the pyramid or
// cone; the solver's iteration limit and tolerance behave as documented.
#include <gtest/gtest.h>

#include "neuralsim/contact/contact_system.hpp"
#include "neuralsim/io/yaml_model.hpp"

namespace neuralsim {
namespace {

Model<double> box_model(double mass) {
  return parse_yaml_model(("name: box\nbodies:\n  - name: box\n    joint: {type: free}\n    mass: " +
                                     std::to_string(mass) +
                                     "\n    inertia: [0.01, 0.01, 0.01]\n    geometry:\n"
                                     "      - {type: box, size: [0.2, 0.2, 0.1]}\n"),
                          "inline");
}

ContactSettings impulse_settings(FrictionCone cone) {
  ContactSettings s;
  s.model = ContactModelType::kImpulse;
  s.friction_cone = cone;
  s.margin = 0.01;
  s.parameters.friction = 0.5;
  s.pgs.tolerance = 1e-10;
  s.pgs.max_iterations = 500;
  return s;
}

TEST(Pgs, RestingBoxNormalImpulsesSumToWeightTimesStep) {
  const double m = 2.0, h = 1e-3;
  const Model<double> model = box_model(m);
  Stepper<double> stepper(model, StepOptions{Integrator::kSemiImplicitEuler, h, 1});
  auto contact = install_contact(impulse_settings(FrictionCone::kPyramid), model, stepper);
  Eigen::VectorXd q = model.neutral_configuration(), qd = Eigen::VectorXd::Zero(6), u = qd;
  q[2] = 0.05;  // resting on the ground
  for (int k = 0; k < 100; ++k) stepper.step(q, qd, u, k * h);
  ASSERT_EQ(contact->num_contacts(), 4);  // the bottom corners (top ones beyond the margin)
  double sum = 0;
  for (int c = 0; c < 4; ++c) {
    sum += contact->contacts()[c].normal_force * h;
    EXPECT_GE(contact->contacts()[c].normal_force, 0.0);
  }
  EXPECT_NEAR(sum, m * 9.81 * h, 1e-9 * m * 9.81 * h);
  EXPECT_LT(qd.norm(), 1e-9);
  EXPECT_NEAR(q[2], 0.05, 1e-9);
  // Four coplanar contacts share the weight non-uniquely (A is singular), so
  // PGS stops on its iteration limit at this tolerance; the sum is exact.
  EXPECT_GE(contact->impulse_stats().last_iterations, 1);
}

// A box on a 30° slope (gravity tilted) with μ = 0.5 < tan 30° = 0.577 slides
// with friction at its bound; with μ = 0.7 it sticks with f_t = m g sin 30°.
class PgsCone : public ::testing::TestWithParam<FrictionCone> {};

TEST_P(PgsCone, FrictionStaysInsideItsSetAndSticksOrSlides) {
  for (double mu : {0.5, 0.7}) {
    Model<double> model = box_model(1.0);
    const double th = M_PI / 6;
    model.gravity = Eigen::Vector3d(9.81 * std::sin(th), 0.3 * 9.81 * std::sin(th), -9.81 * std::cos(th));
    ContactSettings s = impulse_settings(GetParam());
    s.parameters.friction = mu;
    Stepper<double> stepper(model, StepOptions{Integrator::kSemiImplicitEuler, 1e-3, 1});
    auto contact = install_contact(s, model, stepper);
    Eigen::VectorXd q = model.neutral_configuration(), qd = Eigen::VectorXd::Zero(6), u = qd;
    q[2] = 0.05;
    for (int k = 0; k < 200; ++k) {
      stepper.step(q, qd, u, k * 1e-3);
      for (int c = 0; c < contact->num_contacts(); ++c) {
        const Contact<double>& ct = contact->contacts()[c];
        const Eigen::Vector3d local = ct.frame.transpose() * ct.force;
        const double bound = mu * local[0] + 1e-9;
        if (GetParam() == FrictionCone::kCone)
          EXPECT_LE(local.tail<2>().norm(), bound);
        else
          EXPECT_TRUE(std::abs(local[1]) <= bound && std::abs(local[2]) <= bound);
      }
    }
    const double g_t = 9.81 * std::sin(th) * std::sqrt(1 + 0.09);  // tangential gravity
    const double g_n = 9.81 * std::cos(th);
    const double speed = qd.tail<3>().head<2>().norm();
    if (mu * g_n > g_t) {
      EXPECT_LT(speed, 1e-8) << "mu " << mu;  // sticks
    } else if (GetParam() == FrictionCone::kCone) {
      // Slides with a = g_t - μ g_n along the slope direction (isotropic cone).
      EXPECT_NEAR(speed, 0.2 * (g_t - mu * g_n), 2e-3 * 0.2 * g_t) << "mu " << mu;
    } else {
      EXPECT_GT(speed, 0.01);  // pyramid: slides, anisotropically
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cones, PgsCone, ::testing::Values(FrictionCone::kPyramid, FrictionCone::kCone));

TEST(Pgs, ReportsIterationsAndRespectsTheLimit) {
  ContactSettings s = impulse_settings(FrictionCone::kPyramid);
  s.pgs.warm_start = false;
  s.pgs.max_iterations = 2;
  const Model<double> model = box_model(1.0);
  Stepper<double> stepper(model, StepOptions{Integrator::kSemiImplicitEuler, 1e-3, 1});
  auto contact = install_contact(s, model, stepper);
  Eigen::VectorXd q = model.neutral_configuration(), qd = Eigen::VectorXd::Zero(6), u = qd;
  q[2] = 0.05;
  qd[3] = 1.0;  // sliding: four coupled contacts need more than two sweeps
  stepper.step(q, qd, u, 0.0);
  EXPECT_EQ(contact->impulse_stats().last_iterations, 2);
  EXPECT_EQ(contact->impulse_stats().unconverged, 1);
}

}  // namespace
}  // namespace neuralsim
