// Motor rotors with gear ratios (Joint::has_rotor): the rotor of joint i
// rides on its parent and spins at gear_ratio·q̇_i about the joint axis, so
// T gains ½·Ir·(aᵀω_parent + gr·q̇_i)². Checked against that energy, not
// against the code: the two-link arm's closed-form mass matrix, M as the
// Hessian of T, RNEA against Lagrange's equations built from T and V by
// finite differences, energy and momentum conservation in simulation, ABA
// and M⁻¹ against CRBA, Jet derivatives against central differences, and a
// fit that recovers the rotor inertias and a gear ratio.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/core/scalar.hpp"
#include "neuralsim/dynamics/aba.hpp"
#include "neuralsim/dynamics/centroidal.hpp"
#include "neuralsim/dynamics/crba.hpp"
#include "neuralsim/dynamics/energy.hpp"
#include "neuralsim/dynamics/inverse_inertia.hpp"
#include "neuralsim/dynamics/rnea.hpp"
#include "neuralsim/dynamics/rnea_vjp.hpp"
#include "neuralsim/estimate/estimation_problem.hpp"
#include "neuralsim/experiment/estimation_config.hpp"
#include "neuralsim/grad/aba_node.hpp"
#include "neuralsim/io/config.hpp"
#include "neuralsim/io/yaml_model.hpp"
#include "neuralsim/model/parameters.hpp"
#include "neuralsim/step/simulate.hpp"
#include "neuralsim/step/stepper.hpp"
#include "support/algorithms_agree.hpp"
#include "support/fit_support.hpp"
#include "support/test_models.hpp"
#include "support/dense_reference.hpp"

namespace neuralsim {
namespace {

Joint<double> rotor_joint(JointType type, Eigen::Vector3d axis, Eigen::Vector3d xyz, Eigen::Vector3d rpy,
                          double rotor_inertia, double gear_ratio) {
  Joint<double> j;
  j.type = type;
  j.axis = axis.normalized();
  j.origin = Transform<double>(rpy_rotation<double>(rpy[0], rpy[1], rpy[2]).transpose(), xyz);
  j.has_rotor = rotor_inertia >= 0;
  j.dynamics.rotor_inertia = std::max(rotor_inertia, 0.0);
  j.dynamics.gear_ratio = gear_ratio;
  return j;
}

// Planar arm, both joints about z: link 1 at the world origin, link 2 at
// x = 0.5 on link 1. Rotor 1 sits on the ground (carrier: world), rotor 2
// on link 1. Negative Ir means "no rotor".
Model<double> planar_arm(double ir1, double gr1, double ir2, double gr2) {
  Model<double> m;
  m.name = "planar_arm";
  m.gravity = Eigen::Vector3d(0, -9.81, 0);
  const Eigen::Vector3d z(0, 0, 1), zero = Eigen::Vector3d::Zero();
  m.add_body("link1", -1, rotor_joint(JointType::kRevolute, z, zero, zero, ir1, gr1),
             Inertia<double>::from_com(1.0, Vec3<double>(0.25, 0, 0), Vec3<double>(0.001, 0.02, 0.02).asDiagonal()));
  m.add_body("link2", 0, rotor_joint(JointType::kRevolute, z, Eigen::Vector3d(0.5, 0, 0), zero, ir2, gr2),
             Inertia<double>::from_com(0.8, Vec3<double>(0.2, 0, 0), Vec3<double>(0.001, 0.015, 0.015).asDiagonal()));
  m.joints[0].name = "shoulder";
  m.joints[1].name = "elbow";
  return m;
}

// A 3-D tree of revolute and prismatic joints with skew axes and rotors on
// every joint: carried by the world, by a link that has a rotor itself, by
// a prismatic link; one gear ratio negative, one a ball screw (rad/m).
Model<double> rotor_tree() {
  std::mt19937 rng(11);
  Model<double> m;
  m.name = "rotor_tree";
  m.gravity = Eigen::Vector3d(0.3, -0.2, -9.81);
  m.add_body("base", -1, rotor_joint(JointType::kRevolute, {0, 0, 1}, {0, 0, 0}, {0, 0, 0}, 0.03, 4.0),
             testing::random_inertia(rng));
  m.add_body("upper", 0, rotor_joint(JointType::kRevolute, {1, 1, 0}, {0.1, 0.2, 0.3}, {0.2, -0.1, 0.4}, 0.01, -7.0),
             testing::random_inertia(rng));
  m.add_body("slider", 1, rotor_joint(JointType::kPrismatic, {0, 1, 1}, {0.05, 0, -0.2}, {0, 0.3, 0}, 0.002, 20.0),
             testing::random_inertia(rng));
  m.add_body("fore", 1, rotor_joint(JointType::kRevolute, {0, 1, 0}, {-0.2, 0.1, 0}, {0.1, 0, 0}, 0.02, 3.0),
             testing::random_inertia(rng));
  m.add_body("hand", 2, rotor_joint(JointType::kRevolute, {1, 0, 0.5}, {0, 0.1, 0.1}, {0, 0, 0.2}, 0.005, 2.0),
             testing::random_inertia(rng));
  return m;
}

// A floating base carrying two geared joints, the second on the first.
Model<double> floating_rotor_model() {
  std::mt19937 rng(5);
  Model<double> m;
  m.name = "floating_rotors";
  m.gravity = Eigen::Vector3d::Zero();
  Joint<double> free;
  free.type = JointType::kFree;
  m.add_body("base", -1, free, testing::random_inertia(rng));
  m.add_body("arm", 0, rotor_joint(JointType::kRevolute, {0, 1, 0}, {0.2, 0, 0.1}, {0, 0, 0.3}, 0.02, 8.0),
             testing::random_inertia(rng));
  m.add_body("wrist", 1, rotor_joint(JointType::kRevolute, {0, 0, 1}, {0.3, 0, 0}, {0.2, 0, 0}, 0.01, -5.0),
             testing::random_inertia(rng));
  return m;
}

double kinetic(const Model<double>& m, const Eigen::VectorXd& q, const Eigen::VectorXd& qd) {
  Data<double> data(m);
  forward_kinematics(m, data, q, qd);
  return kinetic_energy(m, data, qd);
}

double potential(const Model<double>& m, const Eigen::VectorXd& q) {
  Data<double> data(m);
  forward_kinematics(m, data, q);
  return potential_energy(m, data, q);
}

Eigen::MatrixXd crba_matrix(const Model<double>& m, const Eigen::VectorXd& q) {
  Data<double> data(m);
  crba(m, data, q);
  return data.M;
}

// M from the kinetic energy alone: T = ½ q̇ᵀ M q̇ gives M_ii = 2 T(e_i) and
// M_ij = T(e_i + e_j) - T(e_i) - T(e_j) (polarization; exact).
Eigen::MatrixXd energy_mass_matrix(const Model<double>& m, const Eigen::VectorXd& q) {
  Eigen::MatrixXd M(m.nv, m.nv);
  const Eigen::MatrixXd E = Eigen::MatrixXd::Identity(m.nv, m.nv);
  for (int i = 0; i < m.nv; ++i) M(i, i) = 2 * kinetic(m, q, E.col(i));
  for (int i = 0; i < m.nv; ++i)
    for (int j = 0; j < i; ++j)
      M(i, j) = M(j, i) = kinetic(m, q, E.col(i) + E.col(j)) - 0.5 * M(i, i) - 0.5 * M(j, j);
  return M;
}

Eigen::VectorXd random_vector(std::mt19937& rng, int n, double scale = 1.5) {
  std::uniform_real_distribution<double> u(-scale, scale);
  Eigen::VectorXd v(n);
  for (int i = 0; i < n; ++i) v[i] = u(rng);
  return v;
}

// T = ½ Ir1 (gr1 q̇1)² + ½ Ir2 (q̇1 + gr2 q̇2)²: the rotors add
// [[gr1² Ir1 + Ir2, gr2 Ir2], [gr2 Ir2, gr2² Ir2]] to M at every q.
TEST(Rotor, TwoLinkArmMassMatrixHasTheGearCoupling) {
  const double ir1 = 0.01, gr1 = 3, ir2 = 0.02;
  for (double gr2 : {5.0, -5.0}) {
    const Model<double> with = planar_arm(ir1, gr1, ir2, gr2), without = planar_arm(-1, gr1, -1, gr2);
    Eigen::Matrix2d expected;
    expected << gr1 * gr1 * ir1 + ir2, gr2 * ir2, gr2 * ir2, gr2 * gr2 * ir2;
    for (double q2 : {0.0, 0.7, -2.1}) {
      const Eigen::VectorXd q = Eigen::Vector2d(0.4, q2);
      const Eigen::MatrixXd dM = crba_matrix(with, q) - crba_matrix(without, q);
      EXPECT_LT((dM - expected).norm(), 1e-14) << "gr2 = " << gr2 << ", q2 = " << q2 << "\n" << dM;
      // RNEA's columns at q̇ = 0 without gravity are M's.
      Model<double> no_g = with;
      no_g.gravity.setZero();
      Data<double> data(no_g);
      const Eigen::VectorXd qdd = Eigen::Vector2d(0.3, -1.1), zero = Eigen::VectorXd::Zero(2);
      rnea(no_g, data, q, zero, qdd);
      EXPECT_LT((data.tau - crba_matrix(with, q) * qdd).norm(), 1e-13);
    }
    // M₁₂ takes the sign of the gear ratio: -|gr|·Ir for a reversing gear.
    EXPECT_EQ(expected(0, 1) < 0, gr2 < 0);
  }
}

TEST(Rotor, MassMatrixIsTheHessianOfTheKineticEnergy) {
  std::mt19937 rng(3);
  for (const Model<double>& m : {rotor_tree(), planar_arm(0.01, 3, 0.02, -5)})
    for (int trial = 0; trial < 4; ++trial) {
      const Eigen::VectorXd q = random_vector(rng, m.nq);
      const Eigen::MatrixXd M = crba_matrix(m, q), ME = energy_mass_matrix(m, q);
      EXPECT_LT((M - ME).norm(), 1e-12 * M.norm()) << m.name << "\n" << M << "\n\n" << ME;
    }
}

// Lagrange: τ = d/dt(∂T/∂q̇) - ∂T/∂q + ∂V/∂q = M q̈ + Ṁ q̇ - ∂T/∂q + ∂V/∂q,
// with M from the energy and every derivative by central differences.
TEST(Rotor, RneaSatisfiesLagrangesEquations) {
  const Model<double> m = rotor_tree();
  std::mt19937 rng(9);
  const double h = 1e-5;
  for (int trial = 0; trial < 4; ++trial) {
    const Eigen::VectorXd q = random_vector(rng, m.nq), qd = random_vector(rng, m.nv), qdd = random_vector(rng, m.nv);
    const Eigen::MatrixXd Mdot = (energy_mass_matrix(m, q + h * qd) - energy_mass_matrix(m, q - h * qd)) / (2 * h);
    Eigen::VectorXd dT(m.nv), dV(m.nv);
    for (int k = 0; k < m.nv; ++k) {
      Eigen::VectorXd e = Eigen::VectorXd::Zero(m.nq);
      e[k] = h;
      dT[k] = (kinetic(m, q + e, qd) - kinetic(m, q - e, qd)) / (2 * h);
      dV[k] = (potential(m, q + e) - potential(m, q - e)) / (2 * h);
    }
    const Eigen::VectorXd lagrange = energy_mass_matrix(m, q) * qdd + Mdot * qd - dT + dV;
    Data<double> data(m);
    rnea(m, data, q, qd, qdd);
    EXPECT_LT((data.tau - lagrange).norm(), 1e-7 * (1 + lagrange.norm()))
        << "trial " << trial << "\nRNEA     " << data.tau.transpose() << "\nLagrange " << lagrange.transpose();
  }
}

TEST(Rotor, AbaAgreesWithCrbaAndRnea) {
  testing::expect_algorithms_agree(rotor_tree());
  testing::expect_algorithms_agree(planar_arm(0.01, 3, 0.02, -5));
  testing::expect_algorithms_agree(floating_rotor_model());
  // Rotors below a floating base, a spherical joint and a fixed link.
  Model<double> mixed = testing::mixed_joint_model();
  for (int i : {2, 4, 5}) {
    mixed.joints[i].has_rotor = true;
    mixed.joints[i].dynamics.rotor_inertia = 0.004 * (i + 1);
    mixed.joints[i].dynamics.gear_ratio = i == 4 ? -30.0 : 6.0;
  }
  testing::expect_algorithms_agree(mixed);
}

// M⁻¹ through the articulated factorization (used by impulse contact) reads
// the rotor's cluster U and D⁻¹.
TEST(Rotor, InverseInertiaMatchesCrba) {
  const Model<double> m = floating_rotor_model();
  Data<double> data(m);
  InverseInertiaWorkspace<double> ws(m.num_bodies());
  std::mt19937 rng(2);
  Eigen::VectorXd q, qd;
  for (int trial = 0; trial < 3; ++trial) {
    testing::random_state(m, rng, q, qd);
    aba(m, data, q, qd, Eigen::VectorXd(Eigen::VectorXd::Zero(m.nv)));
    complete_articulated_factorization(m, data);
    const Eigen::MatrixXd M = crba_matrix(m, q);
    for (int body = 0; body < m.num_bodies(); ++body) {
      const Vec6<double> F = Vec6<double>::Random();
      ws.clear();
      ws.add_force(body, F);
      Eigen::VectorXd x(m.nv);
      apply_inverse_inertia(m, data, ws, &x);
      // Jᵀ F from RNEA: a body force F (world) is -τ of RNEA at rest without gravity.
      Model<double> no_g = m;
      no_g.gravity.setZero();
      Data<double> d2(no_g);
      d2.f_ext[body] = data.X_world[body].apply_force(F);
      const Eigen::VectorXd zero = Eigen::VectorXd::Zero(m.nv);
      rnea(no_g, d2, q, zero, zero);
      const Eigen::VectorXd expected = testing::spd_solve(M, -d2.tau);
      EXPECT_LT((x - expected).norm(), 1e-9 * (1 + expected.norm())) << "body " << body;
    }
  }
}

struct Energies {
  double initial = 0, max_error = 0;
};

Energies simulate_energy(const Model<double>& m, int steps, double dt) {
  Stepper<double> stepper(m, StepOptions{Integrator::kRK4, dt, 1});
  std::mt19937 rng(4);
  Eigen::VectorXd q, qd;
  testing::random_state(m, rng, q, qd);
  auto energy = [&] { return kinetic(m, q, qd) + potential(m, q); };
  Energies e;
  e.initial = energy();
  const Eigen::VectorXd u = Eigen::VectorXd::Zero(m.nv);
  for (int k = 0; k < steps; ++k) {
    stepper.step(q, qd, u, k * dt);
    e.max_error = std::max(e.max_error, std::abs(energy() - e.initial));
  }
  return e;
}

// The rotor's gyroscopic and coupling terms in ABA are consistent with T.
TEST(Rotor, EnergyIsConservedWithoutDamping) {
  for (const Model<double>& m : {rotor_tree(), planar_arm(0.01, 3, 0.02, -5)}) {
    const Energies e = simulate_energy(m, 2000, 1e-3);
    EXPECT_LT(e.max_error, 1e-7 * std::abs(e.initial) + 1e-9) << m.name;
  }
}

// No gravity, internal joint torques only: a floating robot's total linear
// and angular momentum (spinning rotors included) stay constant.
TEST(Rotor, FloatingBaseConservesMomentumWithSpinningRotors) {
  const Model<double> m = floating_rotor_model();
  Stepper<double> stepper(m, StepOptions{Integrator::kRK4, 1e-3, 1});
  std::mt19937 rng(8);
  Eigen::VectorXd q, qd;
  testing::random_state(m, rng, q, qd);
  Eigen::VectorXd u = Eigen::VectorXd::Zero(m.nv);
  u[6] = 0.3;  // the motors spin up against the base
  u[7] = -0.2;
  Data<double> data(m);
  auto momentum = [&] {
    forward_kinematics(m, data, q, qd);
    const Centroidal<double> c = centroidal(m, data);
    Eigen::Matrix<double, 6, 1> h;
    h << c.angular_momentum + c.com.cross(c.linear_momentum), c.linear_momentum;  // about the world origin
    return h;
  };
  const Eigen::Matrix<double, 6, 1> h0 = momentum();
  ASSERT_GT(h0.head<3>().norm(), 1e-2);
  double drift = 0;
  for (int k = 0; k < 1000; ++k) {
    stepper.step(q, qd, u, k * 1e-3);
    drift = std::max(drift, (momentum() - h0).norm());
  }
  EXPECT_LT(drift, 1e-8 * (1 + h0.norm()));
  EXPECT_GT(std::abs(qd[6]), 1.0);  // the rotors did spin up
}

// ∂q̈/∂Ir and ∂q̈/∂gr by Jets against central differences, also at Ir = 0
// (the rotor terms are structural, so their derivative does not vanish).
TEST(Rotor, JetDerivativesMatchCentralDifferences) {
  using J = Jet8;
  std::mt19937 rng(6);
  for (double ir2 : {0.02, 0.0}) {
    const Model<double> base = planar_arm(0.01, 3, ir2, -5);
    const Eigen::VectorXd q = Eigen::Vector2d(0.4, -0.9), qd = Eigen::Vector2d(1.3, -2.0),
                          tau = Eigen::Vector2d(0.5, -0.2);
    auto qdd_of = [&](double ir, double gr) {
      Model<double> m = base;
      m.joints[1].dynamics.rotor_inertia = ir;
      m.joints[1].dynamics.gear_ratio = gr;
      Data<double> data(m);
      aba(m, data, q, qd, tau);
      return Eigen::VectorXd(data.qdd);
    };
    Model<J> mj = base.cast<J>();
    mj.joints[1].dynamics.rotor_inertia = J(ir2, 0);
    mj.joints[1].dynamics.gear_ratio = J(-5.0, 1);
    Data<J> dj(mj);
    aba(mj, dj, VecX<J>(q.cast<J>()), VecX<J>(qd.cast<J>()), VecX<J>(tau.cast<J>()));
    const double h = 1e-6;
    const Eigen::VectorXd d_ir = (qdd_of(ir2 + h, -5) - qdd_of(ir2 - h, -5)) / (2 * h);
    const Eigen::VectorXd d_gr = (qdd_of(ir2, -5 + h) - qdd_of(ir2, -5 - h)) / (2 * h);
    for (int k = 0; k < 2; ++k) {
      EXPECT_NEAR(dj.qdd[k].v[0], d_ir[k], 1e-6 * (1 + std::abs(d_ir[k]))) << "Ir = " << ir2;
      EXPECT_NEAR(dj.qdd[k].v[1], d_gr[k], 1e-6 * (1 + std::abs(d_gr[k]))) << "Ir = " << ir2;
    }
    EXPECT_GT(d_ir.norm(), 1e-2);
  }
}

// Data from the geared arm; single shooting recovers both rotor inertias and
// the elbow's gear ratio (identifiable through τ = gr·u and gr²·Ir, gr·Ir).
TEST(Rotor, SimidRecoversRotorInertiasAndGearRatio) {
  const double ir1 = 0.01, ir2 = 0.02, gr2 = 5.0;
  const Model<double> truth = planar_arm(ir1, 3, ir2, gr2);
  StepOptions step;
  step.integrator = Integrator::kRK4;
  step.dt = 0.01;
  std::vector<testing::SinusoidRun> runs;
  for (int k = 0; k < 2; ++k)
    runs.push_back({Eigen::Vector2d(0.3 - 0.5 * k, 0.2), Eigen::Vector2d(3.0 + k, 0.8 - 0.3 * k),
                    Eigen::Vector2d(0.5 + 0.2 * k, 0.9 - 0.1 * k)});
  const std::vector<Trajectory> data = testing::record_sinusoids(truth, step, runs, 300);
  Model<double> start = truth;
  set_parameter(start, resolve_parameter(start, "joint.shoulder.rotor.inertia"), 0.02);
  set_parameter(start, resolve_parameter(start, "joint.elbow.rotor.inertia"), 0.005);
  set_parameter(start, resolve_parameter(start, "joint.elbow.gear_ratio"), 4.0);
  const testing::SingleShootingFit fit =
      testing::fit_single_shooting(start,
                                   "[{name: joint.shoulder.rotor.inertia, initial: 0.02, bounds: [0, 1]},"
                                   " {name: joint.elbow.rotor.inertia, initial: 0.005, bounds: [0, 1]},"
                                   " {name: joint.elbow.gear_ratio, initial: 4.0, bounds: [1, 20]}]",
                                   data, step, 100);
  ASSERT_TRUE(fit.result.usable) << fit.result.report;
  EXPECT_NEAR(fit.value(0), ir1, 1e-5 * ir1) << fit.result.report;
  EXPECT_NEAR(fit.value(1), ir2, 1e-5 * ir2) << fit.result.report;
  EXPECT_NEAR(fit.value(2), gr2, 1e-5 * gr2) << fit.result.report;
}

const char* kGearedArmYaml = R"(
name: geared_arm
gravity: [0, -9.81, 0]
bodies:
  - name: link1
    joint: {name: shoulder, axis: [0, 0, 1], gear_ratio: 3, rotor: {inertia: 0.01}}
    mass: 1.0
    com: [0.25, 0, 0]
    inertia: [0.001, 0.02, 0.02]
  - name: link2
    parent: link1
    joint: {name: elbow, axis: [0, 0, 1], origin: {xyz: [0.5, 0, 0]}, gear_ratio: -5, rotor: {inertia: 0.02}}
    mass: 0.8
    com: [0.2, 0, 0]
    inertia: [0.001, 0.015, 0.015]
)";

std::string load_error(const std::string& yaml) {
  try {
    parse_yaml_model(yaml, "arm.yaml");
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(Rotor, YamlDeclaresRotorsAndNamesTheirParameters) {
  const Model<double> m = parse_yaml_model(kGearedArmYaml, "arm.yaml");
  ASSERT_TRUE(m.joints[1].has_rotor);
  EXPECT_EQ(m.joints[1].dynamics.rotor_inertia, 0.02);
  const Model<double> ref = planar_arm(0.01, 3, 0.02, -5);
  const Eigen::VectorXd q = Eigen::Vector2d(0.3, -1.2);
  EXPECT_LT((crba_matrix(m, q) - crba_matrix(ref, q)).norm(), 1e-14);
  const std::vector<std::string> names = parameter_names(m);
  EXPECT_NE(std::find(names.begin(), names.end(), "joint.elbow.rotor.inertia"), names.end());
  EXPECT_NEAR(get_parameter(m, resolve_parameter(m, "joint.elbow.rotor.inertia")), 0.02, 0);

  // `joints:` adds a rotor to a generated model; without one there is no parameter.
  const Model<double> plain = parse_yaml_model("generator: double_pendulum\n", "gen.yaml");
  EXPECT_FALSE(find_parameter(plain, "joint.joint2.rotor.inertia").has_value());
  const Model<double> geared = parse_yaml_model(
      "generator: double_pendulum\njoints: {joint2: {gear_ratio: 4, rotor: {inertia: 0.003}}}\n", "gen.yaml");
  ASSERT_TRUE(geared.joints[1].has_rotor);
  EXPECT_EQ(geared.joints[1].dynamics.rotor_inertia, 0.003);
  const Eigen::VectorXd z = Eigen::VectorXd::Zero(2);
  EXPECT_NEAR(crba_matrix(geared, z)(1, 1) - crba_matrix(plain, z)(1, 1), 16 * 0.003, 1e-14);
}

// The shipped example model is the arm above.
TEST(Rotor, ShippedGearedArmModel) {
  const Model<double> m = load_yaml_model(testing::source_path("configs/models/geared_arm.yaml"));
  const Model<double> ref = planar_arm(0.01, 3, 0.02, -5);
  for (double q2 : {0.0, 1.1}) {
    const Eigen::VectorXd q = Eigen::Vector2d(-0.4, q2);
    EXPECT_LT((crba_matrix(m, q) - crba_matrix(ref, q)).norm(), 1e-14);
  }
  testing::expect_algorithms_agree(m);
}

TEST(Rotor, BadRotorsAreRefusedWithTheKey) {
  std::string yaml = kGearedArmYaml;
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string s = yaml;
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  std::string msg = load_error(replaced("rotor: {inertia: 0.02}", "rotor: {inertia: -0.02}"));
  EXPECT_NE(msg.find("arm.yaml:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("inertia"), std::string::npos) << msg;
  EXPECT_NE(msg.find(">= 0"), std::string::npos) << msg;
  msg = load_error(replaced("rotor: {inertia: 0.02}", "rotor: {inertia: .nan}"));
  EXPECT_NE(msg.find("inertia"), std::string::npos) << msg;
  msg = load_error(replaced("rotor: {inertia: 0.02}", "rotor: 0.02"));
  EXPECT_NE(msg.find("rotor"), std::string::npos) << msg;
  EXPECT_NE(msg.find("{inertia: Ir}"), std::string::npos) << msg;
  msg = load_error(replaced("rotor: {inertia: 0.02}", "rotor: {inertia: 0.02, ratio: 3}"));
  EXPECT_NE(msg.find("ratio"), std::string::npos) << msg;
  msg = load_error(replaced("rotor: {inertia: 0.02}", "rotor: {}"));
  EXPECT_NE(msg.find("inertia"), std::string::npos) << msg;
  msg = load_error(replaced("axis: [0, 0, 1], origin", "type: spherical, origin"));
  EXPECT_NE(msg.find("revolute or prismatic"), std::string::npos) << msg;
  msg = load_error("generator: double_pendulum\njoints: {joint2: {rotor: {inertia: -1}}}\n");
  EXPECT_NE(msg.find("inertia"), std::string::npos) << msg;

  // A value set later (--set, params files) goes through Model::validate.
  Model<double> m = parse_yaml_model(kGearedArmYaml, "arm.yaml");
  set_parameter(m, resolve_parameter(m, "joint.elbow.rotor.inertia"), -0.1);
  try {
    m.validate();
    ADD_FAILURE() << "negative rotor inertia accepted";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("joint 'elbow'"), std::string::npos) << e.what();
  }
}

// The analytic reverse-mode node has no rotor terms: it refuses, it does not
// return a wrong gradient.
TEST(Rotor, ReverseModeRefusesRotors) {
  const Model<Rev> m = planar_arm(0.01, 3, 0.02, -5).cast<Rev>();
  try {
    AbaNode node(m);
    ADD_FAILURE() << "AbaNode accepted a model with rotors";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("rotor"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(AbaNode(planar_arm(-1, 3, -1, -5).cast<Rev>()));
  // So do the analytic adjoints it is built on.
  const Model<double> md = planar_arm(0.01, 3, 0.02, -5);
  Data<double> data(md);
  RneaVjp<double> out(md);
  const Eigen::VectorXd z = Eigen::VectorXd::Zero(2);
  EXPECT_THROW(rnea_vjp(md, data, z, z, z, z, out), ModelError);
}

}  // namespace
}  // namespace neuralsim
