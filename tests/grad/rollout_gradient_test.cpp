// Reverse-mode gradients through whole rollouts with checkpointing
// (grad/rollout_gradient.hpp, parameters/hybrid_rollout.hpp), checked
// against mathematics, not against the code's own output:
//  * central finite differences of the double rollout (Richardson-
//    extrapolated: (4 D(h/2) - D(h)) / 3, truncation O(h⁴), h = 1e-4 scaled)
//    for network weights at every site kind, named physical parameters,
//    the initial state (raw quaternion coordinates included) and the
//    controls, with and without Hunt–Crossley / penalty contact, with
//    semi-implicit Euler and with RK4: relative 1e-6;
//  * forward mode (Jets, 4 lanes used) on a problem with 4 parameters
//    (3 physical and 1 weight, contact): 1e-10;
//  * the checkpoint interval (1, 7, √T, T) changes nothing but rounding;
//  * threads with their own systems give results identical to one thread.
// Relative errors are |g - g_fd| / max(|g_fd|, 1e-3 ‖g_fd‖∞): a component
// that is zero up to rounding (a weight with no effect) is compared at the
// scale of the gradient.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <thread>

#include "augment/augment_support.hpp"
#include "neuralsim/parameters/hybrid_rollout.hpp"
#include "support/files.hpp"
#include "support/allocation_counter.hpp"

namespace neuralsim::rollout_gradient_test {

using testing::Scene;
using testing::SiteCase;


RolloutProblem problem_of(const Scene& scene, std::vector<AugmentBlueprint> bps, const std::vector<std::string>& names,
                          Integrator integrator = Integrator::kSemiImplicitEuler) {
  RolloutProblem p;
  p.model = scene.model;
  p.step = scene.step;
  p.step.integrator = integrator;
  p.contact = scene.contact;
  p.augment = std::move(bps);
  p.physical = testing::scene_parameters(scene.model, scene.contact, names);
  return p;
}


// A loss with every kind of term: joint-space tracking with a horizon
// weight, a link position, a terminal cost. Targets: the initial state.
TrajectoryLoss loss_of(const Scene& s, int T, int body) {
  TrajectoryLoss L;
  const Eigen::VectorXd wq = Eigen::VectorXd::LinSpaced(s.model.nq, 1.0, 2.0);
  const Eigen::VectorXd wv = Eigen::VectorXd::LinSpaced(s.model.nv, 0.1, 0.3);
  L.stage = sum_of({state_tracking_loss(s.q0 * 0.9, s.qd0 * 1.1, wq, wv),
                    link_position_loss(body, Eigen::Vector3d(0.1, -0.2, 0.3), 0.7)});
  L.horizon_weight.resize(static_cast<std::size_t>(T));
  for (int k = 0; k < T; ++k) L.horizon_weight[static_cast<std::size_t>(k)] = 0.5 + double(k) / T;
  L.terminal = [](const LossState& st) {
    Rev r = 0.0;
    for (int i = 0; i < st.qd.size(); ++i) r += 0.3 * st.qd[i] * st.qd[i];
    return r + 2.0 * st.link_position(0)[0];
  };
  return L;
}


struct Comparison {
  double worst = 0;
  double scale = 0;
};

Comparison compare(const Eigen::VectorXd& g, const Eigen::VectorXd& fd) {
  Comparison c;
  c.scale = fd.lpNorm<Eigen::Infinity>();
  for (int i = 0; i < g.size(); ++i)
    c.worst = std::max(c.worst, std::abs(g[i] - fd[i]) / std::max(std::abs(fd[i]), 1e-3 * c.scale));
  return c;
}

struct Check {
  std::string label;
  Scene scene;
  RolloutProblem problem;
  int steps;
  int body;  // for the link-position term
  // Difference steps (Richardson: error O(h⁴) + rounding ~1e-16·|L|/h) for
  // parameters and controls (relative to max(1, |x|)), and for the state.
  // Contact scenes start 0.2 mm deep: state steps stay well below that.
  double h_param = 3e-3, h_state = 1e-4;
  double h_control = 0;  // 0: h_param
};

// FD of every x (physical + weights), every q0 and q̇0 entry and the
// controls of a few steps; asserts 1e-6 and prints the worst errors.
void expect_matches_finite_differences(const Check& c, int checkpoint_interval = 0) {
  HybridRollout sim(c.problem);
  const std::vector<double> x0 = sim.parameters().initial_variables();
  const Eigen::MatrixXd U = testing::scene_controls(c.scene, c.steps);
  const TrajectoryLoss loss = loss_of(c.scene, c.steps, c.body);
  HybridRolloutGradient g;
  const double L = sim.gradient(x0, c.scene.q0, c.scene.qd0, U, loss, g, checkpoint_interval);
  const double L_value = sim.value(x0, c.scene.q0, c.scene.qd0, U, loss);
  EXPECT_NEAR(L, L_value, 1e-12 * std::abs(L_value)) << c.label;

  // Physical parameters are stepped relative to their value (a damping of
  // 1e-3 is not stepped by 3e-3), weights relative to max(1, |w|).
  const int np = sim.parameters().physical().size();
  auto scale_of = [&](std::size_t i) {
    return static_cast<int>(i) < np && x0[i] != 0.0 ? std::abs(x0[i]) : std::max(1.0, std::abs(x0[i]));
  };
  Eigen::VectorXd fx(static_cast<Eigen::Index>(x0.size()));
  for (std::size_t i = 0; i < x0.size(); ++i)
    fx[static_cast<Eigen::Index>(i)] = testing::richardson_central_difference(
        [&](double d) {
          std::vector<double> x = x0;
          x[i] += d;
          return sim.value(x, c.scene.q0, c.scene.qd0, U, loss);
        },
        c.h_param * scale_of(i));
  Eigen::VectorXd fs(c.scene.q0.size() + c.scene.qd0.size());
  for (int i = 0; i < fs.size(); ++i)
    fs[i] = testing::richardson_central_difference(
        [&](double d) {
          Eigen::VectorXd q = c.scene.q0, qd = c.scene.qd0;
          if (i < q.size())
            q[i] += d;
          else
            qd[i - q.size()] += d;
          return sim.value(x0, q, qd, U, loss);
        },
        c.h_state);
  Eigen::VectorXd gs(fs.size());
  gs << g.q0, g.qd0;
  const int nv = c.scene.model.nv;
  const std::vector<int> steps = {0, c.steps / 3, c.steps - 1};
  Eigen::VectorXd fu(nv * 3), gu(nv * 3);
  for (int s = 0; s < 3; ++s)
    for (int i = 0; i < nv; ++i) {
      gu[s * nv + i] = g.controls(i, steps[s]);
      fu[s * nv + i] = testing::richardson_central_difference(
          [&](double d) {
            Eigen::MatrixXd V = U;
            V(i, steps[s]) += d;
            return sim.value(x0, c.scene.q0, c.scene.qd0, V, loss);
          },
          c.h_control > 0 ? c.h_control : c.h_param);
    }
  const Comparison cx = compare(g.x, fx), cs = compare(gs, fs), cu = compare(gu, fu);
  EXPECT_LT(cx.worst, 1e-6) << c.label << " parameters\n rev: " << g.x.transpose() << "\n fd:  " << fx.transpose();
  EXPECT_LT(cs.worst, 1e-6) << c.label << " initial state\n rev: " << gs.transpose() << "\n fd:  " << fs.transpose();
  EXPECT_LT(cu.worst, 1e-6) << c.label << " controls\n rev: " << gu.transpose() << "\n fd:  " << fu.transpose();
  if (fx.size() > 0) {
    EXPECT_GT(cx.scale, 0.0) << c.label;
  }
  EXPECT_GT(cs.scale, 0.0) << c.label;
  std::printf("[ bptt vs fd ] %-34s %3zu params (|g| %.1e) %.1e | state (|g| %.1e) %.1e | controls (|g| %.1e) %.1e "
              "| k = %d, %d segments\n",
              c.label.c_str(), x0.size(), cx.scale, cx.worst, cs.scale, cs.worst, cu.scale, cu.worst,
              sim.driver().stats().checkpoint_interval, sim.driver().stats().checkpoints);
}

// Every augmentation site kind (small networks, one hidden layer of 2): all
// weights, the initial state and controls; the contact sites with
// Hunt–Crossley contact; both integrators.
TEST(RolloutGradient, MatchesFiniteDifferencesForWeightsAtEverySiteKind) {
  for (Integrator integ : {Integrator::kSemiImplicitEuler, Integrator::kRK4})
    for (const SiteCase& c : testing::every_site_kind({2}, AugmentMode::kResidual)) {
      const int body = c.scene.model.num_bodies() - 1;
      expect_matches_finite_differences({c.label + (integ == Integrator::kRK4 ? " [rk4]" : " [euler]"), c.scene,
                                         problem_of(c.scene, c.blueprints, {}, integ), 40, body, 3e-3,
                                         c.scene.contact ? 1e-6 : 1e-4});
    }
}

// Named physical parameters (model and contact), both integrators, with and
// without contact, with networks in the loop.
TEST(RolloutGradient, MatchesFiniteDifferencesForPhysicalParameters) {
  const Scene pend = testing::pendulum_scene(), swim = testing::swimmer_scene(), box = testing::box_scene();
  const std::vector<std::string> pend_names = {"joint.joint1.damping",       "joint.joint2.friction",
                                               "joint.joint1.spring.stiffness", "link.link1.mass",
                                               "link.link2.com.x",           "link.link2.inertia.yy",
                                               "joint.joint2.origin.z",      "gravity.z"};
  std::vector<SiteCase> sites = testing::every_site_kind({3}, AugmentMode::kResidual);
  auto site = [&](const std::string& label) {
    for (const SiteCase& c : sites)
      if (c.label == label) return c.blueprints;
    throw InvalidArgument("no site " + label);
  };
  const std::vector<std::string> box_names = {"contact.stiffness", "contact.damping", "contact.friction",
                                              "contact.friction_velocity", "link.box.mass", "link.box.inertia.zz"};
  // Penalty k·δ² at the box's 0.2 mm depth: k ≈ mg / (4 δ²); little damping,
  // so the force never reaches its clamp at zero (a kink) in this rollout.
  Scene penalty = box;
  penalty.contact->model = ContactModelType::kPenalty;
  penalty.contact->parameters.stiffness = 7e7;
  penalty.contact->parameters.damping = 1e4;
  // A whole log-Cholesky block (ten coordinates of segment 2's inertia) and a
  // link length (it moves the child's joint origin).
  std::vector<std::string> swim_lc;
  for (const std::string& c : log_cholesky_coordinate_names()) swim_lc.push_back("link.segment2.log_cholesky." + c);
  swim_lc.push_back("link.segment1.length");
  // Contact: state steps well below the initial depth.
  const double hc = 1e-3, hs = 1e-6;
  for (Integrator integ : {Integrator::kSemiImplicitEuler, Integrator::kRK4}) {
    const std::string in = integ == Integrator::kRK4 ? " [rk4]" : " [euler]";
    expect_matches_finite_differences(
        {"pendulum" + in, pend, problem_of(pend, {}, pend_names, integ), 60, 1});
    expect_matches_finite_differences(
        {"pendulum+torque net" + in, pend, problem_of(pend, site("joint.torque"), pend_names, integ), 60, 1});
    expect_matches_finite_differences(
        {"swimmer+drag nets" + in, swim,
         problem_of(swim, site("link.drag_force (world)"), {"link.segment0.mass", "joint.joint1.damping"}, integ), 60,
         4});
    expect_matches_finite_differences(
        {"swimmer log-Cholesky + length" + in, swim, problem_of(swim, {}, swim_lc, integ), 60, 4});
    expect_matches_finite_differences(
        {"box hunt_crossley" + in, box, problem_of(box, {}, box_names, integ), 60, 0, hc, hs});
    expect_matches_finite_differences(
        {"box hunt_crossley+normal net" + in, box, problem_of(box, site("contact.normal_force"), box_names, integ), 60,
         0, hc, hs});
    expect_matches_finite_differences(
        {"box penalty" + in, penalty, problem_of(penalty, {}, box_names, integ), 60, 0, hc, hs});
  }
}


// A floating base on four Hunt–Crossley toe contacts: Laikago standing at
// its static depth, 40 steps, joint torques as controls.
TEST(RolloutGradient, MatchesFiniteDifferencesOnLaikagoWithHuntCrossley) {
  NEURALSIM_SKIP_WITHOUT_SHARED("models/laikago/laikago_toes_zup.urdf");
  Scene s = testing::laikago_standing_scene("hunt_crossley", 7e-3);
  // Softer than the config's 1e7 (whose rollouts are too stiff for finite
  // differences to resolve at 1e-6): k δ^1.5 = mg / 4 at δ ≈ 7 mm.
  s.contact->parameters.stiffness = 1e5;
  s.contact->parameters.damping = 1e3;
  const std::vector<std::string> names = {"link.chassis.mass", "contact.stiffness", "contact.damping",
                                          "contact.friction", "joint." + s.model.joints[2].name + ".damping"};
  // Steps: parameters 1e-4 (relative), state 1e-6, torques 1e-2 N·m (the
  // rollout's own rounding, amplified by the contact, dominates below that).
  for (Integrator integ : {Integrator::kSemiImplicitEuler, Integrator::kRK4}) {
    const std::string label = std::string("laikago hunt_crossley") + (integ == Integrator::kRK4 ? " [rk4]" : " [euler]");
    expect_matches_finite_differences({label, s, problem_of(s, {}, names, integ), 40, 4, 1e-4, 1e-6, 1e-2});
  }
}

template <class J>
J jet_loss(const RolloutProblem& p, const HybridParameters& hp, const std::vector<J>& x, const Scene& s, int T,
           int body, VecX<J> q, VecX<J> qd);  // the forward-mode oracle, below

// Impulse contact (a velocity hook: aba<Rev> and the projected Gauss–Seidel
// solve on the tape): the box sliding on the ground under a network force,
// and Laikago standing on its four toes.
TEST(RolloutGradient, MatchesFiniteDifferencesThroughImpulseContact) {
  // A fixed number of PGS iterations (tolerance 0): the stopping rule
  // "max |Δλ| <= tol·max |λ|" is a branch on values, so with a tolerance the
  // rollout itself is piecewise (its iteration count jumps under the finite
  // differences' steps, ~1e-5 relative here); the tape differentiates the
  // iterations that ran, as forward-mode Jets would.
  Scene box = testing::box_scene();
  box.contact->model = ContactModelType::kImpulse;
  box.contact->pgs.tolerance = 0;
  box.contact->pgs.max_iterations = 30;
  const AugmentBlueprint push =
      testing::make_blueprint(box.model, "push", testing::link_site(box.model, "box", SiteQuantity::kLinkForce),
                              AugmentMode::kResidual, {"link.box.linear_velocity"}, {2}, 0.5, 21);
  const std::vector<std::string> names = {"contact.friction", "contact.erp", "link.box.mass", "link.box.inertia.zz"};
  expect_matches_finite_differences(
      {"box impulse + force net [euler]", box, problem_of(box, {push}, names), 60, 0, 1e-3, 1e-6});

  NEURALSIM_SKIP_WITHOUT_SHARED("models/laikago/laikago_toes_zup.urdf");
  Scene s = testing::laikago_standing_scene("impulse", 1e-4);
  s.contact->pgs.tolerance = 0;
  s.contact->pgs.max_iterations = 30;
  // Four toes sticking: finite differences of the state and the torques
  // lose digits to the stiff contact (4e-6 at best); forward-mode Jets give
  // the derivative of the same iterations exactly.
  const std::vector<std::string> lnames = {"link.chassis.mass", "contact.friction",
                                           "joint." + s.model.joints[2].name + ".damping"};
  RolloutProblem p = problem_of(s, {}, lnames);
  p.contact->pgs.warm_start = false;  // as HybridRollout runs it (jet_loss uses p.contact as given)
  // The Jets differentiate the 30 iterations that ran: compare the taped
  // route (contact.gradient: taped); the implicit one differentiates the
  // converged solution (contact_nodes_test.cpp).
  p.contact->gradient = ContactGradient::kTaped;
  HybridRollout sim(p);
  const int T = 30;
  const std::vector<double> x0 = sim.parameters().initial_variables();
  HybridRolloutGradient g;
  sim.gradient(x0, s.q0, s.qd0, testing::scene_controls(s, T), loss_of(s, T, 4), g);
  using J = Jet8;  // the library's instantiated width
  std::vector<J> xj(x0.size());
  for (std::size_t i = 0; i < x0.size(); ++i) xj[i] = J(x0[i], static_cast<int>(i));
  VecX<J> qj = s.q0.cast<J>(), qdj = s.qd0.cast<J>();
  const int v_seeded = 8;  // a knee velocity
  qdj[v_seeded].v[3] = 1.0;
  const J L = jet_loss<J>(p, sim.parameters(), xj, s, T, 4, qj, qdj);
  EXPECT_NEAR(L.a, g.loss, 1e-12 * std::abs(L.a));
  const double rev[4] = {g.x[0], g.x[1], g.x[2], g.qd0[v_seeded]};
  double worst = 0;
  for (int k = 0; k < 4; ++k) {
    EXPECT_NEAR(rev[k], L.v[k], 1e-10 * std::abs(L.v[k])) << "direction " << k;
    worst = std::max(worst, std::abs(rev[k] - L.v[k]) / std::abs(L.v[k]));
  }
  std::printf("[ bptt vs jet ] laikago impulse, %d steps: 3 parameters + q̇0[%d], max rel diff %.2e\n", T, v_seeded,
              worst);
}

// A hook with state across steps (the PGS warm start, which HybridRollout
// turns off) makes a replayed segment leave the double trajectory: the
// driver refuses rather than return the gradient of another trajectory.
TEST(RolloutGradient, RefusesAReplayThatLeavesTheRollout) {
  const Scene box = testing::box_scene();
  ContactSettings cs = *box.contact;
  cs.model = ContactModelType::kImpulse;
  cs.pgs.warm_start = true;
  cs.pgs.max_iterations = 5;  // not converged: the warm start changes the result
  Stepper<double> fwd(box.model, box.step);
  const Model<Rev> mr = box.model.cast<Rev>();
  Stepper<Rev> rev(mr, box.step);
  auto cd = install_contact<double>(cs, box.model, fwd);
  auto cr = install_contact<Rev>(cs, box.model, rev);
  Tape tape;
  RolloutGradient driver(fwd, rev, tape);
  const int T = 60;
  RolloutGradientResult out;
  EXPECT_THROW(driver.gradient(box.q0, box.qd0, testing::scene_controls(box, T), loss_of(box, T, 0), out), NumericalError);
  cs.pgs.warm_start = false;  // as HybridRollout runs it
  Stepper<double> fwd2(box.model, box.step);
  Stepper<Rev> rev2(mr, box.step);
  auto cd2 = install_contact<double>(cs, box.model, fwd2);
  auto cr2 = install_contact<Rev>(cs, box.model, rev2);
  Tape tape2;
  RolloutGradient driver2(fwd2, rev2, tape2);
  EXPECT_NO_THROW(driver2.gradient(box.q0, box.qd0, testing::scene_controls(box, T), loss_of(box, T, 0), out));
}

// Motor rotors (aba<Rev> on the tape: the AbaNode's adjoint has no rotor
// terms): the geared two-link arm, its rotor inertias and gear ratios.
TEST(RolloutGradient, MatchesFiniteDifferencesWithMotorRotors) {
  Scene arm;
  arm.name = "geared_arm";
  arm.model = load_yaml_model(testing::source_path("configs/models/geared_arm.yaml"));
  arm.step.dt = 0.002;
  arm.q0 = Eigen::Vector2d(0.3, -0.4);
  arm.qd0 = Eigen::Vector2d(0.5, -1.0);
  arm.amplitude = Eigen::Vector2d(0.4, 0.2);
  arm.frequency = Eigen::Vector2d(2.0, 3.0);
  arm.phase = Eigen::Vector2d(0.0, 1.0);
  const std::vector<std::string> names = {"joint.shoulder.rotor.inertia", "joint.elbow.rotor.inertia",
                                          "joint.elbow.gear_ratio", "link.link2.mass", "joint.elbow.damping"};
  for (Integrator integ : {Integrator::kSemiImplicitEuler, Integrator::kRK4})
    expect_matches_finite_differences(
        {std::string("geared arm rotors") + (integ == Integrator::kRK4 ? " [rk4]" : " [euler]"), arm,
         problem_of(arm, {}, names, integ), 60, 1});
}

// Initial velocities as named parameters (initial.qd.*) and the checkpoint
// interval: 1 step per segment, 7, √T (default) and the whole rollout.
TEST(RolloutGradient, CheckpointIntervalChangesOnlyRounding) {
  const Scene box = testing::box_scene();
  RolloutProblem p = problem_of(box, {}, {"contact.stiffness", "link.box.mass", "initial.qd.box_free.vx"});
  {
    std::vector<EstimatedParameter> ps = p.physical.all();
    ps[2].initial = box.qd0[3];
    p.physical = ParameterSet(ps);
  }
  const Check c{"box, initial.qd", box, p, 50, 0, 1e-3, 1e-6};
  for (int k : {1, 7, 0, 50}) expect_matches_finite_differences(c, k);
  HybridRollout sim(p);
  const std::vector<double> x0 = sim.parameters().initial_variables();
  const Eigen::MatrixXd U = testing::scene_controls(box, 50);
  const TrajectoryLoss loss = loss_of(box, 50, 0);
  HybridRolloutGradient ref, g;
  sim.gradient(x0, box.q0, box.qd0, U, loss, ref, 50);
  for (int k : {1, 7, 0}) {
    sim.gradient(x0, box.q0, box.qd0, U, loss, g, k);
    const double s = ref.x.lpNorm<Eigen::Infinity>();
    EXPECT_LT((g.x - ref.x).lpNorm<Eigen::Infinity>(), 1e-12 * s) << "k = " << k;
    EXPECT_LT((g.qd0 - ref.qd0).lpNorm<Eigen::Infinity>(), 1e-12 * ref.qd0.lpNorm<Eigen::Infinity>()) << k;
    EXPECT_LT((g.controls - ref.controls).lpNorm<Eigen::Infinity>(),
              1e-12 * ref.controls.lpNorm<Eigen::Infinity>()) << k;
  }
}

// ---- forward mode oracle: the same rollout and loss in ceres::Jet ----
template <class J>
J jet_loss(const RolloutProblem& p, const HybridParameters& hp, const std::vector<J>& x, const Scene& s, int T,
           int body, VecX<J> q, VecX<J> qd) {
  Model<J> m = p.model.template cast<J>();
  Stepper<J> st(m, p.step);
  std::shared_ptr<ContactSystem<J>> contact;
  if (p.contact) contact = install_contact<J>(*p.contact, p.model, st);
  std::shared_ptr<AugmentedDynamics<J>> aug;
  if (!p.augment.empty()) aug = install_augmentation<J>(p.augment, p.model, st, contact.get());
  VecX<J> u = VecX<J>::Zero(m.nv);
  hp.apply<J>(x.data(), &m, contact ? &contact->parameters() : nullptr, &qd, aug.get());
  Data<J> d(m);
  const Eigen::VectorXd wq = Eigen::VectorXd::LinSpaced(m.nq, 1.0, 2.0);
  const Eigen::VectorXd wv = Eigen::VectorXd::LinSpaced(m.nv, 0.1, 0.3);
  const Eigen::Vector3d target(0.1, -0.2, 0.3);
  J L(0.0);
  for (int k = 0; k < T; ++k) {
    for (int i = 0; i < m.nv; ++i) u[i] = J(s.control(i, k * s.step.dt));
    st.step(q, qd, u, k * s.step.dt);
    forward_kinematics(m, d, q, qd);
    J stage(0.0);
    for (int i = 0; i < m.nq; ++i) stage += 0.5 * wq[i] * (q[i] - 0.9 * s.q0[i]) * (q[i] - 0.9 * s.q0[i]);
    for (int i = 0; i < m.nv; ++i) stage += 0.5 * wv[i] * (qd[i] - 1.1 * s.qd0[i]) * (qd[i] - 1.1 * s.qd0[i]);
    for (int c = 0; c < 3; ++c) stage += 0.5 * 0.7 * (d.X_world[body].r[c] - target[c]) * (d.X_world[body].r[c] - target[c]);
    L += (0.5 + double(k) / T) * stage;
  }
  for (int i = 0; i < m.nv; ++i) L += 0.3 * qd[i] * qd[i];
  return L + 2.0 * d.X_world[0].r[0];
}
template <class J>
J jet_loss(const RolloutProblem& p, const HybridParameters& hp, const std::vector<J>& x, const Scene& s, int T,
           int body) {
  return jet_loss<J>(p, hp, x, s, T, body, s.q0.template cast<J>(), s.qd0.template cast<J>());
}

TEST(RolloutGradient, EqualsForwardModeJetsOnFourParameters) {
  const Scene box = testing::box_scene();
  std::vector<SiteCase> sites = testing::every_site_kind({3}, AugmentMode::kResidual);
  std::vector<AugmentBlueprint> bps;
  for (const SiteCase& c : sites)
    if (c.label == "contact.normal_force") bps = c.blueprints;
  const int T = 120;
  for (Integrator integ : {Integrator::kSemiImplicitEuler, Integrator::kRK4}) {
    const RolloutProblem p = problem_of(box, bps, {"contact.stiffness", "contact.friction", "link.box.mass"}, integ);
    HybridRollout sim(p);
    const std::vector<double> x0 = sim.parameters().initial_variables();
    ASSERT_EQ(sim.parameters().num_weights() > 3, true);
    const std::vector<int> chosen = {0, 1, 2, 3 + 4};  // 3 physical, one first-layer weight
    HybridRolloutGradient g;
    sim.gradient(x0, box.q0, box.qd0, testing::scene_controls(box, T), loss_of(box, T, 0), g);
    using J = Jet8;  // the library's instantiated width
    std::vector<J> xj(x0.size());
    for (std::size_t i = 0; i < x0.size(); ++i) xj[i] = J(x0[i]);
    for (int k = 0; k < 4; ++k) xj[static_cast<std::size_t>(chosen[k])].v[k] = 1.0;
    const J L = jet_loss<J>(p, sim.parameters(), xj, box, T, 0);
    EXPECT_NEAR(L.a, g.loss, 1e-12 * std::abs(L.a));
    double worst = 0;
    for (int k = 0; k < 4; ++k) {
      const double rev = g.x[chosen[k]], jet = L.v[k];
      EXPECT_NEAR(rev, jet, 1e-10 * std::abs(jet)) << "parameter " << chosen[k];
      worst = std::max(worst, std::abs(rev - jet) / std::abs(jet));
    }
    std::printf("[ bptt vs jet ] box hunt_crossley + normal net, %s, %d steps: 4 parameters, max rel diff %.2e\n",
                integrator_name(integ), T, worst);
  }
}

// Several threads, each with its own system, give bit-identical results to
// one thread.
TEST(RolloutGradient, ThreadsWithTheirOwnSystemsMatchOneThread) {
  const Scene swim = testing::swimmer_scene();
  std::vector<SiteCase> sites = testing::every_site_kind({4}, AugmentMode::kResidual);
  std::vector<AugmentBlueprint> bps;
  for (const SiteCase& c : sites)
    if (c.label == "link.drag_force (world)") bps = c.blueprints;
  const RolloutProblem p = problem_of(swim, bps, {"link.segment0.mass", "joint.joint1.damping"});
  const int T = 200;
  auto run = [&](HybridRolloutGradient& g) {
    HybridRollout sim(p);
    sim.gradient(sim.parameters().initial_variables(), swim.q0, swim.qd0, testing::scene_controls(swim, T), loss_of(swim, T, 4), g);
  };
  HybridRolloutGradient one;
  run(one);
  std::vector<HybridRolloutGradient> many(4);
  std::vector<std::thread> threads;
  for (auto& g : many) threads.emplace_back([&run, &g] { run(g); });
  for (auto& t : threads) t.join();
  for (const auto& g : many) {
    EXPECT_EQ(g.loss, one.loss);
    EXPECT_TRUE(g.x == one.x);
    EXPECT_TRUE(g.q0 == one.q0 && g.qd0 == one.qd0);
    EXPECT_TRUE(g.controls == one.controls);
  }
}

// Once warmed up, the number of heap allocations of a gradient does not
// depend on the number of steps (none per step).
TEST(RolloutGradient, AllocatesNothingPerStep) {
  if (!testing::AllocationCounter::available()) GTEST_SKIP() << "allocation counting unavailable";
  const Scene swim = testing::swimmer_scene();
  std::vector<SiteCase> sites = testing::every_site_kind({4}, AugmentMode::kResidual);
  std::vector<AugmentBlueprint> bps;
  for (const SiteCase& c : sites)
    if (c.label == "link.drag_force (world)") bps = c.blueprints;
  HybridRollout sim(problem_of(swim, bps, {"link.segment0.mass"}));
  const std::vector<double> x0 = sim.parameters().initial_variables();
  const Eigen::MatrixXd U = testing::scene_controls(swim, 400);
  TrajectoryLoss loss;
  Eigen::VectorXd gq = Eigen::VectorXd::Zero(swim.model.nq), gv = Eigen::VectorXd::Zero(swim.model.nv);
  gq[0] = 1.0;
  gv[1] = 1.0;
  loss.terminal = state_gradient_loss(gq, gv);  // L = q_T[0] + q̇_T[1]
  HybridRolloutGradient g;
  long counts[2];
  for (int r = 0; r < 2; ++r) {
    const Eigen::MatrixXd V = U.leftCols(r == 0 ? 200 : 400);
    sim.gradient(x0, swim.q0, swim.qd0, V, loss, g, 20);  // warm-up at this size: tape, checkpoints, results
    testing::AllocationCounter counter;
    sim.gradient(x0, swim.q0, swim.qd0, V, loss, g, 20);
    counts[r] = counter.count();
  }
  EXPECT_EQ(counts[0], counts[1]) << "allocations for 200 and 400 steps";
  std::printf("[ bptt allocations ] %ld per gradient call of 200 steps, %ld of 400 steps\n", counts[0], counts[1]);
}

}  // namespace neuralsim::rollout_gradient_test
