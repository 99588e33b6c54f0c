// Joint friction laws (step/passive_forces.hpp): tanh, atan and Stribeck
// torques against their closed forms, symmetry and limits; Jet derivatives
// against central differences; dissipation; the default law unchanged; the
// YAML keys; and identification of the Stribeck parameters from data.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "neuralsim/augment/augmented_dynamics.hpp"
#include "neuralsim/core/errors.hpp"
#include "neuralsim/core/scalar.hpp"
#include "neuralsim/dynamics/aba.hpp"
#include "neuralsim/dynamics/energy.hpp"
#include "neuralsim/estimate/estimation_problem.hpp"
#include "neuralsim/experiment/estimation_config.hpp"
#include "neuralsim/io/yaml_model.hpp"
#include "neuralsim/model/parameters.hpp"
#include "neuralsim/parameters/named_parameter.hpp"
#include "neuralsim/step/passive_forces.hpp"
#include "neuralsim/step/simulate.hpp"
#include "neuralsim/step/stepper.hpp"
#include "support/fit_support.hpp"
#include "support/test_models.hpp"

namespace neuralsim {
namespace {

const FrictionLaw kLaws[] = {FrictionLaw::kTanh, FrictionLaw::kAtan, FrictionLaw::kStribeck};

// The shared one-joint pendulum (support/test_models.hpp) under `law`.
Model<double> pendulum(FrictionLaw law, double fc, double vs, double fs, double vst, double damping = 0) {
  JointDynamics<double> d;
  d.friction_law = law;
  d.coulomb_friction = fc;
  d.friction_velocity = vs;
  d.friction_static = fs;
  d.stribeck_velocity = vst;
  d.damping = damping;
  return testing::pendulum_with_dynamics(d);
}

using testing::one_joint_passive_torque;

double torque(FrictionLaw law, double v, double fc = 0.5, double vs = 0.2, double fs = 0.8, double vst = 0.3) {
  return one_joint_passive_torque(pendulum(law, fc, vs, fs, vst), v);
}

// Values from the formulas evaluated separately (Python's math module) with
// Fc = 0.5, v_s = 0.2, Fs = 0.8, v_st = 0.3, e.g. at q̇ = 0.1:
// tanh: -0.5·tanh(0.5); atan: -0.5·(2/π)·atan(0.5);
// stribeck: -(0.5 + 0.3·exp(-1/9))·tanh(0.5).
TEST(FrictionLaw, TorquesEqualTheirClosedForms) {
  EXPECT_NEAR(torque(FrictionLaw::kTanh, 0.1), -0.23105857863000487, 1e-15);
  EXPECT_NEAR(torque(FrictionLaw::kAtan, 0.1), -0.14758361765043326, 1e-15);
  EXPECT_NEAR(torque(FrictionLaw::kStribeck, 0.1), -0.35511475901722866, 1e-15);
  EXPECT_NEAR(torque(FrictionLaw::kTanh, 0.45), -0.4890130573694068, 1e-15);
  EXPECT_NEAR(torque(FrictionLaw::kAtan, 0.45), -0.3668750612523435, 1e-15);
  EXPECT_NEAR(torque(FrictionLaw::kStribeck, 0.45), -0.519938015597824, 1e-15);
  // Viscous damping adds -b·q̇ to any law.
  for (FrictionLaw law : kLaws)
    EXPECT_NEAR(one_joint_passive_torque(pendulum(law, 0.5, 0.2, 0.8, 0.3, 0.7), 0.1), torque(law, 0.1) - 0.07, 1e-15);
  // friction_torque() is the same law without the other passive terms.
  JointDynamics<double> d = pendulum(FrictionLaw::kStribeck, 0.5, 0.2, 0.8, 0.3, 0.7).joints[0].dynamics;
  EXPECT_NEAR(friction_torque(d, 0.1), -0.35511475901722866, 1e-15);
}

TEST(FrictionLaw, OddInVelocityAndDissipative) {
  for (FrictionLaw law : kLaws)
    for (double v : {1e-6, 0.01, 0.1, 0.3, 1.0, 10.0}) {
      EXPECT_EQ(torque(law, -v), -torque(law, v)) << static_cast<int>(law) << " v=" << v;
      EXPECT_LT(torque(law, v) * v, 0.0);
    }
  for (FrictionLaw law : kLaws) EXPECT_EQ(torque(law, 0.0), 0.0);
}

TEST(FrictionLaw, LimitsFarFromZeroVelocity) {
  const double fc = 0.5, vs = 0.01;
  // tanh → ±Fc exponentially.
  EXPECT_NEAR(torque(FrictionLaw::kTanh, 1.0, fc, vs), -fc, 1e-15);
  EXPECT_NEAR(torque(FrictionLaw::kTanh, -1.0, fc, vs), fc, 1e-15);
  // atan → ±Fc as Fc·(1 - 2v_s/(π q̇)) + O((v_s/q̇)³).
  const double v = 10.0;
  EXPECT_NEAR(torque(FrictionLaw::kAtan, v, fc, vs), -fc * (1 - 2 * vs / (M_PI * v)), 1e-9);
  EXPECT_NEAR(torque(FrictionLaw::kAtan, 1e6, fc, vs), -fc, 1e-8);
  // Stribeck → ±Fc once q̇ ≫ v_st (exp(-(3/0.3)²) ≈ 4e-44).
  EXPECT_NEAR(torque(FrictionLaw::kStribeck, 3.0, fc, vs, 0.9, 0.3), -fc, 1e-15);
  EXPECT_NEAR(torque(FrictionLaw::kStribeck, -3.0, fc, vs, 0.9, 0.3), fc, 1e-15);
}

// Near q̇ = 0⁺ the Stribeck torque is -Fs·q̇/v_s (g(0) = Fs, tanh'(0) = 1/v_s);
// with v_s ≪ v_st it peaks at ≈ Fs just after breakaway and then decays to Fc.
TEST(FrictionLaw, StribeckSlopeAtZeroAndPeakNearStaticLevel) {
  const double fc = 0.5, fs = 0.9, vs = 1e-3, vst = 0.1;
  const double h = 1e-9;
  EXPECT_NEAR(torque(FrictionLaw::kStribeck, h, fc, vs, fs, vst) / h, -fs / vs, 1e-6 * fs / vs);
  double peak = 0, v_peak = 0;
  for (int k = 1; k <= 20000; ++k) {
    const double v = 1e-5 * k;  // up to 0.2 = 2 v_st
    const double t = -torque(FrictionLaw::kStribeck, v, fc, vs, fs, vst);
    if (t > peak) {
      peak = t;
      v_peak = v;
    }
  }
  EXPECT_LE(peak, fs);
  EXPECT_GT(peak, 0.99 * fs);
  EXPECT_LT(v_peak, 0.1 * vst);
  EXPECT_GT(v_peak, vs);
  // Past the peak, the curve falls monotonically towards Fc.
  double prev = peak;
  for (double v = 0.02; v < 0.5; v += 0.01) {
    const double t = -torque(FrictionLaw::kStribeck, v, fc, vs, fs, vst);
    EXPECT_LT(t, prev) << v;
    prev = t;
  }
  EXPECT_NEAR(prev, fc, 1e-9);
}

// ∂τ/∂(q̇, Fc, v_s, Fs, v_st) in Jet arithmetic against central differences.
TEST(FrictionLaw, JetDerivativesMatchCentralDifferences) {
  using J = Jet8;
  const double x0[5] = {0.0, 0.5, 0.2, 0.8, 0.3};  // q̇ (set below), Fc, v_s, Fs, v_st
  auto eval = [](FrictionLaw law, const double* x) { return torque(law, x[0], x[1], x[2], x[3], x[4]); };
  for (FrictionLaw law : kLaws)
    for (double v : {0.05, -0.3, 1.2}) {
      double x[5];
      std::copy(x0, x0 + 5, x);
      x[0] = v;
      Model<J> m = pendulum(law, x[1], x[2], x[3], x[4]).cast<J>();
      JointDynamics<J>& d = m.joints[0].dynamics;
      d.coulomb_friction = J(x[1], 1);
      d.friction_velocity = J(x[2], 2);
      d.friction_static = J(x[3], 3);
      d.stribeck_velocity = J(x[4], 4);
      const J t = one_joint_passive_torque(m, J(v, 0));
      EXPECT_NEAR(t.a, eval(law, x), 1e-15);
      for (int i = 0; i < 5; ++i) {
        const double h = 1e-5 * std::max(1.0, std::abs(x[i]));
        double xp[5], xm[5];
        std::copy(x, x + 5, xp);
        std::copy(x, x + 5, xm);
        xp[i] += h;
        xm[i] -= h;
        const double fd = (eval(law, xp) - eval(law, xm)) / (2 * h);
        EXPECT_NEAR(t.v[i], fd, std::max(1e-7 * std::abs(fd), 1e-10))
            << "law " << static_cast<int>(law) << " v=" << v << " d/dx" << i;
      }
      // coulomb_friction_shape is φ = -∂τ/∂Fc (the augmentation site's shape).
      const JointDynamics<double> dd = pendulum(law, x[1], x[2], x[3], x[4]).joints[0].dynamics;
      EXPECT_NEAR(t.v[1], -coulomb_friction_shape(dd, v), 1e-15);
      if (law != FrictionLaw::kStribeck) {  // Fs and v_st do not enter
        EXPECT_EQ(t.v[3], 0.0);
        EXPECT_EQ(t.v[4], 0.0);
      }
    }
}

// A coefficient estimated from exactly 0 still carries its derivative.
TEST(FrictionLaw, StribeckFromZeroLevelsKeepsDerivatives) {
  Model<Jet8> m = pendulum(FrictionLaw::kStribeck, 0, 0.2, 0, 0.3).cast<Jet8>();
  m.joints[0].dynamics.coulomb_friction = Jet8(0.0, 0);
  m.joints[0].dynamics.friction_static = Jet8(0.0, 1);
  const Jet8 t = one_joint_passive_torque(m, Jet8(0.1));
  const double e = std::exp(-(0.1 / 0.3) * (0.1 / 0.3)), th = std::tanh(0.1 / 0.2);
  EXPECT_NEAR(t.v[0], -(1 - e) * th, 1e-15);
  EXPECT_NEAR(t.v[1], -e * th, 1e-15);
}

double energy(const Model<double>& m, Data<double>& data, const Eigen::VectorXd& q, const Eigen::VectorXd& qd) {
  forward_kinematics(m, data, q, qd);
  return kinetic_energy(m, data, qd) + potential_energy(m, data, q);
}

// With no input, a pendulum with any law only loses energy.
TEST(FrictionLaw, PendulumEnergyDecreasesMonotonically) {
  for (FrictionLaw law : kLaws)
    for (double damping : {0.0, 0.05}) {
      const Model<double> m = pendulum(law, 0.3, 0.05, 0.5, 0.2, damping);
      StepOptions opt;
      opt.integrator = Integrator::kRK4;
      opt.dt = 1e-3;
      Stepper<double> stepper(m, opt);
      Data<double> data(m);
      Eigen::VectorXd q(1), qd(1), u = Eigen::VectorXd::Zero(1);
      q << 1.2;
      qd << 0.0;
      const double e0 = energy(m, data, q, qd);
      double prev = e0;
      double worst_gain = -1e300;
      for (int k = 0; k < 4000; ++k) {
        stepper.step(q, qd, u, k * opt.dt);
        const double e = energy(m, data, q, qd);
        worst_gain = std::max(worst_gain, e - prev);
        prev = e;
      }
      EXPECT_LE(worst_gain, 1e-12) << "law " << static_cast<int>(law) << " damping " << damping;
      EXPECT_LT(prev - energy(m, data, Eigen::VectorXd::Zero(1), Eigen::VectorXd::Zero(1)),
                0.75 * (e0 - energy(m, data, Eigen::VectorXd::Zero(1), Eigen::VectorXd::Zero(1))))
          << "law " << static_cast<int>(law) << " dissipated too little";
    }
}

// The default law is today's formula, bit for bit: a semi-implicit Euler
// rollout of the double pendulum with friction, against the same steps done
// by hand with τ = -b·q̇ - Fc·tanh(q̇/v_s).
TEST(FrictionLaw, DefaultLawIsBitIdenticalToTheTanhFormula) {
  Model<double> m = load_yaml_model(testing::source_path("configs/models/double_pendulum.yaml"));
  for (Joint<double>& j : m.joints) {
    EXPECT_EQ(j.dynamics.friction_law, FrictionLaw::kTanh);
    j.dynamics.coulomb_friction = 0.4;
    j.dynamics.friction_velocity = 0.05;
    j.dynamics.damping = 0.02;
  }
  StepOptions opt;
  opt.integrator = Integrator::kSemiImplicitEuler;
  opt.dt = 1e-3;
  Stepper<double> stepper(m, opt);
  Data<double> data(m);
  Eigen::VectorXd q(2), qd(2), u = Eigen::VectorXd::Zero(2);
  q << 1.0, -0.5;
  qd << 0.3, -0.2;
  Eigen::VectorXd qh = q, qdh = qd, tau(2);
  for (int k = 0; k < 300; ++k) {
    stepper.step(q, qd, u, k * opt.dt);
    for (int i = 0; i < 2; ++i) {
      const JointDynamics<double>& d = m.joints[i].dynamics;
      tau[i] = -d.damping * qdh[i] - d.torque_offset - d.coulomb_friction * std::tanh(qdh[i] / d.friction_velocity);
    }
    aba(m, data, qh, qdh, tau);
    qdh += opt.dt * data.qdd;
    qh += opt.dt * qdh;
    ASSERT_EQ(q[0], qh[0]) << k;
    ASSERT_EQ(q[1], qh[1]) << k;
    ASSERT_EQ(qd[0], qdh[0]) << k;
    ASSERT_EQ(qd[1], qdh[1]) << k;
  }
}

// The augmentation site joint.<j>.friction changes Fc within the joint's law
// (φ = -∂τ_f/∂Fc): a network that outputs Fc' in replace mode is the model
// with Fc = Fc', under every law (the sigmoid one with slope 8 and a shift).
TEST(FrictionLaw, AugmentFrictionSiteFollowsTheJointLaw) {
  for (FrictionLaw law : {FrictionLaw::kTanh, FrictionLaw::kAtan, FrictionLaw::kStribeck, FrictionLaw::kSigmoid}) {
    const double fc_new = 0.45;
    Model<double> base = pendulum(law == FrictionLaw::kSigmoid ? FrictionLaw::kTanh : law, 0.3, 0.05, 0.6, 0.2, 0.01);
    if (law == FrictionLaw::kSigmoid) {
      base.joints[0].dynamics.friction_law = FrictionLaw::kSigmoid;
      base.joints[0].dynamics.friction_slope = 8.0;
      base.joints[0].dynamics.friction_shift = 0.1;
    }
    Model<double> target = base;
    target.joints[0].dynamics.coulomb_friction = fc_new;
    AugmentBlueprint bp;
    bp.name = "friction1";
    bp.site.quantity = SiteQuantity::kJointFriction;
    bp.site.joint = 0;
    bp.mode = AugmentMode::kReplace;
    bp.inputs = {*find_augment_input("joint.joint1.qd", base, false)};
    bp.network = nn::Mlp(1, std::vector<nn::Index>{4}, 1, nn::Activation::kTanh);
    bp.network.set_output_scaling(Eigen::VectorXd::Zero(1), Eigen::VectorXd::Constant(1, fc_new));
    StepOptions opt;
    opt.dt = 1e-3;
    Stepper<double> augmented(base, opt), reference(target, opt), unchanged(base, opt);
    const auto aug = install_augmentation<double>({bp}, base, augmented);
    Eigen::VectorXd qa(1), qda(1), u(1);
    qa << 0.4;
    qda << 0.0;
    Eigen::VectorXd qr = qa, qdr = qda, qu = qa, qdu = qda;
    double err = 0, effect = 0;
    for (int k = 0; k < 2000; ++k) {
      const double t = k * opt.dt;
      u << 1.5 * std::sin(3 * t);
      augmented.step(qa, qda, u, t);
      reference.step(qr, qdr, u, t);
      unchanged.step(qu, qdu, u, t);
      err = std::max({err, std::abs(qa[0] - qr[0]), std::abs(qda[0] - qdr[0])});
      effect = std::max(effect, std::abs(qr[0] - qu[0]));
    }
    EXPECT_LT(err, 1e-11) << "law " << static_cast<int>(law);
    EXPECT_GT(effect, 1e-3) << "law " << static_cast<int>(law) << ": the change of Fc must matter";
  }
}

// ---- YAML ----

std::string arm(const std::string& joint_keys, const std::string& friction_velocity = "0.02") {
  return "name: arm\nbodies:\n  - name: link\n    parent: world\n    joint: {name: shoulder, type: revolute, "
         "axis: [0, 1, 0], friction: 0.2, friction_velocity: " +
         friction_velocity + joint_keys + "}\n    mass: 1\n    com: [0, 0, -1]\n";
}

TEST(FrictionLaw, YamlStribeckJointLoads) {
  const Model<double> m =
      parse_yaml_model(arm(", friction_law: stribeck, friction_static: 0.35, stribeck_velocity: 0.15"), "inline");
  const JointDynamics<double>& d = m.joints[0].dynamics;
  EXPECT_EQ(d.friction_law, FrictionLaw::kStribeck);
  EXPECT_EQ(d.coulomb_friction, 0.2);
  EXPECT_EQ(d.friction_velocity, 0.02);
  EXPECT_EQ(d.friction_static, 0.35);
  EXPECT_EQ(d.stribeck_velocity, 0.15);
  EXPECT_EQ(parse_yaml_model(arm(", friction_law: atan"), "inline").joints[0].dynamics.friction_law,
            FrictionLaw::kAtan);
  EXPECT_EQ(parse_yaml_model(arm(""), "inline").joints[0].dynamics.friction_law, FrictionLaw::kTanh);
  // Without friction_static the Stribeck peak is absent: Fs = Fc.
  EXPECT_EQ(parse_yaml_model(arm(", friction_law: stribeck"), "inline").joints[0].dynamics.friction_static, 0.2);
}

void expect_yaml_error(const std::string& keys, const std::vector<std::string>& needles,
                       const std::string& friction_velocity = "0.02") {
  try {
    parse_yaml_model(arm(keys, friction_velocity), "inline");
    ADD_FAILURE() << "accepted: " << keys;
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    for (const std::string& n : needles) EXPECT_NE(msg.find(n), std::string::npos) << "'" << n << "' not in: " << msg;
  }
}

TEST(FrictionLaw, YamlRejectsBadLawsAndValues) {
  expect_yaml_error(", friction_law: coulomb",
                    {"joint 'shoulder'", "friction_law", "coulomb", "tanh", "atan", "stribeck"});
  expect_yaml_error(", friction_law: stribeck, friction_static: -0.1", {"joint 'shoulder'", "friction_static", ">= 0"});
  expect_yaml_error(", friction_law: stribeck, stribeck_velocity: 0", {"joint 'shoulder'", "stribeck_velocity", "> 0"});
  expect_yaml_error(", friction_law: stribeck, stribeck_velocity: -1", {"joint 'shoulder'", "stribeck_velocity"});
  expect_yaml_error(", friction_law: stribeck, friction_static: .nan", {"friction_static"});
  expect_yaml_error(", friction_law: stribeck, friction_static: .inf", {"friction_static"});
  expect_yaml_error(", friction_law: stribeck", {"joint 'shoulder'", "friction_velocity", "> 0"}, "0");
  // Stribeck parameters on a law that does not use them are a mistake, not ignored.
  expect_yaml_error(", friction_static: 0.3", {"joint 'shoulder'", "friction_static", "stribeck"});
  expect_yaml_error(", friction_law: atan, stribeck_velocity: 0.3", {"joint 'shoulder'", "stribeck_velocity"});
}

// ---- named parameters and identification ----

TEST(FrictionLaw, StribeckParametersAreNamedAndListed) {
  Model<double> m = pendulum(FrictionLaw::kStribeck, 0.3, 0.05, 0.6, 0.2);
  for (const auto& [name, value] : std::vector<std::pair<std::string, double>>{
           {"joint.joint1.friction_static", 0.6}, {"joint.joint1.stribeck_velocity", 0.2}}) {
    const ParameterRef r = resolve_parameter(m, name);
    EXPECT_EQ(get_parameter(m, r), value);
    set_parameter(m, r, 2 * value);
    EXPECT_EQ(get_parameter(m, r), 2 * value);
    const auto p = resolve_named_parameter(name, m, false);
    ASSERT_TRUE(p.has_value()) << name;
    EXPECT_EQ(p->kind, ParameterKind::kModel);
    EXPECT_EQ(named_parameter_value(*p, m, nullptr, nullptr), 2 * value);
  }
  EXPECT_EQ(m.joints[0].dynamics.friction_static, 1.2);
  EXPECT_EQ(m.joints[0].dynamics.stribeck_velocity, 0.4);
  const std::string msg = unknown_parameter_message("joint.joint1.friction_statik", m, false);
  EXPECT_NE(msg.find("joint.joint1.friction_static"), std::string::npos) << msg;
  EXPECT_NE(msg.find("joint.joint1.stribeck_velocity"), std::string::npos) << msg;
}

// Data from our own engine with a Stribeck law; single shooting recovers the
// static level and the Stribeck velocity from a wrong start.
TEST(FrictionLaw, SimidRecoversStribeckParameters) {
  const double fs = 0.6, vst = 0.2;
  const Model<double> truth = pendulum(FrictionLaw::kStribeck, 0.3, 0.05, fs, vst);
  StepOptions step;
  step.integrator = Integrator::kRK4;
  step.dt = 0.01;
  std::vector<testing::SinusoidRun> runs;
  for (int k = 0; k < 2; ++k)
    runs.push_back({Eigen::VectorXd::Constant(1, 0.3 - 0.5 * k), Eigen::VectorXd::Constant(1, 2.0 + k),
                    Eigen::VectorXd::Constant(1, 0.4 + 0.3 * k)});
  const std::vector<Trajectory> data = testing::record_sinusoids(truth, step, runs, 300);
  Model<double> start = truth;
  set_parameter(start, resolve_parameter(start, "joint.joint1.friction_static"), 0.4);
  set_parameter(start, resolve_parameter(start, "joint.joint1.stribeck_velocity"), 0.3);
  const testing::SingleShootingFit fit =
      testing::fit_single_shooting(start,
                                   "[{name: joint.joint1.friction_static, initial: 0.4, bounds: [0, 5]},"
                                   " {name: joint.joint1.stribeck_velocity, initial: 0.3, bounds: [0.01, 5]}]",
                                   data, step, 50);
  ASSERT_TRUE(fit.result.usable) << fit.result.report;
  EXPECT_NEAR(fit.value(0), fs, 1e-4 * fs) << fit.result.report;
  EXPECT_NEAR(fit.value(1), vst, 1e-4 * vst) << fit.result.report;
}

}  // namespace
}  // namespace neuralsim
