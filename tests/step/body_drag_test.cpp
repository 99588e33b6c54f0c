// Body drag (step/body_drag.hpp, issue #38): Fossen's diagonal damping
// D(ν)ν, linear and quadratic per body axis, at the centre of mass. Checked
// against physics and closed forms, never against the code's own output:
//  * the wrench and the accelerations it gives a free body moving along (or
//    about) one body axis, both signs, every axis, COM off the origin;
//  * the closed-form decay of a body under pure linear drag
//    (v = v0 e^{-d t/m}) and pure quadratic drag (v = v0 / (1 + c v0 t/m)),
//    with semi-implicit Euler and RK4, in a rotated body frame;
//  * energy: with drag and no actuation the mechanical energy never rises,
//    and dE/dt equals the closed-form power -Σ (D_l,k + D_q,k |ν_k|) ν_k²;
//  * gradients of a 200-step rollout's loss with respect to every drag
//    coefficient: reverse mode against Richardson central differences
//    (relative 1e-6) and against forward-mode Jets;
//  * a single-shooting fit recovers 4 drag coefficients of a 3-link planar
//    chain from recordings of our own engine (1e-4 relative);
//  * bad input: negative or non-finite coefficients, a wrong count, a
//    negative bound on a drag coefficient.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "neuralsim/dynamics/energy.hpp"
#include "neuralsim/io/yaml_model.hpp"
#include "neuralsim/parameters/hybrid_rollout.hpp"
#include "neuralsim/step/stepper.hpp"
#include "support/allocation_counter.hpp"
#include "support/files.hpp"
#include "support/fit_support.hpp"

namespace neuralsim::body_drag_test {

// A free body (mass 2, principal inertias 0.02, 0.03, 0.04) with drag on
// every axis; `com` in body coordinates.
std::string free_body_yaml(const std::string& com, const std::string& linear, const std::string& quadratic) {
  return "name: floater\ngravity: [0, 0, 0]\nbodies:\n"
         "  - name: floater\n    joint: {type: free}\n    mass: 2.0\n    com: " + com +
         "\n    inertia: [0.02, 0.03, 0.04]\n"
         "    drag: {linear: " + linear + ", quadratic: " + quadratic + "}\n";
}

// Three slender rods (length 1, mass 1) in a chain of revolute joints about
// z (planar, swimmer-like), each dragged, and optionally a free body with
// its COM off its origin.
std::string chain_yaml(bool with_floater, double gravity_z) {
  std::string y = "name: drag_chain\ngravity: [0, 0, " + std::to_string(gravity_z) + "]\nbodies:\n";
  const char* drags[3] = {
      "{linear: [0.1, 0.8, 0.3, 0.01, 0.02, 0.05], quadratic: [0.05, 0.6, 0.2, 0.01, 0.01, 0.03]}",
      "{linear: [0.2, 0.5, 0.1, 0.02, 0.01, 0.04], quadratic: [0.1, 0.9, 0.3, 0.02, 0.02, 0.02]}",
      "{linear: [0.15, 0.7, 0.2, 0.03, 0.03, 0.06], quadratic: [0.02, 0.4, 0.1, 0.01, 0.03, 0.05]}"};
  for (int i = 0; i < 3; ++i) {
    const std::string n = std::to_string(i + 1);
    y += "  - name: link" + n + "\n";
    if (i > 0) y += "    parent: link" + std::to_string(i) + "\n";
    // Joint 3 about y: the last link leaves the plane (every drag axis acts).
    y += std::string("    joint: {type: revolute, axis: ") + (i == 2 && with_floater ? "[0, 1, 0]" : "[0, 0, 1]") +
         (i > 0 ? ", origin: parent_length}\n" : "}\n");
    y += "    mass: 1.0\n    inertia: [0.001, 0.0833, 0.0833]\n";
    y += "    length: {value: 1.0, axis: [1, 0, 0], com_fraction: 0.5}\n";
    y += std::string("    drag: ") + drags[i] + "\n";
  }
  if (with_floater)
    y += "  - name: floater\n    joint: {type: free}\n    mass: 2.0\n    com: [0.1, -0.05, 0.2]\n"
         "    inertia: [0.02, 0.03, 0.04]\n"
         "    drag: {linear: [0.3, 0.4, 0.5, 0.02, 0.03, 0.04], quadratic: [0.2, 0.3, 0.6, 0.01, 0.02, 0.05]}\n";
  return y;
}

// q of a free body at the origin with orientation quaternion (x, y, z, w).
Eigen::VectorXd free_q(const Eigen::Quaterniond& r) {
  Eigen::VectorXd q(7);
  q << 0, 0, 0, r.x(), r.y(), r.z(), r.w();
  return q;
}

// (a) The drag wrench at the origin and the accelerations it gives, against
// closed forms: translation along body axis k (COM at the origin: F_k/m)
// and rotation about body axis k (ω̇_k = τ_k / I_k), both signs.
TEST(BodyDrag, WrenchAndAccelerationMatchTheClosedFormOnEveryAxis) {
  const double Dl[6] = {0.3, 0.4, 0.5, 0.02, 0.03, 0.04}, Dq[6] = {0.2, 0.3, 0.6, 0.01, 0.02, 0.05};
  const double I[3] = {0.02, 0.03, 0.04}, m = 2.0;
  const Model<double> model = parse_yaml_model(
      free_body_yaml("[0, 0, 0]", "[0.3, 0.4, 0.5, 0.02, 0.03, 0.04]", "[0.2, 0.3, 0.6, 0.01, 0.02, 0.05]"), "t.yaml");
  Stepper<double> stepper(model, StepOptions{});
  const Eigen::VectorXd q = free_q(Eigen::Quaterniond(Eigen::AngleAxisd(0.7, Eigen::Vector3d(1, 2, 3).normalized())));
  const Eigen::VectorXd u = Eigen::VectorXd::Zero(6);
  for (int k = 0; k < 6; ++k)
    for (double s : {1.7, -0.9}) {
      // Free joint velocity: body-frame [ω; v].
      Eigen::VectorXd qd = Eigen::VectorXd::Zero(6);
      const int coord = k < 3 ? 3 + k : k - 3;
      qd[coord] = s;
      stepper.forward_dynamics(q, qd, u, 0.0);
      const double f = -(Dl[k] * s + Dq[k] * std::abs(s) * s);
      Eigen::VectorXd expected_wrench = Eigen::VectorXd::Zero(6);  // [τ; F]
      expected_wrench[coord] = f;
      EXPECT_LT((stepper.data().f_ext[0] - expected_wrench).norm(), 1e-14) << "axis " << k << " s " << s;
      Eigen::VectorXd expected_acc = Eigen::VectorXd::Zero(6);
      expected_acc[coord] = k < 3 ? f / m : f / I[k - 3];
      EXPECT_LT((stepper.data().qdd - expected_acc).norm(), 1e-12 * (1 + expected_acc.norm()))
          << "axis " << k << " s " << s << ": " << stepper.data().qdd.transpose();
    }
}

// The COM off the origin: the velocity is that of the COM (v_o + ω × c) and
// the force acts there (its moment c × F is added at the origin). A body
// spinning about z with its COM at c = (0.5, 0, 0): ν = (0, 0.5 ω, 0, 0, 0, ω).
TEST(BodyDrag, ActsAtTheCentreOfMass) {
  const Model<double> model = parse_yaml_model(
      free_body_yaml("[0.5, 0, 0]", "[0.3, 0.4, 0.5, 0.02, 0.03, 0.04]", "[0.2, 0.3, 0.6, 0.01, 0.02, 0.05]"), "t.yaml");
  for (double w : {2.0, -3.0}) {
    Data<double> data(model);
    Eigen::VectorXd qd = Eigen::VectorXd::Zero(6);
    qd[2] = w;
    forward_kinematics(model, data, free_q(Eigen::Quaterniond::Identity()), qd);
    data.clear_external_forces();
    add_body_drag(model, data);
    const double vy = 0.5 * w;
    const double Fy = -(0.4 * vy + 0.3 * std::abs(vy) * vy);
    const double tz = -(0.04 * w + 0.05 * std::abs(w) * w) + 0.5 * Fy;  // τ_z + (c × F)_z
    Eigen::VectorXd expected(6);
    expected << 0, 0, tz, 0, Fy, 0;
    EXPECT_LT((data.f_ext[0] - expected).norm(), 1e-14) << data.f_ext[0].transpose();
  }
}

// The closed-form decay of a body sliding along (or spinning about) one of
// its axes in a rotated frame, with each integrator: linear drag
// v = v0 e^{-d t/m}, x = v0 m/d (1 - e^{-d t/m}); quadratic drag
// v = v0 / (1 + c |v0| t/m), x = sgn(v0) m/c ln(1 + c |v0| t/m).
TEST(BodyDrag, DecayMatchesTheClosedFormWithEveryIntegrator) {
  const Eigen::Quaterniond R(Eigen::AngleAxisd(0.9, Eigen::Vector3d(-1, 2, 0.5).normalized()));
  struct Case {
    const char* label;
    std::string linear, quadratic;
    int coord;      // free-joint velocity coordinate: 0..2 ω, 3..5 v
    double d, c;    // the active coefficients
    double inertia; // m or I_k
  };
  const std::vector<Case> cases = {
      {"linear y", "[0, 0.6, 0, 0, 0, 0]", "[0, 0, 0, 0, 0, 0]", 4, 0.6, 0, 2.0},
      {"quadratic z", "[0, 0, 0, 0, 0, 0]", "[0, 0, 0.8, 0, 0, 0]", 5, 0, 0.8, 2.0},
      {"linear rx", "[0, 0, 0, 0.05, 0, 0]", "[0, 0, 0, 0, 0, 0]", 0, 0.05, 0, 0.02},
      {"quadratic rz", "[0, 0, 0, 0, 0, 0]", "[0, 0, 0, 0, 0, 0.03]", 2, 0, 0.03, 0.04}};
  for (const Case& cs : cases)
    for (Integrator integ : {Integrator::kSemiImplicitEuler, Integrator::kRK4})
      for (double v0 : {1.5, -2.0}) {
        const Model<double> model = parse_yaml_model(free_body_yaml("[0, 0, 0]", cs.linear, cs.quadratic), "t.yaml");
        const double dt = 1e-3, T = 1.0;
        Stepper<double> stepper(model, StepOptions{integ, dt, 1});
        Eigen::VectorXd q = free_q(R), qd = Eigen::VectorXd::Zero(6);
        const Eigen::VectorXd u = Eigen::VectorXd::Zero(6);
        qd[cs.coord] = v0;
        const int n = static_cast<int>(std::lround(T / dt));
        for (int k = 0; k < n; ++k) stepper.step(q, qd, u, k * dt);
        const double M = cs.inertia;
        const double v = cs.d > 0 ? v0 * std::exp(-cs.d * T / M) : v0 / (1 + cs.c * std::abs(v0) * T / M);
        const double x = cs.d > 0 ? v0 * M / cs.d * (1 - std::exp(-cs.d * T / M))
                                  : (v0 > 0 ? 1 : -1) * M / cs.c * std::log1p(cs.c * std::abs(v0) * T / M);
        const double tol = integ == Integrator::kRK4 ? 1e-9 : 5e-3;
        EXPECT_NEAR(qd[cs.coord], v, tol * std::abs(v0)) << cs.label << " " << integrator_name(integ) << " v0 " << v0;
        for (int i = 0; i < 6; ++i)
          if (i != cs.coord) EXPECT_NEAR(qd[i], 0.0, 1e-12) << cs.label;
        if (cs.coord >= 3) {  // travelled x along body axis k, i.e. R e_k in the world
          const Eigen::Vector3d expected = R * (x * Eigen::Vector3d::Unit(cs.coord - 3));
          EXPECT_LT((q.head<3>() - expected).norm(), tol * std::abs(x))
              << cs.label << " " << integrator_name(integ) << ": " << q.head<3>().transpose();
        } else {  // turned by x about body axis k
          const Eigen::Quaterniond r(q[6], q[3], q[4], q[5]);
          const Eigen::Quaterniond expected = R * Eigen::Quaterniond(Eigen::AngleAxisd(x, Eigen::Vector3d::Unit(cs.coord)));
          EXPECT_LT(r.angularDistance(expected), tol * std::abs(x)) << cs.label << " " << integrator_name(integ);
        }
      }
}

// The closed-form drag power -Σ_k (D_l,k + D_q,k |ν_k|) ν_k² of every
// dragged body at the state whose kinematics `data` holds.
double drag_power(const Model<double>& model, const Data<double>& data) {
  double P = 0;
  for (int i = 0; i < model.num_bodies(); ++i) {
    const BodyDrag<double>& d = model.bodies[i].drag;
    if (!d.enabled) continue;
    const Eigen::Vector3d w = data.v[i].head<3>(), c = model.bodies[i].inertia.com();
    Vec6<double> nu;
    nu << data.v[i].tail<3>() + w.cross(c), w;
    for (int k = 0; k < 6; ++k) P -= (d.linear[k] + d.quadratic[k] * std::abs(nu[k])) * nu[k] * nu[k];
  }
  return P;
}

// (c) Energy: gravity on, no actuation, RK4. E never rises, and its rate
// (central difference of E over two steps, error O(dt²)) equals the drag
// power at every step.
TEST(BodyDrag, EnergyDecreasesAtTheRateOfTheDragPower) {
  const Model<double> model = parse_yaml_model(chain_yaml(true, -9.81), "t.yaml");
  const double dt = 1e-3;
  Stepper<double> stepper(model, StepOptions{Integrator::kRK4, dt, 1});
  Eigen::VectorXd q = model.neutral_configuration(), qd = Eigen::VectorXd::Zero(model.nv);
  q[0] = 0.3;
  q[1] = -0.7;
  q[2] = 1.1;
  qd << 2.0, -1.5, 3.0, 1.0, -2.0, 1.5, 0.8, -0.6, 1.2;
  const Eigen::VectorXd u = Eigen::VectorXd::Zero(model.nv);
  Data<double> data(model);
  auto energy = [&](const Eigen::VectorXd& qq, const Eigen::VectorXd& vv) {
    forward_kinematics(model, data, qq, vv);
    return kinetic_energy(model, data, vv) + potential_energy(model, data, qq);
  };
  const int n = 2000;
  std::vector<double> E(n + 1), P(n + 1);
  for (int k = 0; k <= n; ++k) {
    E[k] = energy(q, qd);
    P[k] = drag_power(model, data);
    if (k < n) stepper.step(q, qd, u, k * dt);
  }
  double worst_rise = 0, worst_rate = 0, max_power = 0;
  for (int k = 0; k < n; ++k) worst_rise = std::max(worst_rise, E[k + 1] - E[k]);
  for (int k = 1; k < n; ++k) {
    max_power = std::max(max_power, std::abs(P[k]));
    worst_rate = std::max(worst_rate, std::abs((E[k + 1] - E[k - 1]) / (2 * dt) - P[k]));
  }
  RecordProperty("max_rate_error_over_max_power", testing::sci(worst_rate / max_power));
  EXPECT_LE(worst_rise, 1e-12 * std::abs(E[0]));
  EXPECT_GT(E[0] - E[n], 0.1 * E[0]);  // the drag did take energy out
  EXPECT_LT(worst_rate, 1e-4 * max_power) << "max |P| " << max_power;
}

// ---- (b) gradients of a 200-step rollout with respect to every drag coefficient

std::vector<std::string> drag_names(const Model<double>& model) {
  std::vector<std::string> names;
  for (const std::string& n : parameter_names(model))
    if (n.find(".drag.") != std::string::npos) names.push_back(n);
  return names;
}

ParameterSet named(const Model<double>& model, const std::vector<std::string>& names) {
  std::vector<EstimatedParameter> ps;
  for (const std::string& n : names) {
    EstimatedParameter p;
    p.target = *resolve_named_parameter(n, model, false);
    p.initial = named_parameter_value(p.target, model, nullptr, nullptr);
    ps.push_back(p);
  }
  return ParameterSet(ps);
}

struct GradientScene {
  Model<double> model = parse_yaml_model(chain_yaml(true, -9.81), "t.yaml");
  Eigen::VectorXd q0, qd0, qd_target;
  Eigen::MatrixXd controls;
  int T = 200;
  GradientScene() {
    q0 = model.neutral_configuration();
    q0[0] = 0.3;
    q0[1] = -0.7;
    q0[2] = 1.1;
    qd0 = Eigen::VectorXd::Zero(model.nv);
    qd0 << 2.0, -1.5, 3.0, 1.0, -2.0, 1.5, 0.8, -0.6, 1.2;
    qd_target = 0.5 * qd0;
    controls = Eigen::MatrixXd::Zero(model.nv, T);
    for (int k = 0; k < T; ++k)
      for (int i = 0; i < 3; ++i) controls(i, k) = 2.0 * std::sin(2 * M_PI * (1.0 + i) * k * 1e-3 + i);
  }
  // L = Σ_k ½‖q̇_k - q̇*‖² + ½‖q_k - q0‖², k = 1..T.
  TrajectoryLoss loss() const {
    TrajectoryLoss L;
    L.stage = state_tracking_loss(q0, qd_target, Eigen::VectorXd::Ones(model.nq), Eigen::VectorXd::Ones(model.nv));
    return L;
  }
};

double central_difference(const std::function<double(double)>& f, double h) {
  const double d1 = (f(h) - f(-h)) / (2 * h);
  const double d2 = (f(h / 2) - f(-h / 2)) / h;
  return (4 * d2 - d1) / 3;
}

TEST(BodyDrag, RolloutGradientsMatchCentralDifferencesAndJets) {
  const GradientScene s;
  const std::vector<std::string> names = drag_names(s.model);
  ASSERT_EQ(names.size(), 48u);  // 4 bodies × 12
  for (Integrator integ : {Integrator::kSemiImplicitEuler, Integrator::kRK4}) {
    RolloutProblem p;
    p.model = s.model;
    p.step = StepOptions{integ, 1e-3, 1};
    p.physical = named(s.model, names);
    HybridRollout sim(p);
    const std::vector<double> x0 = sim.parameters().initial_variables();
    HybridRolloutGradient g;
    const double L = sim.gradient(x0, s.q0, s.qd0, s.controls, s.loss(), g);
    // Central differences (Richardson), steps relative to each coefficient.
    Eigen::VectorXd fd(static_cast<Eigen::Index>(x0.size()));
    for (std::size_t i = 0; i < x0.size(); ++i)
      fd[static_cast<Eigen::Index>(i)] = central_difference(
          [&](double d) {
            std::vector<double> x = x0;
            x[i] += d;
            return sim.value(x, s.q0, s.qd0, s.controls, s.loss());
          },
          3e-3 * x0[i]);
    const double scale = fd.lpNorm<Eigen::Infinity>();
    double worst = 0;
    for (int i = 0; i < fd.size(); ++i)
      worst = std::max(worst, std::abs(g.x[i] - fd[i]) / std::max(std::abs(fd[i]), 1e-3 * scale));
    EXPECT_LT(worst, 1e-6) << integrator_name(integ) << "\n rev: " << g.x.transpose() << "\n fd:  " << fd.transpose();
    EXPECT_GT(scale, 0.0);
    // Forward mode: 4 coefficients (linear and quadratic, a translation and
    // a rotation axis, on the chain and the free body) as Jet directions.
    using J = Jet8;  // the library's instantiated width
    const std::vector<std::string> chosen = {"link.link2.drag.linear.y", "link.link3.drag.quadratic.rz",
                                             "link.floater.drag.quadratic.x", "link.floater.drag.linear.ry"};
    Model<J> m = s.model.cast<J>();
    for (int k = 0; k < 4; ++k) {
      const ParameterRef r = resolve_parameter(s.model, chosen[k]);
      J v = get_parameter(m, r);
      v.v[k] = 1.0;
      set_parameter(m, r, v);
    }
    Stepper<J> st(m, p.step);
    VecX<J> q = s.q0.cast<J>(), qd = s.qd0.cast<J>(), u(m.nv);
    J Lj(0.0);
    for (int k = 0; k < s.T; ++k) {
      for (int i = 0; i < m.nv; ++i) u[i] = J(s.controls(i, k));
      st.step(q, qd, u, k * 1e-3);
      for (int i = 0; i < m.nq; ++i) Lj += 0.5 * (q[i] - s.q0[i]) * (q[i] - s.q0[i]);
      for (int i = 0; i < m.nv; ++i) Lj += 0.5 * (qd[i] - s.qd_target[i]) * (qd[i] - s.qd_target[i]);
    }
    EXPECT_NEAR(Lj.a, L, 1e-12 * std::abs(L));
    for (int k = 0; k < 4; ++k) {
      const int idx = static_cast<int>(std::find(names.begin(), names.end(), chosen[k]) - names.begin());
      EXPECT_NEAR(g.x[idx], Lj.v[k], 1e-9 * std::abs(Lj.v[k])) << chosen[k];
      EXPECT_NEAR(fd[idx], Lj.v[k], 1e-6 * std::abs(Lj.v[k])) << chosen[k];
    }
    std::printf("[ drag grads ] %s: 48 coefficients, rev vs fd max rel %.1e (|g| %.1e)\n", integrator_name(integ),
                worst, scale);
  }
}

// A coefficient declared 0 still has its derivative (the body is dragged
// structurally, not because a value is nonzero).
TEST(BodyDrag, ZeroCoefficientKeepsItsDerivative) {
  const Model<double> model = parse_yaml_model(
      free_body_yaml("[0.1, 0, 0]", "[0, 0, 0, 0, 0, 0]", "[0, 0, 0, 0, 0, 0]"), "t.yaml");
  using J = Jet8;  // the library's instantiated width
  Model<J> m = model.cast<J>();
  m.bodies[0].drag.linear[0] = J(0.0, 0);
  Stepper<J> st(m, StepOptions{});
  VecX<J> q = free_q(Eigen::Quaterniond::Identity()).cast<J>(), qd = VecX<J>::Zero(6), u = VecX<J>::Zero(6);
  qd[3] = J(1.5);
  st.forward_dynamics(q, qd, u, 0.0);
  // ∂F_x/∂D_l,x = -v_x = -1.5, so ∂v̇_x/∂D_l,x = -1.5 / m.
  EXPECT_NEAR(st.data().qdd[3].v[0], -1.5 / 2.0, 1e-12);
}

// Drag adds no heap allocation to a step (either integrator).
TEST(BodyDrag, StepAllocatesNothing) {
  if (!testing::AllocationCounter::available()) GTEST_SKIP() << "allocation counting needs glibc, no sanitizer";
  const Model<double> model = parse_yaml_model(chain_yaml(true, -9.81), "t.yaml");
  for (Integrator integ : {Integrator::kSemiImplicitEuler, Integrator::kRK4}) {
    Stepper<double> stepper(model, StepOptions{integ, 1e-3, 2});
    Eigen::VectorXd q = model.neutral_configuration(), qd = Eigen::VectorXd::Constant(model.nv, 0.5);
    const Eigen::VectorXd u = Eigen::VectorXd::Constant(model.nv, 0.1);
    stepper.step(q, qd, u, 0.0);
    testing::AllocationCounter counter;
    for (int k = 1; k <= 20; ++k) stepper.step(q, qd, u, k * 1e-3);
    EXPECT_EQ(counter.count(), 0) << integrator_name(integ);
  }
}

// ---- (d) identification

TEST(BodyDrag, SingleShootingRecoversDragCoefficients) {
  // The shipped example: the chain of chain_yaml(false, 0), gravity off.
  const Model<double> truth = load_yaml_model(testing::source_path("configs/models/drag_chain.yaml"));
  const Model<double> inline_chain = parse_yaml_model(chain_yaml(false, 0.0), "t.yaml");
  for (const std::string& n : parameter_names(truth))
    ASSERT_EQ(get_parameter(truth, resolve_parameter(truth, n)), get_parameter(inline_chain, resolve_parameter(inline_chain, n)))
        << n;
  const StepOptions step{Integrator::kRK4, 0.01, 1};
  std::vector<testing::SinusoidRun> runs(2);
  runs[0].q0 = Eigen::Vector3d(0.2, -0.4, 0.6);
  runs[0].amplitude = Eigen::Vector3d(3.0, 1.5, 0.8);
  runs[0].frequency_hz = Eigen::Vector3d(0.5, 0.9, 1.3);
  runs[1].q0 = Eigen::Vector3d(-0.5, 0.3, -0.2);
  runs[1].amplitude = Eigen::Vector3d(2.0, 2.0, 1.0);
  runs[1].frequency_hz = Eigen::Vector3d(0.7, 0.4, 1.1);
  const std::vector<Trajectory> data = testing::record_sinusoids(truth, step, runs, 400);
  const std::vector<std::pair<std::string, double>> fitted = {{"link.link1.drag.linear.y", 0.8},
                                                              {"link.link2.drag.quadratic.y", 0.9},
                                                              {"link.link3.drag.linear.rz", 0.06},
                                                              {"link.link3.drag.quadratic.y", 0.4}};
  // The model the fit starts from: every fitted coefficient 60 % off.
  Model<double> start = truth;
  std::string yaml = "[";
  for (std::size_t i = 0; i < fitted.size(); ++i) {
    set_parameter(start, resolve_parameter(start, fitted[i].first), 1.6 * fitted[i].second);
    yaml += std::string(i ? ", " : "") + "{name: " + fitted[i].first + ", bounds: [0, 10]}";
  }
  const testing::SingleShootingFit fit = testing::fit_single_shooting(start, yaml + "]", data, step, 100, 100);
  for (std::size_t i = 0; i < fitted.size(); ++i) {
    const double v = fit.value(static_cast<int>(i));
    EXPECT_NEAR(v, fitted[i].second, 1e-4 * fitted[i].second) << fitted[i].first;
    std::printf("[ drag fit ] %-30s true %.6g start %.6g fitted %.10g (rel err %.1e)\n", fitted[i].first.c_str(),
                fitted[i].second, 1.6 * fitted[i].second, v, std::abs(v - fitted[i].second) / fitted[i].second);
  }
}

// ---- (e) bad input

TEST(BodyDrag, RefusesBadCoefficientsInTheModel) {
  const auto message = [](const std::string& linear, const std::string& quadratic) {
    return testing::config_or_data_error(
        [&] { parse_yaml_model(free_body_yaml("[0, 0, 0]", linear, quadratic), "model.yaml"); }, true);
  };
  testing::expect_contains(message("[0, 0, -0.1, 0, 0, 0]", "[0, 0, 0, 0, 0, 0]"),
                           {"model.yaml:", "drag.linear", "must be >= 0", "-0.1"});
  testing::expect_contains(message("[0, 0, 0, 0, 0]", "[0, 0, 0, 0, 0, 0]"),
                           {"model.yaml:", "drag.linear", "6 numbers", "got 5"});
  testing::expect_contains(message("[0, 0, 0, 0, 0, 0]", "[0, 0, 0, 0, 0, .inf]"),
                           {"model.yaml:", "drag.quadratic"});
  testing::expect_contains(message("[0, 0, 0, 0, 0, 0]", "[1, 2, 3, 4, 5, 6, 7]"),
                           {"model.yaml:", "drag.quadratic", "got 7"});
  testing::expect_contains(
      testing::config_or_data_error(
          [&] {
            parse_yaml_model("bodies:\n  - name: b\n    mass: 1\n    inertia: [1, 1, 1]\n    drag: {linar: [0, 0, 0, 0, 0, 0]}\n",
                             "model.yaml");
          },
          true),
      {"model.yaml:", "linar", "linear"});
  // Names exist only for bodies that declare drag.
  const Model<double> model = parse_yaml_model(chain_yaml(false, 0.0), "t.yaml");
  EXPECT_TRUE(find_parameter(model, "link.link2.drag.quadratic.rz").has_value());
  const Model<double> plain = parse_yaml_model("bodies: [{name: b, mass: 1, inertia: [1, 1, 1]}]", "t.yaml");
  EXPECT_FALSE(find_parameter(plain, "link.b.drag.linear.x").has_value());
  EXPECT_FALSE(plain.bodies[0].drag.enabled);
  EXPECT_EQ(parameter_bounds(resolve_parameter(model, "link.link1.drag.linear.x")).first, 0.0);
}

TEST(BodyDrag, RefusesANegativeBoundOnADragCoefficient) {
  const Model<double> model = parse_yaml_model(chain_yaml(false, 0.0), "t.yaml");
  const std::string msg = testing::config_or_data_error(
      [&] {
        read_parameter_set(Config::parse("p: [{name: link.link1.drag.linear.y, bounds: [-1, 10]}]", "params.yaml"), "p",
                           model);
      },
      true);
  testing::expect_contains(msg, {"params.yaml:1", "bounds", "link.link1.drag.linear.y", "-1", ">= 0"});
  EXPECT_EQ(msg.find('\n'), std::string::npos);
  // A bound of 0 is the physical one and fine.
  EXPECT_NO_THROW(read_parameter_set(
      Config::parse("p: [{name: link.link1.drag.linear.y, bounds: [0, 10]}]", "params.yaml"), "p", model));
}

}  // namespace neuralsim::body_drag_test
