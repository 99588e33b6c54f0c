// Contact gradients through hand-written nodes (contact.gradient: nodes):
// the force laws against world planes as one ForceContactNode per step
// (grad/force_contact_node.hpp) and the PGS solve differentiated implicitly
// at its solution (grad/pgs_node.hpp). Checked against mathematics:
//  * central differences (Richardson) of the double rollout, away from
//    contact mode switches: a box sliding on the ground, a ball bouncing,
//    Laikago standing for 100 steps (force level), a box sliding under
//    impulse contact: relative 1e-6;
//  * the node's gradient equals the taped operations' (contact.gradient:
//    taped), which differentiate the same arithmetic: 1e-12 relative;
//  * the PGS node's vector–Jacobian product equals the taped iterations'
//    once they have converged, on random problems with separating,
//    sticking and sliding contacts (pyramid and cone), and central
//    differences of the converged solve;
//  * the impulse rollout's gradient does not change with the PGS iteration
//    count once the solves have converged (the taped one does until then).
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <random>

#include "augment/augment_support.hpp"
#include "neuralsim/experiment/contact_config.hpp"
#include "neuralsim/grad/pgs_node.hpp"
#include "neuralsim/io/config.hpp"
#include "neuralsim/parameters/hybrid_rollout.hpp"
#include "support/files.hpp"

namespace neuralsim::contact_nodes_test {

using testing::Scene;


struct Case {
  std::string label;
  Scene scene;
  std::vector<std::string> names;
  int steps = 100;
  double h_param = 1e-4, h_state = 1e-6;  // relative to the parameter; absolute for the state
};

// kNodes: force nodes, or the implicit PGS node for impulse contact; kTaped:
// every operation and iteration on the tape.
RolloutProblem problem_of(const Case& c, ContactGradient mode) {
  RolloutProblem p;
  p.implicit_impulse = mode == ContactGradient::kNodes;
  p.model = c.scene.model;
  p.step = c.scene.step;
  p.contact = c.scene.contact;
  p.contact->gradient = mode;
  p.physical = testing::scene_parameters(c.scene.model, c.scene.contact, c.names);
  return p;
}


TrajectoryLoss loss_of(const Scene& s) {
  TrajectoryLoss L;
  L.stage = sum_of({state_tracking_loss(s.q0 * 0.9, s.qd0 * 1.1, Eigen::VectorXd::LinSpaced(s.model.nq, 1.0, 2.0),
                                        Eigen::VectorXd::LinSpaced(s.model.nv, 0.1, 0.3)),
                    link_position_loss(0, Eigen::Vector3d(0.1, -0.2, 0.3), 0.7)});
  return L;
}


// max_i |a_i - b_i| / max(|b_i|, 1e-3 ‖b‖∞)
double relative_error(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  const double scale = b.lpNorm<Eigen::Infinity>();
  double worst = 0;
  for (int i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]) / std::max(std::abs(b[i]), 1e-3 * scale));
  return worst;
}

Eigen::VectorXd flat(const HybridRolloutGradient& g) {
  Eigen::VectorXd v(g.x.size() + g.q0.size() + g.qd0.size() + g.controls.size());
  v << g.x, g.q0, g.qd0, g.controls.reshaped();
  return v;
}

// Parameters and initial state against central differences (1e-6); the
// node's gradient against the taped one's (`taped_tolerance`).
void expect_contact_gradient(const Case& c, double taped_tolerance = 1e-12) {
  HybridRollout sim(problem_of(c, ContactGradient::kNodes)), taped(problem_of(c, ContactGradient::kTaped));
  const std::vector<double> x0 = sim.parameters().initial_variables();
  const Eigen::MatrixXd U = testing::scene_controls(c.scene, c.steps);
  const TrajectoryLoss loss = loss_of(c.scene);
  HybridRolloutGradient g, gt;
  sim.gradient(x0, c.scene.q0, c.scene.qd0, U, loss, g);
  taped.gradient(x0, c.scene.q0, c.scene.qd0, U, loss, gt);
  const double vs_taped = relative_error(flat(g), flat(gt));
  EXPECT_LT(vs_taped, taped_tolerance) << c.label;

  Eigen::VectorXd fd(g.x.size() + g.q0.size() + g.qd0.size()), ad(fd.size());
  ad << g.x, g.q0, g.qd0;
  for (int i = 0; i < fd.size(); ++i) {
    const int np = static_cast<int>(x0.size()), nq = static_cast<int>(c.scene.q0.size());
    const double h = i < np ? c.h_param * std::abs(x0[static_cast<std::size_t>(i)]) : c.h_state;
    fd[i] = testing::richardson_central_difference(
        [&](double d) {
          std::vector<double> x = x0;
          Eigen::VectorXd q = c.scene.q0, qd = c.scene.qd0;
          if (i < np)
            x[static_cast<std::size_t>(i)] += d;
          else if (i < np + nq)
            q[i - np] += d;
          else
            qd[i - np - nq] += d;
          return sim.value(x, q, qd, U, loss);
        },
        h);
  }
  const double vs_fd = relative_error(ad, fd);
  EXPECT_LT(vs_fd, 1e-6) << c.label << "\n nodes: " << ad.transpose() << "\n fd:    " << fd.transpose();
  std::printf("[ contact nodes ] %-28s %3d steps: vs central differences %.1e, vs taped %.1e\n", c.label.c_str(),
              c.steps, vs_fd, vs_taped);
}

Scene ball_scene() {
  const Experiment e = load_experiment(Config::load(testing::source_path("configs/rollout_ball_throw.yaml"), {}));
  Scene s;
  s.name = "ball";
  s.model = e.model;
  s.contact = e.contact;
  s.step = e.step;
  s.q0 = Eigen::VectorXd::Zero(7);
  s.q0 << 0, 0, 0.06, 0, 0, 0, 1;  // 1 cm above the ground, falling at 1 m/s with spin
  s.qd0 = Eigen::VectorXd::Zero(6);
  s.qd0 << 0.5, -3.0, 0.2, 0.4, 0.1, -1.0;
  s.amplitude = s.frequency = s.phase = Eigen::VectorXd::Zero(6);
  return s;
}

Scene laikago_scene(const std::string& contact_model) {
  Scene s = testing::laikago_standing_scene(contact_model, 7e-3);
  // Softer than the config (k δ^1.5 = mg/4 at δ ≈ 7 mm), so that central
  // differences resolve 1e-6 (as rollout_gradient_test's Laikago case).
  s.contact->parameters.stiffness = 1e5;
  s.contact->parameters.damping = 1e3;
  return s;
}

TEST(ContactNodes, ForceContactMatchesCentralDifferencesAndTheTapedPath) {
  Scene box = testing::box_scene();  // slides at 1 m/s on four corners
  expect_contact_gradient({"box sliding (hunt_crossley)", box,
                           {"contact.stiffness", "contact.damping", "contact.friction", "contact.friction_velocity",
                            "contact.exponent", "link.box.mass"},
                           100, 1e-4, 1e-7});
  box.contact->model = ContactModelType::kPenalty;
  box.contact->parameters.stiffness = 7e7;
  box.contact->parameters.damping = 1e4;
  box.contact->friction_model = FrictionModel::kStribeck;
  box.contact->parameters.static_friction = 0.7;
  box.contact->parameters.stribeck_velocity = 0.5;
  expect_contact_gradient({"box sliding (penalty, stribeck)", box,
                           {"contact.stiffness", "contact.damping", "contact.friction", "contact.static_friction",
                            "contact.stribeck_velocity", "link.box.mass"},
                           100, 1e-4, 1e-7});
  expect_contact_gradient({"ball bouncing", ball_scene(),
                           {"contact.stiffness", "contact.damping", "contact.friction", "link.ball.mass"}, 100, 1e-4,
                           1e-5});
  NEURALSIM_SKIP_WITHOUT_SHARED("models/laikago/laikago_toes_zup.urdf");
  const Scene laikago = laikago_scene("hunt_crossley");
  expect_contact_gradient({"laikago standing", laikago,
                           {"link.chassis.mass", "contact.stiffness", "contact.damping", "contact.friction",
                            "joint." + laikago.model.joints[2].name + ".damping"},
                           100, 1e-4, 1e-6});
}

// ---------------------------------------------------------------- PGS node

struct PgsProblem {
  Eigen::MatrixXd A;
  Eigen::VectorXd r, mu;
  int nc = 0;
  double cfm = 1e-6;
};

// Contacts of three kinds: r's normal rows make contact c separating
// (r_n > 0), pressed and sticking (small tangential drive) or pressed and
// sliding (large tangential drive). A = J M⁻¹ Jᵀ of a random SPD M.
PgsProblem pgs_problem(std::uint32_t seed, int nc) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  PgsProblem p;
  p.nc = nc;
  const int m = 3 * nc, n = m + 3;
  Eigen::MatrixXd B(n, n), Jc(m, n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) B(i, j) = u(rng);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) Jc(i, j) = u(rng);
  const Eigen::MatrixXd Minv = (B * B.transpose() + n * Eigen::MatrixXd::Identity(n, n)).inverse();
  p.A = Jc * Minv * Jc.transpose();
  p.r.resize(m);
  p.mu = Eigen::VectorXd::Constant(nc, 0.6);
  for (int c = 0; c < nc; ++c) {
    const int kind = c % 3;  // 0 separating, 1 sticking, 2 sliding
    p.r[3 * c] = kind == 0 ? 0.5 : -1.0 - 0.3 * u(rng);
    const double drive = kind == 2 ? 3.0 : 0.02;
    p.r[3 * c + 1] = drive * u(rng);
    p.r[3 * c + 2] = drive * u(rng);
  }
  return p;
}

// The gradient of Σ c_i λ_i w.r.t. (A's upper triangle, r, μ, cfm), in
// PgsNode's order: through the taped solve (Rev, `iterations` sweeps,
// tolerance 0) or through PgsNode's implicit differentiation.
Eigen::VectorXd pgs_gradient(const PgsProblem& p, FrictionCone cone, int iterations, const Eigen::VectorXd& c,
                             bool implicit, Eigen::VectorXd* lambda_out = nullptr) {
  Tape tape;
  const int m = 3 * p.nc;
  MatX<Rev> A(m, m);
  std::vector<Rev> upper;
  for (int i = 0; i < m; ++i)
    for (int j = i; j < m; ++j) {
      upper.push_back(tape.variable(p.A(i, j)));
      A(i, j) = A(j, i) = upper.back();
    }
  VecX<Rev> r(m), mu(p.nc), lambda = VecX<Rev>::Zero(m);
  for (int i = 0; i < m; ++i) r[i] = tape.variable(p.r[i]);
  for (int i = 0; i < p.nc; ++i) mu[i] = tape.variable(p.mu[i]);
  const Rev cfm = tape.variable(p.cfm);
  PgsOptions o;
  o.max_iterations = iterations;
  o.tolerance = 0;
  PgsNode node(p.nc);  // the tape calls back into it in reverse(): it outlives the solve
  if (implicit) {
    node.solve(tape, A, r, mu, p.nc, cfm, cone, o, lambda);
  } else {
    solve_pgs<Rev>(A, r, mu, p.nc, cfm, cone, o, lambda);
  }
  Rev L = 0.0;
  for (int i = 0; i < m; ++i) L += c[i] * lambda[i];
  tape.reverse(L);
  Eigen::VectorXd g(static_cast<Eigen::Index>(upper.size()) + m + p.nc + 1);
  int k = 0;
  for (const Rev& a : upper) g[k++] = tape.adjoint(a);
  for (int i = 0; i < m; ++i) g[k++] = tape.adjoint(r[i]);
  for (int i = 0; i < p.nc; ++i) g[k++] = tape.adjoint(mu[i]);
  g[k] = tape.adjoint(cfm);
  if (lambda_out)
    for (int i = 0; i < m; ++i) (*lambda_out)[i] = lambda[i].value();
  return g;
}

TEST(PgsNode, ImplicitGradientEqualsConvergedIterationsAndCentralDifferences) {
  for (FrictionCone cone : {FrictionCone::kPyramid, FrictionCone::kCone})
    for (std::uint32_t seed : {1u, 2u, 3u}) {
      const PgsProblem p = pgs_problem(seed, 6);
      const int m = 3 * p.nc;
      std::mt19937 rng(seed + 10);
      std::uniform_real_distribution<double> u(-1, 1);
      Eigen::VectorXd c(m);
      for (int i = 0; i < m; ++i) c[i] = u(rng);
      Eigen::VectorXd lambda(m);
      const Eigen::VectorXd taped = pgs_gradient(p, cone, 400, c, false, &lambda);
      const Eigen::VectorXd node = pgs_gradient(p, cone, 400, c, true);
      const double vs_taped = relative_error(node, taped);
      // The problem has contacts of every kind.
      int separating = 0, sticking = 0, sliding = 0;
      for (int k = 0; k < p.nc; ++k) {
        const double ln = lambda[3 * k], lt = std::hypot(lambda[3 * k + 1], lambda[3 * k + 2]);
        if (ln == 0)
          ++separating;
        else if (cone == FrictionCone::kCone ? lt < 0.999999 * p.mu[k] * ln
                                             : std::max(std::abs(lambda[3 * k + 1]), std::abs(lambda[3 * k + 2])) <
                                                   0.999999 * p.mu[k] * ln)
          ++sticking;
        else
          ++sliding;
      }
      EXPECT_GT(separating, 0);
      EXPECT_GT(sticking, 0);
      EXPECT_GT(sliding, 0);
      EXPECT_LT(vs_taped, 1e-8) << "seed " << seed << "\n node:  " << node.transpose() << "\n taped: "
                                << taped.transpose();
      // Central differences of the converged double solve, along r and μ.
      auto objective = [&](const PgsProblem& q) {
        VecX<double> l = VecX<double>::Zero(m);
        PgsOptions o;
        o.max_iterations = 400;
        o.tolerance = 0;
        solve_pgs<double>(q.A, q.r, q.mu, q.nc, q.cfm, cone, o, l);
        return c.dot(l);
      };
      const int off = m * (m + 1) / 2;
      Eigen::VectorXd fd(m + p.nc), ad = node.segment(off, m + p.nc);
      for (int i = 0; i < m + p.nc; ++i)
        fd[i] = testing::richardson_central_difference(
            [&](double d) {
              PgsProblem q = p;
              if (i < m)
                q.r[i] += d;
              else
                q.mu[i - m] += d;
              return objective(q);
            },
            1e-5);
      EXPECT_LT(relative_error(ad, fd), 1e-6) << "seed " << seed << "\n node: " << ad.transpose()
                                               << "\n fd:   " << fd.transpose();
      std::printf("[ pgs node ] %s seed %u: %d separating, %d sticking, %d sliding; vs taped %.1e, vs fd %.1e\n",
                  cone == FrictionCone::kCone ? "cone   " : "pyramid", seed, separating, sticking, sliding, vs_taped,
                  relative_error(ad, fd));
    }
}

// The impulse model through a whole rollout (contact.gradient: nodes):
// Laikago on its four toes under sinusoidal torques, a contact set PGS
// solves to convergence (A = J M⁻¹ Jᵀ has full rank). The implicit gradient
// does not move with the iteration limit once the solves have converged,
// equals the taped iterations' there, and matches central differences for
// a sliding ball (one contact; sliding on the cone boundary).
TEST(ContactNodes, ImpulseGradientIsIndependentOfTheIterationCount) {
  NEURALSIM_SKIP_WITHOUT_SHARED("models/laikago/laikago_toes_zup.urdf");
  Scene laikago = laikago_scene("impulse");
  laikago.q0[2] = 0.356162 - 1e-4;
  const Case c{"laikago impulse", laikago, {"link.chassis.mass", "contact.friction", "contact.erp"}, 30};
  auto gradient = [&](ContactGradient mode, int iterations, double tolerance) {
    Case k = c;
    k.scene.contact->pgs.max_iterations = iterations;
    k.scene.contact->pgs.tolerance = tolerance;
    HybridRollout sim(problem_of(k, mode));
    HybridRolloutGradient g;
    const std::vector<double> x0 = sim.parameters().initial_variables();
    sim.gradient(x0, k.scene.q0, k.scene.qd0, testing::scene_controls(k.scene, k.steps), loss_of(k.scene), g);
    return flat(g);
  };
  const Eigen::VectorXd g1 = gradient(ContactGradient::kNodes, 100, 1e-10);
  const Eigen::VectorXd g2 = gradient(ContactGradient::kNodes, 400, 1e-14);
  const Eigen::VectorXd t2 = gradient(ContactGradient::kTaped, 400, 1e-14);
  const Eigen::VectorXd t0 = gradient(ContactGradient::kTaped, 5, 0);  // stopped early: another derivative
  EXPECT_LT(relative_error(g1, g2), 1e-7);
  EXPECT_LT(relative_error(g2, t2), 1e-8);
  EXPECT_GT(relative_error(t0, t2), 1e-6);
  std::printf("[ impulse nodes ] laikago: implicit (tol 1e-10) vs (tol 1e-14) %.1e, implicit vs taped (converged) "
              "%.1e; taped with 5 iterations vs converged %.1e\n",
              relative_error(g1, g2), relative_error(g2, t2), relative_error(t0, t2));

  Scene ball = ball_scene();
  ball.contact->model = ContactModelType::kImpulse;
  ball.contact->friction_cone = FrictionCone::kCone;
  ball.contact->margin = 0.01;
  ball.contact->pgs.tolerance = 1e-14;
  ball.q0[2] = 0.0499;  // resting on the ground, sliding and spinning
  ball.qd0 << 0.0, -3.0, 1.0, 1.0, 0.3, 0.0;
  expect_contact_gradient({"ball sliding (impulse)", ball, {"contact.friction", "contact.erp", "link.ball.mass"}, 60,
                           1e-4, 1e-7},
                          1e-8);
}

// `contact.gradient: implicit` in a config selects the implicit PGS node
// (what RolloutProblem::implicit_impulse does): the same gradient to the
// bit, whose tape does not grow with the iteration limit as the taped
// route's does; a force model refuses it, naming the key.
TEST(ContactNodes, ConfigKeyImplicitSelectsTheImplicitPgsNode) {
  Scene ball = ball_scene();
  const ContactSettings read = read_contact_settings(
      Config::parse("model: impulse\nfriction_cone: cone\nmargin: 0.01\ngradient: implicit\n", "contact.yaml"),
      ball.model);
  ASSERT_EQ(read.gradient, ContactGradient::kImplicit);
  ball.contact->model = ContactModelType::kImpulse;
  ball.contact->friction_cone = FrictionCone::kCone;
  ball.contact->margin = 0.01;
  ball.contact->pgs.tolerance = 1e-14;
  ball.q0[2] = 0.0499;
  ball.qd0 << 0.0, -3.0, 1.0, 1.0, 0.3, 0.0;
  const Case c{"ball sliding (impulse)", ball, {"contact.friction", "contact.erp", "link.ball.mass"}, 40};
  auto run = [&](ContactGradient mode, bool implicit_flag, int iterations, std::size_t* nodes) {
    RolloutProblem p = problem_of(c, mode);
    p.implicit_impulse = implicit_flag;
    p.contact->pgs.max_iterations = iterations;
    HybridRollout sim(p);
    HybridRolloutGradient g;
    sim.gradient(sim.parameters().initial_variables(), ball.q0, ball.qd0, testing::scene_controls(ball, c.steps),
                 loss_of(ball), g);
    *nodes = sim.driver().stats().peak_tape_nodes;
    return flat(g);
  };
  std::size_t by_key = 0, by_flag = 0, key_more = 0, taped = 0, taped_more = 0;
  const Eigen::VectorXd a = run(ContactGradient::kImplicit, false, 100, &by_key);
  const Eigen::VectorXd b = run(ContactGradient::kNodes, true, 100, &by_flag);
  EXPECT_EQ(a, b);
  run(ContactGradient::kImplicit, false, 400, &key_more);
  run(ContactGradient::kTaped, false, 100, &taped);
  run(ContactGradient::kTaped, false, 400, &taped_more);
  EXPECT_EQ(by_key, key_more);
  EXPECT_LT(by_key, taped);
  std::printf("[ contact.gradient ] tape nodes: implicit %zu (100 and 400 iterations), taped %zu / %zu\n", by_key,
              taped, taped_more);
  try {
    read_contact_settings(Config::parse("model: hunt_crossley\ngradient: implicit\n", "contact.yaml"), ball.model);
    ADD_FAILURE() << "implicit accepted for a force model";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("gradient"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("contact.yaml:2"), std::string::npos) << e.what();
  }
}

}  // namespace neuralsim::contact_nodes_test
