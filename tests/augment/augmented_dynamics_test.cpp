// Neural augmentation sites (augment/): physics and derivatives.
//  * a network whose output is multiplied by zero (output scale 0, or a zero
//    last layer) leaves every site kind bit-identical to the analytical
//    model (residual and scale modes);
//  * a replace site with a network fitted to the viscous law -b·q̇
//    reproduces the analytical rollout within the first-order bound that the
//    fit error and the rollout's responses to torque pulses give;
//  * forward mode (Jet) w.r.t. weights agrees with (fourth-order) central
//    differences at
//    every site kind, and the reverse-mode tape (one external node per
//    network evaluation, VJP = the MLP's backward pass) agrees with forward
//    mode for all weights;
//  * parallel threads, each with its own augmented model, reproduce one
//    thread bit for bit; a step allocates nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <thread>

#include "augment/augment_support.hpp"
#include "neuralsim/augment/augmented_dynamics.hpp"
#include "neuralsim/parameters/hybrid_parameters.hpp"
#include "support/allocation_counter.hpp"
#include "support/dense_reference.hpp"

namespace neuralsim {
namespace {

using testing::bit_identical;
using testing::every_site_kind;
using testing::Scene;
using testing::Sim;
using testing::SiteCase;

constexpr int kSteps = 300;

std::vector<double> reference_rollout(const Scene& scene, int steps) {
  Sim<double> sim(scene, nullptr);
  std::vector<double> out;
  sim.run(steps, &out);
  return out;
}

std::vector<double> augmented_rollout(const Scene& scene, const std::vector<AugmentBlueprint>& bps, int steps) {
  Sim<double> sim(scene, &bps);
  std::vector<double> out;
  sim.run(steps, &out);
  return out;
}

// Output multiplied by zero at every site kind: by the output scale and by
// a zero last layer; residual and scale modes; semi-implicit Euler and RK4.
TEST(AugmentZeroNetwork, EverySiteKindIsBitIdenticalToTheAnalyticalModel) {
  int checked = 0;
  for (AugmentMode mode : {AugmentMode::kResidual, AugmentMode::kScale}) {
    for (SiteCase& c : every_site_kind({8, 8}, mode)) {
      for (Integrator integ : {Integrator::kSemiImplicitEuler, Integrator::kRK4}) {
        Scene scene = c.scene;
        scene.step.integrator = integ;
        const std::vector<double> ref = reference_rollout(scene, kSteps);
        for (int variant = 0; variant < 2; ++variant) {
          std::vector<AugmentBlueprint> bps = c.blueprints;
          for (AugmentBlueprint& bp : bps) {
            nn::Mlp& net = bp.network;
            if (variant == 0) {
              net.set_output_scaling(Eigen::VectorXd::Zero(net.output_dim()), Eigen::VectorXd::Zero(net.output_dim()));
            } else {
              std::vector<double> w(static_cast<size_t>(net.num_parameters()));
              net.get_parameters(w.data());
              const nn::Index last = net.num_layers() - 1;
              std::fill(w.begin() + net.weight_offset(last), w.end(), 0.0);
              net.set_parameters(w.data());
            }
          }
          const std::vector<double> aug = augmented_rollout(scene, bps, kSteps);
          EXPECT_TRUE(bit_identical(ref, aug))
              << c.label << ", mode " << augment_mode_name(mode) << ", " << integrator_name(integ)
              << (variant == 0 ? ", output scale 0" : ", zero last layer");
          ++checked;
        }
        // The same networks with their output switched on do change the motion.
        const std::vector<double> live = augmented_rollout(scene, c.blueprints, kSteps);
        EXPECT_FALSE(bit_identical(ref, live)) << c.label << " (live network)";
      }
    }
  }
  EXPECT_EQ(checked, 2 * 17 * 2 * 2);  // modes × site cases × integrators × variants
}

// ---------------------------------------------------------------------------
// Replace the passive torque of both pendulum joints by a network fitted to
// the joint's viscous law τ = -b·q̇ over the velocity range of the motion.

// A tiny 1 -> 8 tanh -> 1 network (25 weights) fitted to τ = -b·q̇ on |q̇| <= v_max:
// the hidden layer is a seeded random feature map (input normalized by
// v_max), the last layer the linear least-squares solution on 400 samples
// of the law (exact for that layer). Returns it and the largest fit error
// on a 10x finer grid.
nn::Mlp fit_viscous_law(double b, double v_max, double* max_error) {
  const int H = 8;
  nn::Mlp net(1, std::vector<nn::Index>{H}, 1, nn::Activation::kTanh);
  std::mt19937_64 rng(3);
  std::vector<double> w(static_cast<size_t>(net.num_parameters()), 0.0);
  for (int i = 0; i < H; ++i) {
    w[net.weight_offset(0) + i] = 0.5 + 1.5 * nn::random::uniform01(rng);
    w[net.bias_offset(0) + i] = 2.0 * (nn::random::uniform01(rng) - 0.5);
  }
  net.set_parameters(w.data());
  net.set_input_normalization(Eigen::VectorXd::Zero(1), Eigen::VectorXd::Constant(1, v_max));
  const int n = 400;
  Eigen::MatrixXd A(n, H + 1);
  Eigen::VectorXd y(n);
  nn::Workspace<double> ws(net);
  for (int k = 0; k < n; ++k) {
    const double v = -v_max + 2.0 * v_max * k / (n - 1);
    double out;
    net.forward(&v, &out, ws);  // fills the hidden activations
    for (int i = 0; i < H; ++i) A(k, i) = ws.activation_output(0)[i];
    A(k, H) = 1.0;
    y[k] = -b * v;
  }
  const Eigen::VectorXd c = testing::least_squares(A, y);
  for (int i = 0; i < H; ++i) w[net.weight_offset(1) + i] = c[i];
  w[net.bias_offset(1)] = c[H];
  net.set_parameters(w.data());
  *max_error = 0;
  for (int k = 0; k < 4001; ++k) {
    const double v = -v_max + 2.0 * v_max * k / 4000;
    double out;
    net.forward(&v, &out, ws);
    *max_error = std::max(*max_error, std::abs(out + b * v));
  }
  return net;
}

// The analytical pendulum rollout with a torque pulse of amplitude a on
// joint j during steps [k0, k1) (a = 0: the reference rollout).
std::vector<double> pulse_rollout(const Scene& scene, int steps, int joint, int k0, int k1, double a) {
  Stepper<double> stepper(scene.model, scene.step);
  Eigen::VectorXd q = scene.q0, qd = scene.qd0, u(scene.model.nv);
  std::vector<double> out;
  for (int k = 0; k < steps; ++k) {
    const double t = k * scene.step.dt;
    for (int i = 0; i < u.size(); ++i) u[i] = scene.control(i, t) + (i == joint && k >= k0 && k < k1 ? a : 0.0);
    stepper.step(q, qd, u, t);
    for (int i = 0; i < q.size(); ++i) out.push_back(q[i]);
    for (int i = 0; i < qd.size(); ++i) out.push_back(qd[i]);
  }
  return out;
}

TEST(AugmentReplace, FittedViscousDampingReproducesTheAnalyticalRollout) {
  Scene scene = testing::pendulum_scene();
  const double b = 0.3;
  for (Joint<double>& j : scene.model.joints) {
    j.dynamics = JointDynamics<double>();
    j.dynamics.damping = b;
  }
  const int steps = 3000;  // 3 s
  // Velocity range of the analytical motion, with a margin.
  double v_max = 0;
  {
    Sim<double> sim(scene, nullptr);
    for (int k = 0; k < steps; ++k) {
      sim.step();
      v_max = std::max(v_max, sim.qd().cwiseAbs().maxCoeff());
    }
  }
  v_max *= 1.5;
  double fit_error = 0;
  const nn::Mlp net = fit_viscous_law(b, v_max, &fit_error);
  std::vector<AugmentBlueprint> bps;
  for (const char* joint : {"joint1", "joint2"}) {
    AugmentBlueprint bp;
    bp.name = std::string("passive_") + joint;
    bp.site = testing::joint_site(scene.model, joint, SiteQuantity::kJointTorque);
    bp.mode = AugmentMode::kReplace;
    bp.inputs = {*find_augment_input(std::string("joint.") + joint + ".qd", scene.model, false)};
    bp.network = net;
    bps.push_back(bp);
  }
  const std::vector<double> ref = reference_rollout(scene, steps);
  const std::vector<double> aug = augmented_rollout(scene, bps, steps);
  // Tolerance, from first-order perturbation theory: the augmented model is
  // the analytical one plus a torque error δτ_j(t) with |δτ_j| <= ε (the
  // fit error) on both joints, so |δx_c(t)| <= ε Σ_{j,w} |r_{j,w,c}(t)| / a,
  // r_{j,w} the response to a torque pulse of amplitude a on joint j over
  // window w (the horizon in 30 windows of 0.1 s; δτ is smooth, so piecewise
  // constant per window to first order), per coordinate c and step. The
  // bound is taken ×1.5 (second-order terms) plus 1e-13 (rounding).
  const int windows = 30, per = steps / windows;
  const double a = 1e-3;
  std::vector<double> response(ref.size(), 0.0);  // Σ |r| / a
  for (int j = 0; j < 2; ++j)
    for (int w = 0; w < windows; ++w) {
      const std::vector<double> p = pulse_rollout(scene, steps, j, w * per, (w + 1) * per, a);
      for (size_t i = 0; i < ref.size(); ++i) response[i] += std::abs(p[i] - ref[i]) / a;
    }
  double err = 0, worst_ratio = 0, bound_max = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double e = std::abs(ref[i] - aug[i]);
    const double bound = 1.5 * fit_error * response[i] + 1e-13;
    EXPECT_LE(e, bound) << "state entry " << i % 4 << " at step " << i / 4;
    err = std::max(err, e);
    bound_max = std::max(bound_max, bound);
    worst_ratio = std::max(worst_ratio, e / bound);
  }
  std::printf("[ replace ] 1 -> 8 tanh -> 1 fit: max |net(q̇) + b q̇| = %.3g N·m over |q̇| <= %.3g rad/s (b = %g); "
              "3 s rollout: max state error %.3g, largest bound %.3g, worst error/bound %.2f\n",
              fit_error, v_max, b, err, bound_max, worst_ratio);
  EXPECT_LT(fit_error, 1e-2 * b * v_max) << "the fit is usable";
  EXPECT_GT(err, 0.0) << "the network is not the analytical law itself";
}

// ---------------------------------------------------------------------------
// Derivatives w.r.t. weights.

template <class S>
S rollout_loss(const Scene& scene, const std::vector<AugmentBlueprint>& bps, int steps,
               const std::function<void(AugmentedDynamics<S>&)>& setup) {
  Sim<S> sim(scene, &bps);
  setup(*sim.augmented());
  sim.run(steps);
  return testing::final_state_loss<S>(sim.q(), sim.qd());
}

// ∂L/∂w_i for the given weight indices by forward mode, N at a time.
template <int N>
std::vector<double> jet_gradient(const Scene& scene, const std::vector<AugmentBlueprint>& bps, int steps,
                                 const std::vector<int>& indices) {
  using J = ceres::Jet<double, N>;
  AugmentedDynamics<double> probe(scene.model, scene.model, bps);
  std::vector<double> w0(static_cast<size_t>(probe.num_parameters()));
  probe.get_parameters(w0.data());
  std::vector<double> grad(indices.size());
  for (size_t first = 0; first < indices.size(); first += N) {
    const J L = rollout_loss<J>(scene, bps, steps, [&](AugmentedDynamics<J>& aug) {
      std::vector<J> w(w0.size());
      for (size_t i = 0; i < w0.size(); ++i) w[i] = J(w0[i]);
      for (size_t k = first; k < std::min(indices.size(), first + N); ++k) w[indices[k]].v[k - first] = 1.0;
      aug.set_scalar_parameters(w.data());
    });
    for (size_t k = first; k < std::min(indices.size(), first + N); ++k) grad[k] = L.v[k - first];
  }
  return grad;
}

double double_loss(const Scene& scene, const std::vector<AugmentBlueprint>& bps, int steps,
                   const std::vector<double>& w) {
  return rollout_loss<double>(scene, bps, steps, [&](AugmentedDynamics<double>& aug) { aug.set_parameters(w.data()); });
}

// Four weights per site kind: per network group (first-layer weights and
// biases, last-layer weights and biases) the one with the largest forward-
// mode derivative (weights with no effect exist: a force along the planar
// swimmer's z axis moves nothing). Fourth-order central differences
// (h = 1e-4: truncation O(h⁴), rounding ~1e-16·|L|/h) in double rollouts.
TEST(AugmentDerivatives, JetWeightDerivativesMatchCentralDifferencesAtEverySiteKind) {
  const int steps = 150;
  double worst = 0;
  for (const SiteCase& c : every_site_kind({6}, AugmentMode::kResidual)) {
    AugmentedDynamics<double> probe(c.scene.model, c.scene.model, c.blueprints);
    const int P = probe.num_parameters();
    std::vector<double> w0(static_cast<size_t>(P));
    probe.get_parameters(w0.data());
    std::vector<int> all(static_cast<size_t>(P));
    for (int i = 0; i < P; ++i) all[i] = i;
    const std::vector<double> full = jet_gradient<8>(c.scene, c.blueprints, steps, all);
    const nn::Mlp& net = probe.network(probe.num_networks() - 1);
    const int off = probe.parameter_offset(probe.num_networks() - 1);
    const nn::Index last = net.num_layers() - 1;
    const int groups[5] = {off, off + static_cast<int>(net.bias_offset(0)), off + static_cast<int>(net.weight_offset(last)),
                           off + static_cast<int>(net.bias_offset(last)), off + static_cast<int>(net.num_parameters())};
    std::vector<int> idx;
    for (int g = 0; g < 4; ++g) {
      int best = groups[g];
      for (int i = groups[g]; i < groups[g + 1]; ++i)
        if (std::abs(full[i]) > std::abs(full[best])) best = i;
      idx.push_back(best);
    }
    const std::vector<double> jet = jet_gradient<8>(c.scene, c.blueprints, steps, idx);
    for (size_t k = 0; k < idx.size(); ++k) {
      EXPECT_EQ(jet[k], full[idx[k]]) << "a pass over four weights and the pass over all agree exactly";
      const double h = 1e-4;
      auto L = [&](double dw) {
        std::vector<double> w = w0;
        w[idx[k]] += dw;
        return double_loss(c.scene, c.blueprints, steps, w);
      };
      const double fd = (8 * (L(h) - L(-h)) - (L(2 * h) - L(-2 * h))) / (12 * h);
      const double rel = std::abs(jet[k] - fd) / std::abs(fd);
      EXPECT_NE(jet[k], 0.0) << c.label << ", weight " << idx[k] << " has no effect";
      EXPECT_LT(rel, 1e-6) << c.label << ", weight " << idx[k] << ": jet " << jet[k] << ", fd " << fd;
      worst = std::max(worst, rel);
      std::printf("[ jet vs fd ] %-30s w%-3d jet % .12e  fd % .12e  rel diff %.2e\n", c.label.c_str(), idx[k], jet[k],
                  fd, rel);
    }
  }
  std::printf("[ jet vs fd ] worst relative difference %.2e\n", worst);
}

// Reverse mode through the external network nodes against forward mode,
// every weight, every site kind, on small networks (one hidden layer of 2).
TEST(AugmentDerivatives, RevTapeGradientOfAllWeightsMatchesJets) {
  const int steps = 60;
  for (const SiteCase& c : every_site_kind({2}, AugmentMode::kResidual)) {
    Tape tape;
    std::vector<double> rev;
    {
      Sim<Rev> sim(c.scene, &c.blueprints);
      AugmentedDynamics<Rev>& aug = *sim.augmented();
      aug.set_tape(&tape);
      aug.zero_gradient();
      sim.run(steps);
      const Rev L = testing::final_state_loss<Rev>(sim.q(), sim.qd());
      EXPECT_GT(tape.num_externals(), 0u) << c.label;
      tape.reverse(L);
      rev = aug.gradient();
    }
    std::vector<int> all(rev.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
    const std::vector<double> jet = jet_gradient<8>(c.scene, c.blueprints, steps, all);
    double worst = 0, norm = 0;
    for (size_t i = 0; i < rev.size(); ++i) {
      EXPECT_NEAR(rev[i], jet[i], 1e-10 * std::max(1.0, std::abs(jet[i]))) << c.label << ", weight " << i;
      worst = std::max(worst, std::abs(rev[i] - jet[i]) / std::max(1.0, std::abs(jet[i])));
      norm = std::max(norm, std::abs(jet[i]));
    }
    EXPECT_GT(norm, 0.0) << c.label;
    std::printf("[ rev vs jet ] %-30s %2zu weights, %5zu external calls, max |dL/dw| %.3e, max rel diff %.2e\n",
                c.label.c_str(), rev.size(), tape.num_externals(), norm, worst);
  }
}

// The adapter refuses a reverse sweep after the weights changed.
TEST(AugmentNetworkNode, DetectsWeightsChangedBeforeReverse) {
  nn::Mlp net(2, std::vector<nn::Index>{3}, 1, nn::Activation::kTanh);
  std::mt19937_64 rng(1);
  net.initialize(nn::Init::kXavierUniform, rng);
  std::vector<double> grad(static_cast<size_t>(net.num_parameters()), 0.0);
  NetworkNode node(net, grad.data());
  Tape tape;
  const Rev x[2] = {tape.variable(0.3), tape.variable(-0.2)};
  Rev y[1];
  node.record(tape, x, y);
  std::vector<double> w(grad.size());
  net.get_parameters(w.data());
  w[0] += 0.1;
  net.set_parameters(w.data());
  EXPECT_THROW(tape.reverse(y[0]), std::logic_error);
}

// ---------------------------------------------------------------------------

TEST(AugmentThreads, SeveralThreadsEachWithItsOwnModelMatchOneThread) {
  std::vector<SiteCase> cases = every_site_kind({8, 8}, AugmentMode::kResidual);
  // One combined swimmer (all swimmer sites) and one box (all contact sites).
  std::vector<std::pair<Scene, std::vector<AugmentBlueprint>>> problems;
  for (const char* scene : {"swimmer", "box", "double_pendulum"}) {
    std::pair<Scene, std::vector<AugmentBlueprint>> p;
    for (const SiteCase& c : cases) {
      if (c.scene.name != scene) continue;
      p.first = c.scene;
      p.first.drags.clear();
      for (const AugmentBlueprint& bp : c.blueprints) p.second.push_back(bp);
    }
    problems.push_back(p);
  }
  std::vector<std::vector<double>> serial;
  for (const auto& p : problems) serial.push_back(augmented_rollout(p.first, p.second, kSteps));
  const int threads = 4;
  std::vector<std::vector<std::vector<double>>> results(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (int r = 0; r < 2; ++r)  // interleave the problems differently per thread
        for (size_t i = 0; i < problems.size(); ++i) {
          const size_t k = (i + t) % problems.size();
          std::vector<double> out = augmented_rollout(problems[k].first, problems[k].second, kSteps);
          if (r == 1) results[t].push_back(std::move(out));
        }
    });
  for (auto& th : pool) th.join();
  for (int t = 0; t < threads; ++t)
    for (size_t i = 0; i < problems.size(); ++i)
      EXPECT_TRUE(bit_identical(results[t][i], serial[(i + t) % problems.size()]))
          << "thread " << t << ", " << problems[(i + t) % problems.size()].first.name;
}

// ---------------------------------------------------------------------------

TEST(AugmentAllocation, NoHeapAllocationPerStep) {
  if (!testing::AllocationCounter::available()) GTEST_SKIP() << "allocation counting needs glibc, no sanitizer";
  std::vector<SiteCase> cases = every_site_kind({8, 8}, AugmentMode::kResidual);
  for (const SiteCase& c : cases) {
    {
      Sim<double> sim(c.scene, &c.blueprints);
      sim.run(2);
      long n = 0;
      {
        testing::AllocationCounter counter;
        sim.run(50);
        n = counter.count();
      }
      EXPECT_EQ(n, 0) << c.label << " (double)";
    }
    {
      using J = Jet8;
      Sim<J> sim(c.scene, &c.blueprints);
      AugmentedDynamics<J>& aug = *sim.augmented();
      std::vector<double> w(static_cast<size_t>(aug.num_parameters()));
      aug.get_parameters(w.data());
      std::vector<J> wj(w.size());
      for (size_t i = 0; i < w.size(); ++i) wj[i] = J(w[i]);
      wj[0].v[0] = 1.0;
      aug.set_scalar_parameters(wj.data());
      sim.run(2);
      long n = 0;
      {
        testing::AllocationCounter counter;
        sim.run(20);
        n = counter.count();
      }
      EXPECT_EQ(n, 0) << c.label << " (Jets with weight derivatives)";
    }
    {
      Tape tape;
      Sim<Rev> sim(c.scene, &c.blueprints);
      AugmentedDynamics<Rev>& aug = *sim.augmented();
      aug.set_tape(&tape);
      auto segment = [&] {
        tape.clear();
        for (int i = 0; i < sim.q().size(); ++i) sim.q()[i] = Rev(c.scene.q0[i]);
        for (int i = 0; i < sim.qd().size(); ++i) sim.qd()[i] = Rev(c.scene.qd0[i]);
        sim.run(10);
        tape.reverse(testing::final_state_loss<Rev>(sim.q(), sim.qd()));
      };
      segment();  // the tape's arenas grow to their steady size
      long n = 0;
      {
        testing::AllocationCounter counter;
        segment();
        segment();
        n = counter.count();
      }
      EXPECT_EQ(n, 0) << c.label << " (Rev, record + reverse)";
    }
  }
}

// ---------------------------------------------------------------------------

TEST(AugmentParameters, FlatBlockNamesGetSetAndHybridVector) {
  std::vector<SiteCase> cases = every_site_kind({4}, AugmentMode::kResidual);
  const SiteCase& c = cases[9];  // two drag networks on the swimmer
  ASSERT_EQ(c.blueprints.size(), 2u);
  AugmentedDynamics<double> aug(c.scene.model, c.scene.model, c.blueprints);
  const int n0 = static_cast<int>(c.blueprints[0].network.num_parameters());
  const int n1 = static_cast<int>(c.blueprints[1].network.num_parameters());
  EXPECT_EQ(aug.num_parameters(), n0 + n1);
  EXPECT_EQ(aug.parameter_offset(1), n0);
  const std::vector<std::string> names = aug.parameter_names();
  EXPECT_EQ(names.front(), "augment.drag0.w0");
  EXPECT_EQ(names[n0], "augment.drag4.w0");
  EXPECT_EQ(names.back(), "augment.drag4.w" + std::to_string(n1 - 1));
  std::vector<double> w(static_cast<size_t>(aug.num_parameters())), back(w.size());
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.01 * static_cast<double>(i) - 0.3;
  aug.set_parameters(w.data());
  aug.get_parameters(back.data());
  EXPECT_EQ(w, back);
  w[3] = std::nan("");
  EXPECT_THROW(aug.set_parameters(w.data()), InvalidArgument);
  aug.get_parameters(back.data());
  EXPECT_EQ(back[3], 0.01 * 3 - 0.3) << "nothing changed";

  // One vector: a physical parameter and the weights.
  EstimatedParameter damping;
  damping.target = *resolve_named_parameter("joint.joint1.damping", c.scene.model, false);
  damping.initial = 0.001;
  damping.lower = 0;
  HybridParameters hp(ParameterSet({damping}), c.blueprints);
  EXPECT_EQ(hp.size(), 1 + n0 + n1);
  EXPECT_EQ(hp.names()[0], "joint.joint1.damping");
  EXPECT_EQ(hp.names()[1], "augment.drag0.w0");
  EXPECT_EQ(find_weight_parameter("augment.drag4.w2", c.blueprints), std::make_pair(1, 2));
  EXPECT_FALSE(find_weight_parameter("augment.drag4.w999", c.blueprints));
  EXPECT_FALSE(find_weight_parameter("augment.drag4.w01", c.blueprints));
  std::vector<double> x = hp.initial_variables();
  x[0] = 0.02;
  x[1] = 0.5;
  Model<double> m = c.scene.model;
  hp.apply<double>(x.data(), &m, nullptr, nullptr, &aug);
  EXPECT_EQ(m.joints[m.joint_index("joint1")].dynamics.damping, 0.02);
  aug.get_parameters(back.data());
  EXPECT_EQ(back[0], 0.5);
  // In Jets the weights keep their derivatives: ∂(rollout)/∂x through both parts.
  using J = Jet8;
  Model<J> mj = c.scene.model.cast<J>();
  AugmentedDynamics<J> augj(mj, c.scene.model, c.blueprints);
  std::vector<J> xj(x.size());
  for (size_t i = 0; i < x.size(); ++i) xj[i] = J(x[i]);
  xj[0].v[0] = 1;
  xj[1].v[1] = 1;
  hp.apply<J>(xj.data(), &mj, nullptr, nullptr, &augj);
  EXPECT_EQ(mj.joints[c.scene.model.joint_index("joint1")].dynamics.damping.v[0], 1.0);
}

}  // namespace
}  // namespace neuralsim
