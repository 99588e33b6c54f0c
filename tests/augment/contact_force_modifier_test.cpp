// The contact force modifier hook (contact/contact_force_modifier.hpp) of the
// force-level contact models, tested on its own: exact equivalences with the
// analytical parameters and where it is called.
//  * Hunt–Crossley and penalty forces are linear in (k, d): a modifier that
//    doubles the normal force is the model with 2k, 2d, bit for bit (×2 is
//    exact in floating point);
//  * a modifier that sets μ is the model with contact.friction = μ;
//  * a modifier that removes the friction force is the model with μ = 0;
//  * it is called once per contact in penetration (normal stage) and once
//    per active contact (friction stage); the impulse model refuses it.
#include <gtest/gtest.h>

#include "augment/augment_support.hpp"
#include "neuralsim/contact/contact_system.hpp"

namespace neuralsim {
namespace {

class TestModifier final : public ContactForceModifier<double> {
 public:
  double normal_factor = 1.0;
  double mu = -1;  // < 0: unchanged
  bool drop_friction = false;
  long normal_calls = 0, friction_calls = 0;
  double min_depth = 1e300;
  void modify_normal(const Contact<double>& c, double& f_n, double& mu_inout) override {
    ++normal_calls;
    min_depth = std::min(min_depth, -c.distance);
    f_n *= normal_factor;
    if (mu >= 0) mu_inout = mu;
  }
  void modify_friction(const Contact<double>&, const double& f_n, Vec3<double>& f_t) override {
    ++friction_calls;
    EXPECT_GT(f_n, 0.0);
    if (drop_friction) f_t.setZero();
  }
};

// Box sliding and spinning on the ground for 400 steps; the settings'
// contact parameters changed by `edit`, the modifier (if any) installed.
std::vector<double> box_rollout(ContactModelType model, const std::function<void(ContactParameters<double>&)>& edit,
                                ContactForceModifier<double>* modifier) {
  testing::Scene scene = testing::box_scene();
  scene.contact->model = model;
  if (model == ContactModelType::kPenalty) {
    scene.contact->parameters.stiffness = 1e7;
    scene.contact->parameters.damping = 1e5;
  }
  edit(scene.contact->parameters);
  Stepper<double> stepper(scene.model, scene.step);
  auto contact = install_contact<double>(*scene.contact, scene.model, stepper);
  contact->set_force_modifier(modifier);
  EXPECT_EQ(contact->force_modifier(), modifier);
  Eigen::VectorXd q = scene.q0, qd = scene.qd0, u = Eigen::VectorXd::Zero(6);
  std::vector<double> out;
  for (int k = 0; k < 400; ++k) {
    stepper.step(q, qd, u, k * scene.step.dt);
    out.insert(out.end(), q.data(), q.data() + q.size());
    out.insert(out.end(), qd.data(), qd.data() + qd.size());
  }
  return out;
}

TEST(ContactForceModifier, ExactEquivalencesWithTheAnalyticalParameters) {
  for (ContactModelType model : {ContactModelType::kHuntCrossley, ContactModelType::kPenalty}) {
    const char* name = contact_model_name(model);
    const auto none = [](ContactParameters<double>&) {};
    const std::vector<double> plain = box_rollout(model, none, nullptr);
    // An identity modifier changes nothing.
    TestModifier identity;
    EXPECT_TRUE(testing::bit_identical(plain, box_rollout(model, none, &identity))) << name;
    EXPECT_GT(identity.normal_calls, 0);
    EXPECT_GT(identity.min_depth, 0.0) << "called for contacts in penetration only";
    EXPECT_EQ(identity.friction_calls, identity.normal_calls) << "every penetrating contact is active here";
    // Doubled normal force = doubled stiffness and damping.
    TestModifier twice;
    twice.normal_factor = 2.0;
    const std::vector<double> stiff = box_rollout(model, [](ContactParameters<double>& p) {
      p.stiffness *= 2;
      p.damping *= 2;
    }, nullptr);
    EXPECT_TRUE(testing::bit_identical(stiff, box_rollout(model, none, &twice))) << name;
    EXPECT_FALSE(testing::bit_identical(stiff, plain));
    // μ from the modifier = μ from the parameters.
    TestModifier mu;
    mu.mu = 0.2;
    EXPECT_TRUE(testing::bit_identical(box_rollout(model, [](ContactParameters<double>& p) { p.friction = 0.2; }, nullptr),
                                       box_rollout(model, none, &mu)))
        << name;
    // No friction force = μ = 0.
    TestModifier frictionless;
    frictionless.drop_friction = true;
    EXPECT_TRUE(testing::bit_identical(box_rollout(model, [](ContactParameters<double>& p) { p.friction = 0; }, nullptr),
                                       box_rollout(model, none, &frictionless)))
        << name;
  }
}

TEST(ContactForceModifier, StribeckUsesTheModifiedKineticCoefficient) {
  // μ(v) = μ_k + (μ_s - μ_k) exp(-(v/v_s)²) with μ_k from the modifier.
  ContactParameters<double> p;
  p.friction = 0.3;
  p.static_friction = 0.6;
  const Vec3<double> v(0.004, -0.002, 0);
  const Vec3<double> a = friction_force(FrictionModel::kStribeck, p, 0.45, 10.0, v);
  ContactParameters<double> q = p;
  q.friction = 0.45;
  const Vec3<double> b = friction_force(FrictionModel::kStribeck, q, 10.0, v);
  EXPECT_EQ(a, b);
}

TEST(ContactForceModifier, ImpulseModelRefusesIt) {
  testing::Scene scene = testing::box_scene();
  scene.contact->model = ContactModelType::kImpulse;
  Stepper<double> stepper(scene.model, scene.step);
  auto contact = install_contact<double>(*scene.contact, scene.model, stepper);
  TestModifier m;
  EXPECT_THROW(contact->set_force_modifier(&m), InvalidArgument);
  EXPECT_NO_THROW(contact->set_force_modifier(nullptr));
}

}  // namespace
}  // namespace neuralsim
