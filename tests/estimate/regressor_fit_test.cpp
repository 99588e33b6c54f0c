// The regressor route of inverse-dynamics fits (estimate/regressor_residual.cpp)
// against the RNEA-on-Jets route it replaces, on a planar two-link arm with
// sigmoid joint friction, both links' whole inertias (log-Cholesky) and
// joint-local parameters fitted: the same residuals and Jacobian to 1e-10,
// the same fit (cost, base parameters, friction) to solver tolerance; and
// the route is chosen only where it applies.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include "neuralsim/dynamics/inverse_dynamics_regressor.hpp"
#include "neuralsim/estimate/base_parameters.hpp"
#include "neuralsim/estimate/estimation_problem.hpp"
#include "neuralsim/experiment/estimation_config.hpp"
#include "neuralsim/io/config.hpp"
#include "neuralsim/io/yaml_model.hpp"
#include "neuralsim/step/simulate.hpp"

namespace neuralsim {
namespace regressor_fit_test {
namespace {

Model<double> sigmoid_arm() {
  Model<double> m = parse_yaml_model(
      "generator: double_pendulum\nlengths: [0.4, 0.4]\nmasses: [3.0, 2.0]\njoints:\n"
      "  joint1: {friction_law: sigmoid, friction: 0.87, friction_slope: 9.07, friction_shift: 0.026}\n"
      "  joint2: {friction_law: sigmoid, friction: 1.28, friction_slope: 5.59, friction_shift: 0.036, damping: 0.1}\n",
      "arm.yaml");
  for (const char* link : {"link1", "link2"})
    for (const char* c : {"xx", "yy", "zz"})
      set_parameter(m, resolve_parameter(m, std::string("link.") + link + ".inertia." + c), 0.02);
  return m;
}

std::vector<Trajectory> arm_data(const Model<double>& truth) {
  StepOptions step;
  step.integrator = Integrator::kRK4;
  step.dt = 0.01;
  std::vector<Trajectory> out;
  for (int k = 0; k < 2; ++k) {
    Stepper<double> stepper(truth, step);
    Sinusoid s;
    s.offset = s.phase = Eigen::VectorXd::Zero(2);
    s.amplitude = Eigen::Vector2d(8.0, 3.0);
    s.frequency_hz = Eigen::Vector2d(0.5 + 0.2 * k, 0.9);
    SinusoidControl<double> control(s);
    const Eigen::VectorXd q0 = Eigen::Vector2d(0.3 * k, -0.5);
    out.push_back(simulate(stepper, q0, Eigen::VectorXd::Zero(2), control, 200, [] { return false; }));
  }
  return out;
}

ParameterSet arm_parameters(const Model<double>& start) {
  return read_parameter_set(
      Config::parse("p: [{name: link.link1.inertial, transform: log_cholesky},"
                    " {name: link.link2.inertial, transform: log_cholesky},"
                    " {name: joint.joint1.friction, bounds: [0, 5]}, {name: joint.joint1.friction_shift},"
                    " {name: joint.joint2.damping, bounds: [0, 5]}, {name: joint.joint2.torque_offset}]",
                    "test.yaml"),
      "p", start);
}

struct Routes {
  Model<double> start;
  ParameterSet params;
  std::vector<Trajectory> data;
  std::vector<const Trajectory*> train;
  ResidualContext ctx;
  ProblemOptions po;
  Routes() : start(sigmoid_arm()), data(arm_data(start)) {
    // The fit starts from a model 30 % off in mass and friction.
    set_parameter(start, resolve_parameter(start, "link.link1.mass"), 2.1);
    set_parameter(start, resolve_parameter(start, "link.link2.mass"), 2.6);
    set_parameter(start, resolve_parameter(start, "joint.joint1.friction"), 0.6);
    params = arm_parameters(start);
    for (const Trajectory& t : data) train.push_back(&t);
    ctx = ResidualContext{&start, &params, StepOptions{}, ObservationSpec{}};
    po.formulation = Formulation::kInverseDynamics;
    po.window = 25;
  }
  std::unique_ptr<EstimationProblem> problem(bool regressor) {
    ProblemOptions o = po;
    o.regressor = regressor;
    return std::make_unique<EstimationProblem>(ctx, train, o);
  }
};

TEST(RegressorFit, SameResidualsAndJacobianAsRnea) {
  Routes r;
  auto fast = r.problem(true), slow = r.problem(false);
  EXPECT_NE(fast->torque_route().find("regressor route"), std::string::npos) << fast->torque_route();
  EXPECT_NE(slow->torque_route().find("residual.regressor is off"), std::string::npos) << slow->torque_route();
  std::vector<double> x = r.params.initial_variables();
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-0.2, 0.2);
  for (double& v : x) v += u(rng);
  Eigen::VectorXd rf, rs;
  const Eigen::MatrixXd Jf = fast->parameter_jacobian(x, &rf), Js = slow->parameter_jacobian(x, &rs);
  ASSERT_EQ(rf.size(), rs.size());
  EXPECT_LE((rf - rs).cwiseAbs().maxCoeff(), 1e-10 * rs.cwiseAbs().maxCoeff());
  EXPECT_LE((Jf - Js).cwiseAbs().maxCoeff(), 1e-10 * Js.cwiseAbs().maxCoeff());
  EXPECT_EQ(fast->residual_clusters(ClusterBy::kWindow), slow->residual_clusters(ClusterBy::kWindow));
}

TEST(RegressorFit, SameFitAsRnea) {
  Routes r;
  SolverOptions so;
  so.max_iterations = 60;
  const LocalResult a = r.problem(true)->solve(r.params.initial_variables(), so);
  const LocalResult b = r.problem(false)->solve(r.params.initial_variables(), so);
  ASSERT_TRUE(a.usable && b.usable) << a.report << " / " << b.report;
  EXPECT_NEAR(a.cost, b.cost, 1e-8 * std::max(1e-12, b.cost) + 1e-14);
  // What the data determine: the base parameters of the two fitted models
  // (the log-Cholesky coordinates have directions no torque sees).
  Model<double> ma = r.start, mb = r.start;
  r.params.apply(a.x.data(), ma);
  r.params.apply(b.x.data(), mb);
  const BaseParameters base = compute_base_parameters(random_state_regressor(r.start, 20, 3));
  ASSERT_EQ(base.rank, 6);
  const Eigen::VectorXd ba = base.base_values(model_inertial_parameters(ma)),
                        bb = base.base_values(model_inertial_parameters(mb));
  EXPECT_LE((ba - bb).cwiseAbs().maxCoeff(), 1e-6 * bb.cwiseAbs().maxCoeff()) << ba.transpose() << "\n" << bb.transpose();
  for (int i = 20; i < r.params.size(); ++i)
    EXPECT_NEAR(r.params.physical<double>(i, a.x[static_cast<size_t>(i)]),
                r.params.physical<double>(i, b.x[static_cast<size_t>(i)]), 1e-6)
        << r.params[i].name();
}

TEST(RegressorFit, RouteOnlyWhereItApplies) {
  const Model<double> m = sigmoid_arm();
  std::string why;
  EXPECT_TRUE(regressor_route_applies(m, arm_parameters(m), &why)) << why;
  const ParameterSet lengths =
      read_parameter_set(Config::parse("p: [{name: link.link1.length}]", "test.yaml"), "p", m);
  EXPECT_FALSE(regressor_route_applies(m, lengths, &why));
  EXPECT_NE(why.find("link.link1.length"), std::string::npos) << why;
  const ParameterSet gear =
      read_parameter_set(Config::parse("p: [{name: joint.joint1.gear_ratio}]", "test.yaml"), "p", m);
  EXPECT_FALSE(regressor_route_applies(m, gear, &why));
  Routes r;
  r.po.loss = Loss::kHuber;
  EXPECT_NE(r.problem(true)->torque_route().find("robust loss"), std::string::npos);
}

// Poor excitation: slow, small swings about the hanging pose, so q̈ (and
// with it the links' inertias about the joints) barely enters the torques,
// which carry sensor noise. Without a prior the inertias follow the noise;
// with a prior (the entries' own `prior` weight) they stay near the model's
// values, while the mass, which gravity makes visible and which has no
// prior, is fitted from the data (2.4 kg where the model says 2).
struct PoorExcitation {
  Model<double> model = sigmoid_arm();
  std::vector<Trajectory> data;
  std::vector<const Trajectory*> train;
  PoorExcitation() {
    StepOptions step;
    step.integrator = Integrator::kRK4;
    step.dt = 0.01;
    std::mt19937 rng(17);
    std::normal_distribution<double> noise(0.0, 0.05);
    Model<double> truth = model;  // the link's mass is 2.4 kg, the model says 2
    set_parameter(truth, resolve_parameter(truth, "link.link2.mass"), 2.4);
    Stepper<double> stepper(truth, step);
    Sinusoid s;
    s.offset = s.phase = Eigen::VectorXd::Zero(2);
    s.amplitude = Eigen::Vector2d(1.0, 0.5);
    s.frequency_hz = Eigen::Vector2d(0.15, 0.2);
    SinusoidControl<double> control(s);
    data.push_back(simulate(stepper, Eigen::VectorXd::Zero(2), Eigen::VectorXd::Zero(2), control, 300,
                            [] { return false; }));
    for (Eigen::Index k = 0; k < data[0].tau.rows(); ++k)
      for (int i = 0; i < 2; ++i) data[0].tau(k, i) += noise(rng);
    train.push_back(&data[0]);
  }
  // The fitted inertias' largest relative distance from the model's values.
  double inertia_drift(double prior_weight, double* mass) const {
    const ParameterSet params = read_parameter_set(
        Config::parse("p: [{name: link.link1.inertia.yy, prior: " + std::to_string(prior_weight) +
                          "}, {name: link.link2.inertia.yy, prior: " + std::to_string(prior_weight) +
                          "}, {name: link.link2.mass, initial: 1.5}]",
                      "test.yaml"),
        "p", model);
    const ResidualContext ctx{&model, &params, StepOptions{}, ObservationSpec{}};
    ProblemOptions po;
    po.formulation = Formulation::kInverseDynamics;
    EstimationProblem problem(ctx, train, po);
    const LocalResult r = problem.solve(params.initial_variables(), SolverOptions{});
    EXPECT_TRUE(r.usable) << r.report;
    *mass = r.x[2];
    return std::max(std::abs(r.x[0] / 0.02 - 1), std::abs(r.x[1] / 0.02 - 1));
  }
};

// Both links' log-Cholesky blocks (link 1's with `link1_keys`) fitted to
// the poorly excited arm, with the geometric prior's weight.
Model<double> poor_excitation_block_fit(const PoorExcitation& p, double geometric, const std::string& link1_keys = "") {
  const ParameterSet params = read_parameter_set(
      Config::parse("p: [{name: link.link1.inertial, transform: log_cholesky" + link1_keys +
                        "}, {name: link.link2.inertial, transform: log_cholesky}]",
                    "test.yaml"),
      "p", p.model);
  const ResidualContext ctx{&p.model, &params, StepOptions{}, ObservationSpec{}};
  ProblemOptions po;
  po.formulation = Formulation::kInverseDynamics;
  po.geometric_prior_weight = geometric;
  EstimationProblem problem(ctx, p.train, po);
  const LocalResult r = problem.solve(params.initial_variables(), SolverOptions{});
  EXPECT_TRUE(r.usable) << r.report;
  Model<double> fitted = p.model;
  params.apply(r.x.data(), fitted);
  return fitted;
}

// The geometric prior (estimate.prior.geometric) on both links' log-Cholesky
// blocks: the rotational inertias, which the data barely see, stay near the
// model's (without it they end 7× off), while the mass, which gravity makes
// visible, is fitted from the data. The prior pulls the whole pseudo-inertia,
// mass included: with weights 0.01, 0.1, 1, 10, 100 the mass ends at 2.430,
// 2.403, 2.381, 2.263, 2.076 (true 2.4, model 2) and the inertias' largest
// relative drift at 0.032, 0.0042, 7.8e-4, 3.6e-4, 7.7e-5.
double poor_excitation_geometric_drift(const PoorExcitation& p, double weight, double* mass) {
  const Model<double> fitted = poor_excitation_block_fit(p, weight);
  *mass = fitted.bodies[1].inertia.mass;
  // The rotational inertias about the COM (the model: 0.02 on every axis).
  double drift = 0;
  for (int b = 0; b < 2; ++b) {
    const Inertia<double>& I = fitted.bodies[static_cast<size_t>(b)].inertia;
    const Eigen::Vector3d c = I.h / I.mass;
    const Mat3<double> I_com = I.I_origin - I.mass * (c.squaredNorm() * Mat3<double>::Identity() - c * c.transpose());
    for (int k = 0; k < 3; ++k) drift = std::max(drift, std::abs(I_com(k, k) / 0.02 - 1));
  }
  return drift;
}

TEST(RegressorFit, GeometricPriorKeepsPoorlyExcitedInertiasNearNominal) {
  const PoorExcitation p;
  double mass_free = 0, mass_prior = 0;
  const double free = poor_excitation_geometric_drift(p, 0, &mass_free);
  const double held = poor_excitation_geometric_drift(p, 0.1, &mass_prior);
  std::printf("  geometric prior: I_com drift without %.3g, with %.3g; mass %.4g / %.4g (true 2.4)\n", free, held,
              mass_free, mass_prior);
  EXPECT_GT(free, 1);
  EXPECT_LT(held, 0.02);
  EXPECT_NEAR(mass_prior, 2.4, 0.02);
}

TEST(RegressorFit, PriorKeepsPoorlyExcitedInertiasNearNominal) {
  const PoorExcitation p;
  double mass_free = 0, mass_prior = 0;
  const double free = p.inertia_drift(0, &mass_free);
  const double held = p.inertia_drift(1e4, &mass_prior);
  std::printf("  inertia drift without prior %.3g, with prior %.3g; mass %.4g / %.4g (true 2.4)\n", free, held,
              mass_free, mass_prior);
  EXPECT_GT(free, 0.5);
  EXPECT_LT(held, 0.1);
  EXPECT_NEAR(mass_free, 2.4, 0.1);
  EXPECT_NEAR(mass_prior, 2.4, 0.1);
}

// Bounds on a log-Cholesky block's mass and centre of mass (`mass:`, `com:`
// of link.<body>.inertial): they bound α and t directly, so a fit that
// drives link 1's mass and COM far off without them (the poorly excited arm
// above, no prior) ends with both inside the given ranges, with them.
struct BoundedBlockFit {
  double mass[2];
  Eigen::Vector3d com[2];
};
BoundedBlockFit poor_excitation_bounded_fit(const PoorExcitation& p, const std::string& link1_bounds) {
  const Model<double> fitted = poor_excitation_block_fit(p, 0, link1_bounds);
  BoundedBlockFit out;
  for (int b = 0; b < 2; ++b) {
    const Inertia<double>& I = fitted.bodies[static_cast<size_t>(b)].inertia;
    out.mass[b] = I.mass;
    out.com[b] = I.h / I.mass;
  }
  return out;
}

TEST(RegressorFit, MassAndComBoundsHoldALogCholeskyBlock) {
  const PoorExcitation p;
  const Inertia<double>& nominal = p.model.bodies[0].inertia;
  const Eigen::Vector3d c0 = nominal.h / nominal.mass;
  const BoundedBlockFit free = poor_excitation_bounded_fit(p, "");
  std::printf("  link1 free: mass %.4g (model %.4g), COM (%.4g, %.4g, %.4g) (model (%.4g, %.4g, %.4g))\n", free.mass[0],
              nominal.mass, free.com[0].x(), free.com[0].y(), free.com[0].z(), c0.x(), c0.y(), c0.z());
  // Ranges that hold the model's values and exclude the free fit's: mass
  // within +10 % / -1 %, the COM within 1 cm of the model's but only 5 mm
  // towards the joint.
  const double lo = 0.99 * nominal.mass, hi = 1.1 * nominal.mass;
  const Eigen::Vector3d lower = c0 - Eigen::Vector3d::Constant(0.01), upper = c0 + Eigen::Vector3d(0.01, 0.01, 0.005);
  char bounds[320];
  std::snprintf(bounds, sizeof bounds,
                ", mass: [%.17g, %.17g], com: {lower: [%.17g, %.17g, %.17g], upper: [%.17g, %.17g, %.17g]}", lo, hi,
                lower.x(), lower.y(), lower.z(), upper.x(), upper.y(), upper.z());
  // Without the bounds the fit leaves them (so they are active below).
  EXPECT_LT(free.mass[0], lo);
  EXPECT_GT(free.com[0].z(), upper.z());
  const BoundedBlockFit held = poor_excitation_bounded_fit(p, bounds);
  std::printf("  link1 bounded: mass %.4g, COM (%.4g, %.4g, %.4g)\n", held.mass[0], held.com[0].x(), held.com[0].y(),
              held.com[0].z());
  EXPECT_GE(held.mass[0], lo * (1 - 1e-12));
  EXPECT_LE(held.mass[0], hi * (1 + 1e-12));
  for (int k = 0; k < 3; ++k) {
    EXPECT_GE(held.com[0][k], lower[k] - 1e-12);
    EXPECT_LE(held.com[0][k], upper[k] + 1e-12);
  }
}

// Bad mass and COM bounds: one-line config errors naming the key.
TEST(RegressorFit, BadMassAndComBoundsAreConfigErrors) {
  const Model<double> model = sigmoid_arm();  // link 1: 3 kg, COM (0, 0, -0.4)
  const std::pair<const char*, const char*> cases[] = {
      {"mass: [0, 4]", "p.0.mass"},
      {"mass: [3.5, 4]", "outside [3.5, 4]"},
      {"com: {lower: [-1, -1], upper: [1, 1, 1]}", "p.0.com.lower"},
      {"com: {lower: [-1, -1, 0], upper: [1, 1, 1]}", "centre of mass at -0.4"},
      {"com: {lower: [-1, -1, -1], upper: [1, 1, -2]}", "not below upper.2"},
      {"com: {lower: [-1, -1, -1e4], upper: [1, 1, 1]}", "|value| <= 1000"},
  };
  for (const auto& [entry, expected] : cases) {
    try {
      read_parameter_set(
          Config::parse(std::string("p: [{name: link.link1.inertial, transform: log_cholesky, ") + entry + "}]",
                        "test.yaml"),
          "p", model);
      ADD_FAILURE() << entry << ": accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << entry << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find("test.yaml:1:"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(read_parameter_set(Config::parse("p: [{name: link.link1.mass, mass: [1, 2]}]", "test.yaml"), "p", model),
               ConfigError);
}

// The base parameters' standard errors (delta method through the
// log-Cholesky coordinates, pseudo-inverse of JᵀJ) against linear least
// squares written directly in β and the joint-local parameters: τ's rows in
// [W_1 | J_joint-local] give Σ = s² (AᵀA)⁻¹ (the fit is at its optimum, so the
// two linearizations coincide).
TEST(RegressorFit, BaseParameterErrorsMatchLinearLeastSquares) {
  Routes r;
  SolverOptions so;
  so.max_iterations = 60;
  auto problem = r.problem(true);
  const LocalResult fit = problem->solve(r.params.initial_variables(), so);
  ASSERT_TRUE(fit.usable);
  Eigen::VectorXd res;
  const Eigen::MatrixXd J = problem->parameter_jacobian(fit.x, &res);
  std::vector<InverseDynamicsSamples> samples;
  for (const Trajectory& t : r.data) samples.push_back(r.po.torque_samples(t));
  std::vector<const InverseDynamicsSamples*> ptrs;
  for (const auto& s : samples) ptrs.push_back(&s);
  ASSERT_EQ(r.params.size(), 24);  // 2 × 10 log-Cholesky, 4 joint-local
  const double s2 = res.squaredNorm() / static_cast<double>(res.size() - 10);  // m − (6 β + 4 joint-local)
  const BaseParameterFit b = fit_base_parameters(r.start, r.params, fit.x, ptrs, J, s2);
  ASSERT_EQ(b.links.size(), 2u);
  ASSERT_EQ(b.base.rank, 6);
  // The oracle: A = [W_1 | J's friction columns].
  const Eigen::MatrixXd W = [&] {
    Eigen::MatrixXd w(J.rows(), 20);
    Data<double> data(r.start);
    Eigen::MatrixXd Y;
    Eigen::Index row = 0;
    for (const auto& s : samples)
      for (Eigen::Index k = 0; k < s.q.rows(); ++k, row += 2) {
        inverse_dynamics_regressor(r.start, data, Eigen::VectorXd(s.q.row(k).transpose()),
                                   Eigen::VectorXd(s.qd.row(k).transpose()), Eigen::VectorXd(s.qdd.row(k).transpose()), Y);
        w.middleRows(row, 2) = Y;
      }
    return w;
  }();
  Eigen::MatrixXd A(J.rows(), 6 + 4);
  for (int k = 0; k < 6; ++k) A.col(k) = W.col(b.base.independent[static_cast<size_t>(k)]);
  A.rightCols(4) = J.rightCols(4);
  const Eigen::MatrixXd cov = s2 * (A.transpose() * A).inverse();
  for (int k = 0; k < 6; ++k) {
    const double expected = std::sqrt(cov(k, k));
    EXPECT_NEAR(b.estimates[static_cast<size_t>(k)].std_error, expected, 1e-4 * expected) << b.estimates[k].expression;
  }
}

}  // namespace
}  // namespace regressor_fit_test
}  // namespace neuralsim
