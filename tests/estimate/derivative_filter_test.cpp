// Derivatives for inverse dynamics (core/derivative_filter.hpp):
// Savitzky–Golay on positions is exact on polynomials up to its order, on
// uniform and non-uniform time; on encoder-quantized data its q̈ is far more
// accurate than the moving average + central differences of q̇, and an
// inverse-dynamics fit of a pendulum's inertia is unbiased with it where
// the old method is biased low (errors in the regressor q̈ attenuate J).
#include <gtest/gtest.h>

#include <ceres/ceres.h>

#include <cmath>
#include <filesystem>
#include <random>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/core/derivative_filter.hpp"
#include "neuralsim/estimate/residuals.hpp"
#include "neuralsim/experiment/data.hpp"
#include "neuralsim/experiment/estimation_config.hpp"
#include "neuralsim/experiment/experiment.hpp"
#include "neuralsim/io/csv_import.hpp"
#include "neuralsim/io/yaml_model.hpp"
#include "neuralsim/model/parameters.hpp"
#include "neuralsim/step/simulate.hpp"
#include "support/files.hpp"
#include "support/test_models.hpp"

namespace neuralsim {
namespace {

// Time stamps t_k = k·dt, optionally with a uniform jitter of ±jitter·dt.
Eigen::VectorXd time_stamps(int T, double dt, double jitter, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-jitter, jitter);
  Eigen::VectorXd t(T);
  for (int k = 0; k < T; ++k) t[k] = k * dt + (k > 0 ? u(rng) * dt : 0.0);
  return t;
}

// p(t) = Σ c_j t^j and its derivatives.
struct Poly {
  std::vector<double> c;
  double operator()(double t, int d = 0) const {
    double s = 0;
    for (size_t j = d; j < c.size(); ++j) {
      double f = 1;
      for (int i = 0; i < d; ++i) f *= static_cast<double>(j - i);
      s += c[j] * f * std::pow(t, static_cast<double>(j - d));
    }
    return s;
  }
};

Trajectory polynomial_trajectory(const Eigen::VectorXd& t, const Poly& p, const Poly& torque) {
  Trajectory tr;
  tr.name = "poly";
  tr.time = t;
  const int T = static_cast<int>(t.size());
  tr.q.resize(T, 1);
  tr.qd.resize(T, 1);
  tr.tau.resize(T, 1);
  for (int k = 0; k < T; ++k) {
    tr.q(k, 0) = p(t[k]);
    tr.qd(k, 0) = p(t[k], 1);
    tr.tau(k, 0) = torque(t[k]);
  }
  return tr;
}

DerivativeOptions sg(int window, int order, bool filter_torque = false) {
  DerivativeOptions o;
  o.method = DerivativeMethod::kSavitzkyGolay;
  o.window = window;
  o.order = order;
  o.filter_torque = filter_torque;
  return o;
}

// A polynomial of degree ≤ order is its own least-squares fit: q, q̇, q̈ (and
// τ when filtered) are exact, whatever the spacing of the samples.
TEST(DerivativeFilter, SavitzkyGolayIsExactOnPolynomialsUpToItsOrder) {
  for (const double jitter : {0.0, 0.4}) {
    const Eigen::VectorXd t = time_stamps(200, 0.0033, jitter, 3);
    for (const int order : {2, 3, 4, 5}) {
      Poly p{{0.3, -1.1, 2.0}}, torque{{0.5, 0.25}};
      for (int j = 3; j <= order; ++j) p.c.push_back(std::pow(-1.0, j) * 3.0 / j);
      for (int j = 2; j <= order; ++j) torque.c.push_back(0.7 / j);
      for (const int window : {order + 1 + (order % 2 == 0 ? 0 : 1), 21, 41}) {
        SCOPED_TRACE("jitter " + std::to_string(jitter) + " order " + std::to_string(order) + " window " +
                     std::to_string(window));
        const Trajectory tr = polynomial_trajectory(t, p, torque);
        const FilteredDerivatives f = filter_derivatives(tr, sg(window, order, true));
        ASSERT_EQ(static_cast<int>(f.rows.size()), 200 - 2 * (window / 2));
        for (size_t i = 0; i < f.rows.size(); ++i) {
          const double tk = t[f.rows[i]];
          EXPECT_NEAR(f.q(i, 0), p(tk), 1e-9);
          EXPECT_NEAR(f.qd(i, 0), p(tk, 1), 1e-7 * (1 + std::abs(p(tk, 1))));
          EXPECT_NEAR(f.qdd(i, 0), p(tk, 2), 1e-5 * (1 + std::abs(p(tk, 2))));
          EXPECT_NEAR(f.tau(i, 0), torque(tk), 1e-9);
        }
      }
    }
  }
}

// One degree more than the order is not fitted exactly: the test above can fail.
TEST(DerivativeFilter, SavitzkyGolayIsNotExactAboveItsOrder) {
  const Eigen::VectorXd t = time_stamps(100, 0.01, 0.0, 1);
  const Trajectory tr = polynomial_trajectory(t, Poly{{0, 0, 0, 0, 1.0}}, Poly{{0.0}});
  const FilteredDerivatives f = filter_derivatives(tr, sg(21, 3));
  double worst = 0;
  for (size_t i = 0; i < f.rows.size(); ++i) worst = std::max(worst, std::abs(f.qdd(i, 0) - 12 * std::pow(t[f.rows[i]], 2)));
  EXPECT_GT(worst, 1e-3);
}

// On uniform samples the fit is the classical convolution: window 5, order
// 2, second derivative weights (2, −1, −2, −1, 2)/(7 h²) (Savitzky & Golay 1964,
// table), first derivative (−2, −1, 0, 1, 2)/(10 h), value (−3, 12, 17, 12, −3)/35.
TEST(DerivativeFilter, SavitzkyGolayMatchesTheClassicalCoefficientsOnUniformTime) {
  const double h = 0.01;
  const Eigen::VectorXd t = time_stamps(5, h, 0.0, 1);
  RowMatrixXd x(5, 1);
  x << 0.3, -1.2, 0.8, 2.5, -0.4;
  Eigen::MatrixXd v, d1, d2;
  savitzky_golay(t, x, 5, 2, &v, &d1, &d2);
  ASSERT_EQ(v.rows(), 1);
  const Eigen::VectorXd xv = x.col(0);
  const double wv[] = {-3, 12, 17, 12, -3}, w1[] = {-2, -1, 0, 1, 2}, w2[] = {2, -1, -2, -1, 2};
  double ev = 0, e1 = 0, e2 = 0;
  for (int j = 0; j < 5; ++j) {
    ev += wv[j] * xv[j] / 35.0;
    e1 += w1[j] * xv[j] / (10.0 * h);
    e2 += w2[j] * xv[j] / (7.0 * h * h);
  }
  EXPECT_NEAR(v(0, 0), ev, 1e-12);
  EXPECT_NEAR(d1(0, 0), e1, 1e-9);
  EXPECT_NEAR(d2(0, 0), e2, 1e-6);
}

// The original method, kept: window 1 is the plain non-uniform central
// difference of q̇, exact for a quadratic q̇; filter_torque averages τ.
TEST(DerivativeFilter, CentralDifferenceKeepsTheOriginalMethod) {
  const Eigen::VectorXd t = time_stamps(50, 0.01, 0.4, 5);
  const Poly p{{0.1, 0.2, -0.5, 0.4}}, torque{{0.0, 1.0}};  // q̇ quadratic; τ linear
  const Trajectory tr = polynomial_trajectory(t, p, torque);
  const InverseDynamicsSamples s = prepare_inverse_dynamics(tr, 1, 1);
  ASSERT_EQ(s.q.rows(), 48);
  for (int i = 0; i < s.q.rows(); ++i) {
    const double tk = t[i + 1];
    EXPECT_NEAR(s.q(i, 0), p(tk), 1e-12);
    EXPECT_NEAR(s.qdd(i, 0), p(tk, 2), 1e-9);
    EXPECT_EQ(s.tau(i, 0), tr.tau(i + 1, 0));
  }
  // The DerivativeOptions form with the same window is the same computation.
  DerivativeOptions d;
  d.window = 5;
  const InverseDynamicsSamples a = prepare_inverse_dynamics(tr, 5, 2), b = prepare_inverse_dynamics(tr, d, 2);
  ASSERT_EQ(a.q.rows(), 22);  // rows 3 .. 46, every second
  EXPECT_EQ(a.qdd, b.qdd);
  EXPECT_EQ(a.tau, b.tau);
  d.filter_torque = true;
  const FilteredDerivatives f = filter_derivatives(tr, d);
  for (size_t i = 0; i < f.rows.size(); ++i)
    EXPECT_NEAR(f.tau(i, 0), tr.tau.col(0).segment(f.rows[i] - 2, 5).mean(), 1e-12);
}

TEST(DerivativeFilter, RefusesOptionsThatCannotWork) {
  auto message = [](const DerivativeOptions& o) {
    try {
      check_derivative_options(o);
    } catch (const InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(message(sg(10, 2)).find("window must be odd"), std::string::npos);
  EXPECT_NE(message(sg(3, 4)).find("fewer samples than a polynomial of order 4"), std::string::npos);
  EXPECT_NE(message(sg(11, 1)).find("order must be in [2, 10]"), std::string::npos);
  EXPECT_NE(message(sg(31, 11)).find("order"), std::string::npos);
  EXPECT_NE(message(sg(0, 2)).find("window must be in"), std::string::npos);
  EXPECT_EQ(message(sg(3, 2)), "");
  DerivativeOptions cd;
  cd.window = 4;  // the moving average accepts any width (as filter_window always did)
  EXPECT_EQ(message(cd), "");
  // A trajectory shorter than the window gives no samples; quaternions are refused.
  Trajectory tr = polynomial_trajectory(time_stamps(10, 0.01, 0, 1), Poly{{1.0}}, Poly{{0.0}});
  EXPECT_TRUE(filter_derivatives(tr, sg(11, 2)).rows.empty());
  EXPECT_EQ(filter_derivatives(tr, sg(9, 2)).rows.size(), 2u);
  tr.q = RowMatrixXd::Zero(10, 2);
  EXPECT_THROW(filter_derivatives(tr, sg(5, 2)), InvalidArgument);
}

// A 0.5 Hz swing of 1 rad sampled at 300 Hz by an encoder of 2048 counts per
// turn (q rounded to 3.07 mrad) with a velocity quantized at one count per
// sample (0.92 rad/s): the q̈ error of Savitzky–Golay on positions (41
// samples, order 3) against moving average (5) + central differences of q̇.
double rms_qdd_error(const FilteredDerivatives& f, const Eigen::VectorXd& t, double amplitude, double omega) {
  double s = 0;
  for (size_t i = 0; i < f.rows.size(); ++i) {
    const double truth = -amplitude * omega * omega * std::sin(omega * t[f.rows[i]]);
    s += std::pow(f.qdd(i, 0) - truth, 2);
  }
  return std::sqrt(s / f.rows.size());
}

constexpr double kCountStep = 2 * M_PI / 2048;  // rad
constexpr double kSampleDt = 1.0 / 300;         // s

TEST(DerivativeFilter, SavitzkyGolayIsFarMoreAccurateOnQuantizedData) {
  const double A = 1.0, omega = 2 * M_PI * 0.5;
  const int T = 1200;
  const Eigen::VectorXd t = time_stamps(T, kSampleDt, 0.1, 7);
  Trajectory tr;
  tr.time = t;
  tr.q.resize(T, 1);
  tr.qd.resize(T, 1);
  const double v_step = kCountStep / kSampleDt;
  for (int k = 0; k < T; ++k) {
    tr.q(k, 0) = std::round(A * std::sin(omega * t[k]) / kCountStep) * kCountStep;
    tr.qd(k, 0) = std::round(A * omega * std::cos(omega * t[k]) / v_step) * v_step;
  }
  DerivativeOptions old;
  old.window = 5;
  const double e_old = rms_qdd_error(filter_derivatives(tr, old), t, A, omega);
  const double e_sg = rms_qdd_error(filter_derivatives(tr, sg(41, 3)), t, A, omega);
  RecordProperty("rms_qdd_error_central_difference", std::to_string(e_old));
  RecordProperty("rms_qdd_error_savitzky_golay", std::to_string(e_sg));
  // Signal RMS A ω²/√2 = 6.98 rad/s². Measured: old 15.5 rad/s² (2.2× the
  // signal), Savitzky–Golay 0.18 rad/s² (2.6 % of it).
  EXPECT_GT(e_old, 10.0);
  EXPECT_LT(e_sg, 0.5);
  EXPECT_GT(e_old / e_sg, 30.0);
}

// τ = (m l² + I_a) q̈ + d q̇ + m g l sin q for a torque-driven pendulum,
// recorded through the encoder above; m, I_a, d fitted by inverse dynamics
// (the residual simid minimizes, make_inverse_dynamics_cost) with Ceres.
struct PendulumFit {
  double inertia = 0, mass = 0, damping = 0;
};

PendulumFit fit_pendulum(const Model<double>& model, const ParameterSet& params, const Trajectory& data,
                         const DerivativeOptions& d) {
  ResidualContext ctx{&model, &params, StepOptions{}, ObservationSpec{}};
  const auto samples = std::make_shared<const InverseDynamicsSamples>(prepare_inverse_dynamics(data, d, 1));
  std::vector<double> x = params.initial_variables();
  ceres::Problem problem;
  for (int r = 0; r < samples->q.rows(); ++r)
    problem.AddResidualBlock(make_inverse_dynamics_cost(ctx, samples, r, 1.0), nullptr, x.data());
  ceres::Solver::Options so;
  so.max_num_iterations = 50;
  so.logging_type = ceres::SILENT;
  ceres::Solver::Summary summary;
  ceres::Solve(so, &problem, &summary);
  EXPECT_TRUE(summary.IsSolutionUsable());
  PendulumFit f;
  f.mass = params.physical<double>(0, x[0]);
  const double armature = params.physical<double>(1, x[1]);
  f.damping = params.physical<double>(2, x[2]);
  f.inertia = f.mass * 0.4 * 0.4 + armature;
  return f;
}

TEST(DerivativeFilter, InverseDynamicsInertiaIsUnbiasedWithSavitzkyGolayOnQuantizedData) {
  Model<double> truth = load_yaml_model(testing::source_path("configs/models/pendulum.yaml"));
  set_parameter(truth, resolve_parameter(truth, "link.link1.mass"), 0.7);
  set_parameter(truth, resolve_parameter(truth, "link.link1.length"), 0.4);
  set_parameter(truth, resolve_parameter(truth, "joint.joint1.damping"), 0.05);
  set_parameter(truth, resolve_parameter(truth, "joint.joint1.armature"), 0.02);
  const double J = 0.7 * 0.16 + 0.02;
  StepOptions step;
  step.integrator = Integrator::kRK4;
  step.dt = kSampleDt;
  Stepper<double> stepper(truth, step);
  Sinusoid s;
  s.offset = s.phase = Eigen::VectorXd::Zero(1);
  s.amplitude = Eigen::VectorXd::Constant(1, 2.0);
  s.frequency_hz = Eigen::VectorXd::Constant(1, 0.7);
  SinusoidControl<double> control(s);
  Trajectory tr = simulate(stepper, Eigen::VectorXd::Constant(1, 0.3), Eigen::VectorXd::Zero(1), control, 3000,
                           [] { return false; });
  const double v_step = kCountStep / kSampleDt;
  for (int k = 0; k < tr.size(); ++k) {
    tr.q(k, 0) = std::round(tr.q(k, 0) / kCountStep) * kCountStep;
    tr.qd(k, 0) = std::round(tr.qd(k, 0) / v_step) * v_step;
  }
  const ParameterSet params = read_parameter_set(
      Config::parse("p: [{name: link.link1.mass, initial: 1.0, bounds: [0.01, 10], transform: log},"
                    " {name: joint.joint1.armature, initial: 0.0, bounds: [0, 1]},"
                    " {name: joint.joint1.damping, initial: 0.0, bounds: [0, 1]}]",
                    "test.yaml"),
      "p", truth);
  DerivativeOptions old;
  old.window = 5;
  const PendulumFit f_old = fit_pendulum(truth, params, tr, old);
  const PendulumFit f_sg = fit_pendulum(truth, params, tr, sg(41, 3, true));
  RecordProperty("inertia_error_central_difference", std::to_string(f_old.inertia / J - 1));
  RecordProperty("inertia_error_savitzky_golay", std::to_string(f_sg.inertia / J - 1));
  // Measured: old −0.80 (J 80 % low: the noise in the regressor q̈ attenuates
  // the regression), Savitzky–Golay +0.7 %.
  EXPECT_LT(f_old.inertia / J - 1, -0.3);
  EXPECT_NEAR(f_sg.inertia / J, 1.0, 0.02);
  EXPECT_NEAR(f_sg.mass / 0.7, 1.0, 0.02);
  EXPECT_NEAR(f_sg.damping, 0.05, 0.01);
}

// The config keys (estimate.residual.derivatives) and their bad values.
std::string config_error(const std::string& yaml) {
  try {
    read_derivative_options(Config::parse(yaml, "cfg.yaml"));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(DerivativeFilterConfig, ReadsTheDerivativesSectionAndKeepsFilterWindow) {
  const DerivativeOptions a = read_derivative_options(Config::parse(
      "{type: inverse_dynamics, derivatives: {method: savitzky_golay, window: 31, order: 3, filter_torque: true}}",
      "cfg.yaml"));
  EXPECT_EQ(a.method, DerivativeMethod::kSavitzkyGolay);
  EXPECT_EQ(a.window, 31);
  EXPECT_EQ(a.order, 3);
  EXPECT_TRUE(a.filter_torque);
  // Old configs: filter_window is the moving-average width of central_difference.
  const DerivativeOptions b = read_derivative_options(Config::parse("{filter_window: 9}", "cfg.yaml"));
  EXPECT_EQ(b.method, DerivativeMethod::kCentralDifference);
  EXPECT_EQ(b.window, 9);
  EXPECT_FALSE(b.filter_torque);
  EXPECT_EQ(read_problem_options(Config::parse("{derivatives: {method: central_difference, window: 7}}",
                                               "cfg.yaml")).filter_window,
            7);
  // Nothing given: Savitzky–Golay (31, order 3) on the actual time stamps,
  // for the inverse-dynamics residual and every torque metric alike; a
  // `derivatives` section without a method is Savitzky–Golay too.
  const DerivativeOptions d = read_derivative_options(Config::parse("{}", "cfg.yaml"));
  EXPECT_EQ(d.method, DerivativeMethod::kSavitzkyGolay);
  EXPECT_EQ(d.window, 31);
  EXPECT_EQ(d.order, 3);
  EXPECT_FALSE(d.filter_torque);
  EXPECT_EQ(read_derivative_options(Config::parse("{derivatives: {window: 21}}", "cfg.yaml")).method,
            DerivativeMethod::kSavitzkyGolay);
  // A model with quaternion joints (nq != nv): Savitzky–Golay cannot
  // differentiate its positions, so the default is the moving average, and
  // asking for Savitzky–Golay names the key.
  const Model<double> ball = parse_yaml_model(
      "bodies: [{name: b, joint: {name: j, type: spherical}, mass: 1, inertia: [0.1, 0.1, 0.1]}]", "ball.yaml");
  EXPECT_EQ(read_derivative_options(Config::parse("{}", "cfg.yaml"), &ball).method,
            DerivativeMethod::kCentralDifference);
  try {
    read_derivative_options(Config::parse("{derivatives: {method: savitzky_golay}}", "cfg.yaml"), &ball);
    ADD_FAILURE() << "savitzky_golay accepted on a spherical joint";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("derivatives.method"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("quaternion"), std::string::npos) << e.what();
  }
}

TEST(DerivativeFilterConfig, RefusesBadValuesNamingTheKey) {
  EXPECT_NE(config_error("{derivatives: {method: savitzky_golay, window: 30, order: 3}}").find("derivatives.window"),
            std::string::npos);
  EXPECT_NE(config_error("{derivatives: {method: savitzky_golay, window: 30, order: 3}}").find("odd"),
            std::string::npos);
  EXPECT_NE(config_error("{derivatives: {method: savitzky_golay, window: 3, order: 3}}").find("derivatives.window"),
            std::string::npos);
  EXPECT_NE(config_error("{derivatives: {method: savitzky_golay, window: 31, order: 1}}").find("derivatives.order"),
            std::string::npos);
  EXPECT_NE(config_error("{derivatives: {method: savitzky_golay, window: .nan}}").find("derivatives.window"),
            std::string::npos);
  EXPECT_NE(config_error("{derivatives: {method: spline}}").find("derivatives.method"), std::string::npos);
  EXPECT_NE(config_error("{derivatives: {method: savitzky_golay, windw: 31}}").find("windw"), std::string::npos);
  EXPECT_NE(config_error("{filter_window: 5, derivatives: {method: savitzky_golay}}").find("filter_window"),
            std::string::npos);
  EXPECT_NE(config_error("{derivatives: {method: central_difference, order: 3}}").find("order"), std::string::npos);
  EXPECT_NE(config_error("{derivatives: {method: savitzky_golay, window: 31, order: 3, filter_torque: 2}}")
                .find("filter_torque"),
            std::string::npos);
}

// configs/simid_real_dfki_sg.yaml on the DFKI sysid run: the inverse-
// dynamics fit with its derivative options (the residual simid minimizes,
// solved here directly because EstimationProblem takes only a moving-average
// width so far) against the authors' published values. Their "scatter": the
// block-bootstrap standard deviation (0.5 s blocks, 500 replicates) of
// their own regression on this run (their filters, scipy), J 0.010, m·cx
// 0.034, Fv 0.030, Fc 0.114, offset 0.096. Criterion: every value within 2
// of those standard deviations.
TEST(DerivativeFilterRealData, DfkiSavitzkyGolayConfigReproducesThePublishedParameters) {
  NEURALSIM_SKIP_WITHOUT_SHARED("real-data/dfki-simple-pendulum/sysid_pd_measured.csv");
  const Config cfg = Config::load(testing::source_path("configs/simid_real_dfki_sg.yaml"), {});
  const Experiment exp = load_experiment(cfg);
  const DataSplit data = load_data(cfg.at("data"), exp.model);
  const Config est = cfg.at("estimate");
  const ParameterSet params = read_parameter_set(est, "parameters", exp.model);
  const DerivativeOptions d = read_derivative_options(est.at("residual"));
  ASSERT_EQ(d.method, DerivativeMethod::kSavitzkyGolay);
  ResidualContext ctx{&exp.model, &params, exp.step, ObservationSpec{}};
  std::vector<double> x = params.initial_variables();
  ceres::Problem problem;
  for (const Trajectory& tr : data.train.trajectories) {
    const auto samples = std::make_shared<const InverseDynamicsSamples>(prepare_inverse_dynamics(tr, d, 1));
    for (int r = 0; r < samples->q.rows(); ++r)
      problem.AddResidualBlock(make_inverse_dynamics_cost(ctx, samples, r, 1.0), nullptr, x.data());
  }
  for (int i = 0; i < params.size(); ++i) {
    if (std::isfinite(params.variable_lower(i))) problem.SetParameterLowerBound(x.data(), i, params.variable_lower(i));
    if (std::isfinite(params.variable_upper(i))) problem.SetParameterUpperBound(x.data(), i, params.variable_upper(i));
  }
  ceres::Solver::Options so;
  so.max_num_iterations = 100;
  so.logging_type = ceres::SILENT;
  ceres::Solver::Summary summary;
  ceres::Solve(so, &problem, &summary);
  ASSERT_TRUE(summary.IsSolutionUsable());
  std::vector<double> p(params.size());
  for (int i = 0; i < params.size(); ++i) p[i] = params.physical<double>(i, x[i]);
  const double l = 0.5;
  const double J = p[0] * l * l + p[1], mcx = p[0] * l, Fv = p[2], Fc = p[3] * 2 / M_PI, offset = p[4];
  for (const auto& [name, value] : std::vector<std::pair<std::string, double>>{
           {"J", J}, {"m_cx", mcx}, {"Fv", Fv}, {"Fc", Fc}, {"offset", offset}})
    RecordProperty(name, std::to_string(value));
  EXPECT_NEAR(J, 0.06259, 2 * 0.010);
  EXPECT_NEAR(mcx, 0.1022, 2 * 0.034);
  EXPECT_NEAR(Fv, 0.04707, 2 * 0.030);
  EXPECT_NEAR(Fc, 0.1839, 2 * 0.114);
  EXPECT_NEAR(offset, -0.07586, 2 * 0.096);
}

}  // namespace
}  // namespace neuralsim
