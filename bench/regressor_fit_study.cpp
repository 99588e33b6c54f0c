// The 7-DoF inverse-dynamics fit of issue #41, timed on both routes
// (estimate/regressor_residual.cpp against RNEA on Jets per sample):
//   build/bench/study_regressor_fit [seconds per trajectory=10] [max iterations=100] [routes=both|fast] [rate Hz=200]
//       [DIR: only write DIR/panda7.urdf and DIR/panda_excitation.h5 for configs/simid_panda_inverse_dynamics.yaml]
//   build/bench/study_regressor_fit [seconds] [max iterations] coverage [rate Hz] [seeds=10] [Savitzky–Golay window]
//       the base parameters' interval coverage over seeds (a new truth and
//       noise per seed), then a poor excitation fitted without a prior and
//       with the geometric prior (estimate/inertia_prior.hpp) at several weights
//
// Model: the Panda of ../shared/models (fingers fixed: 7 joints, 7 moving
// links), with the sigmoid joint friction of its published model (Gaz,
// Cognetti, Oliva, Robuffo Giordano & De Luca, IEEE RA-L 4(4), 2019,
// φ1, φ2, φ3 per joint). Truth: the URDF's links with masses scaled by
// 1 ± 20 % and COMs moved up to 2 cm (seeded), plus damping and torque
// offsets. Data from our own engine: two trajectories of a 5-harmonic
// Fourier excitation per joint (Swevers et al. 1997) inside the joint
// limits, sampled at 200 Hz (or the rate given); τ = RNEA(q, q̇, q̈) − passive(q, q̇) at the
// exact states, plus Gaussian noise (0.05 N·m); the fit estimates q̇, q̈
// from q with simid's default Savitzky–Golay filter, as on a recording.
// Fit: the 98 parameters of the issue, 7 × 10 log-Cholesky coordinates
// and per joint friction, friction shift, damping, torque offset, from
// the URDF's values (the slopes φ2 fixed at the published values).
// Printed: per route the wall time, LM iterations, final cost, and the
// fitted base parameters' largest error in standard errors.
#include <Eigen/Eigenvalues>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "neuralsim/dynamics/inverse_dynamics_regressor.hpp"
#include "neuralsim/dynamics/rnea.hpp"
#include "neuralsim/estimate/base_parameters.hpp"
#include "neuralsim/estimate/estimation_problem.hpp"
#include "neuralsim/estimate/identifiability.hpp"
#include "neuralsim/experiment/estimation_config.hpp"
#include "neuralsim/io/config.hpp"
#include "neuralsim/io/hdf5_trajectory.hpp"
#include "neuralsim/io/urdf_model.hpp"
#include "neuralsim/step/passive_forces.hpp"

using namespace neuralsim;

namespace {

// The shared Panda with its finger joints fixed (7 joints).
std::string panda_seven_dof_urdf() {
  std::ifstream in(std::string(NEURALSIM_SHARED_DIR) + "/models/franka_panda/panda.urdf");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  for (size_t at = text.find("type=\"prismatic\""); at != std::string::npos; at = text.find("type=\"prismatic\""))
    text.replace(at, 16, "type=\"fixed\"");
  return text;
}

Model<double> panda_seven_dof() {
  Model<double> m = build_urdf_model(panda_seven_dof_urdf(), "panda.urdf (fingers fixed)");
  const double phi1[7] = {0.5462, 0.87224, 0.64128, 1.2794, 0.83909, 0.30394, 0.56532};
  const double phi2[7] = {5.1181, 9.0657, 10.136, 5.5903, 8.3469, 17.133, 10.336};
  const double phi3[7] = {0.039533, 0.025882, -0.04607, 0.036194, 0.026226, -0.021047, 0.0035526};
  int k = 0;
  for (Joint<double>& j : m.joints) {
    if (j.nv != 1) continue;
    j.dynamics.friction_law = FrictionLaw::kSigmoid;
    j.dynamics.coulomb_friction = phi1[k];
    j.dynamics.friction_slope = phi2[k];
    j.dynamics.friction_shift = phi3[k];
    ++k;
  }
  return m;
}

Model<double> perturbed_truth(const Model<double>& nominal, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Model<double> t = nominal;
  for (Body<double>& b : t.bodies) {
    const Inertia<double>& I = b.inertia;
    const Eigen::Vector3d c = I.com() + 0.02 * Eigen::Vector3d(u(rng), u(rng), u(rng));
    b.inertia = Inertia<double>::from_com(I.mass * (1 + 0.2 * u(rng)), c, I.inertia_about_com());
  }
  for (Joint<double>& j : t.joints) {
    j.dynamics.damping = 0.1 + 0.05 * u(rng);
    j.dynamics.torque_offset = 0.1 * u(rng);
  }
  return t;
}

// q(t) = mid + Σ_k (a_k/(ω k)) sin(ω k t + φ_k) per joint, scaled into the
// middle 80 % of the joint's range; q̇, q̈ analytic.
Trajectory excitation(const Model<double>& truth, double seconds, double rate_hz, unsigned seed, double noise,
                      double amplitude = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::normal_distribution<double> n(0.0, noise);
  const int nv = truth.nv, H = 5;
  const double w = 2 * M_PI * 0.1, dt = 1.0 / rate_hz;
  Eigen::MatrixXd a(nv, H), phase(nv, H);
  for (int i = 0; i < nv; ++i)
    for (int h = 0; h < H; ++h) a(i, h) = u(rng), phase(i, h) = M_PI * u(rng);
  const int T = static_cast<int>(std::lround(seconds / dt)) + 1;
  Trajectory tr;
  tr.time.resize(T);
  tr.q.resize(T, nv);
  tr.qd.resize(T, nv);
  tr.tau.resize(T, nv);
  Data<double> data(truth);
  Eigen::VectorXd q(nv), qd(nv), qdd(nv);
  for (int k = 0; k < T; ++k) {
    const double t = k * dt;
    for (const Joint<double>& j : truth.joints) {
      if (j.nv != 1) continue;
      const int i = j.idx_v;
      const double mid = 0.5 * (j.lower + j.upper), half = amplitude * 0.4 * (j.upper - j.lower) / 2.2;
      double s = 0, sd = 0, sdd = 0;
      for (int h = 1; h <= H; ++h) {
        const double x = w * h * t + phase(i, h - 1), A = a(i, h - 1) / h;
        s += A * std::sin(x);
        sd += A * w * h * std::cos(x);
        sdd -= A * w * h * w * h * std::sin(x);
      }
      q[i] = mid + half * s, qd[i] = half * sd, qdd[i] = half * sdd;
    }
    rnea(truth, data, q, qd, qdd);
    passive_forces(truth, data, q, qd);
    tr.time[k] = t;
    tr.q.row(k) = q.transpose();
    tr.qd.row(k) = qd.transpose();
    for (int i = 0; i < nv; ++i) tr.tau(k, i) = data.tau[i] - data.tau_passive[i] + n(rng);
  }
  tr.name = "excitation" + std::to_string(seed);
  return tr;
}

ParameterSet panda_parameters(const Model<double>& nominal) {
  std::string yaml = "p: [";
  for (int b = 0; b < nominal.num_bodies(); ++b)  // the links that move (not panda_link0, the fixed base)
    if (nominal.joints[b].nv > 0)
      yaml += "{name: link." + nominal.bodies[b].name + ".inertial, transform: log_cholesky}, ";
  for (const Joint<double>& j : nominal.joints)
    if (j.nv == 1)
      for (const char* c : {"friction", "friction_shift", "damping", "torque_offset"})
        yaml += "{name: joint." + j.name + "." + c + "}, ";
  yaml.resize(yaml.size() - 2);
  yaml += "]";
  return read_parameter_set(Config::parse(yaml, "study.yaml"), "p", nominal);
}

// One regressor-route fit from the URDF's values, with its base parameters
// and their standard errors as simid reports them (fit_base_parameters).
struct StudyFit {
  LocalResult result;
  Model<double> fitted;
  BaseParameterFit base;
  double seconds = 0;
};
StudyFit fit_study(const Model<double>& nominal, const ParameterSet& params, const std::vector<Trajectory>& data,
                   double geometric_prior, int max_iterations, int window = 0) {
  std::vector<const Trajectory*> train;
  for (const Trajectory& t : data) train.push_back(&t);
  const ResidualContext ctx{&nominal, &params, StepOptions{}, ObservationSpec{}};
  ProblemOptions po;
  po.formulation = Formulation::kInverseDynamics;
  po.derivatives = default_derivative_options(&nominal);
  if (window > 0) po.derivatives.window = window;  // Savitzky–Golay window (samples)
  po.geometric_prior_weight = geometric_prior;
  const auto t0 = std::chrono::steady_clock::now();
  EstimationProblem problem(ctx, train, po);
  SolverOptions so;
  so.max_iterations = max_iterations;
  StudyFit f;
  f.result = problem.solve(params.initial_variables(), so);
  f.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  f.fitted = nominal;
  params.apply(f.result.x.data(), f.fitted);
  Eigen::VectorXd residuals;
  const Eigen::MatrixXd J = problem.parameter_jacobian(f.result.x, &residuals);
  std::vector<InverseDynamicsSamples> samples;
  Eigen::Index rows = 0;
  for (const Trajectory& t : data) {
    samples.push_back(prepare_inverse_dynamics(t, po.derivatives, 1));
    rows += samples.back().q.rows() * nominal.nv;
  }
  std::vector<const InverseDynamicsSamples*> ptrs;
  for (const InverseDynamicsSamples& k : samples) ptrs.push_back(&k);
  const Eigen::VectorXd data_residuals = residuals.head(rows);
  const double s2 = analyze_identifiability(params, f.result.x, J.topRows(rows), data_residuals).residual_variance;
  f.base = fit_base_parameters(nominal, params, f.result.x, ptrs, J.topRows(rows), s2);
  return f;
}

// (β̂ − β_true)/σ per base parameter.
Eigen::VectorXd base_z_scores(const StudyFit& f, const Model<double>& truth) {
  Eigen::VectorXd pi(f.base.standard);
  for (size_t l = 0; l < f.base.links.size(); ++l)
    pi.segment<10>(10 * static_cast<Eigen::Index>(l)) =
        inertial_parameters(truth.bodies[static_cast<size_t>(truth.body_index(f.base.links[l]))].inertia);
  const Eigen::VectorXd beta = f.base.base.base_values(pi);
  Eigen::VectorXd z(beta.size());
  for (Eigen::Index k = 0; k < beta.size(); ++k)
    z[k] = (f.base.estimates[static_cast<size_t>(k)].value - beta[k]) / f.base.estimates[static_cast<size_t>(k)].std_error;
  return z;
}

// How far the fitted links are from the truth's: mass ratios, COM shifts,
// principal moments about the COM (ratio of the smallest).
void print_plausibility(const Model<double>& fitted, const Model<double>& truth) {
  double mmin = 1e300, mmax = 0, shift = 0, imin = 1e300;
  for (int b = 0; b < truth.num_bodies(); ++b) {
    if (truth.joints[static_cast<size_t>(b)].nv == 0) continue;
    const Inertia<double>&F = fitted.bodies[static_cast<size_t>(b)].inertia, &T = truth.bodies[static_cast<size_t>(b)].inertia;
    mmin = std::min(mmin, F.mass / T.mass);
    mmax = std::max(mmax, F.mass / T.mass);
    shift = std::max(shift, (F.com() - T.com()).norm());
    const Eigen::Vector3d pf = Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d>(F.inertia_about_com()).eigenvalues();
    const Eigen::Vector3d pt = Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d>(T.inertia_about_com()).eigenvalues();
    imin = std::min(imin, pf.minCoeff() / pt.minCoeff());
  }
  std::printf("mass / truth %.3f–%.3f, largest COM shift %.1f cm, smallest principal moment / truth's %.3g", mmin,
              mmax, 100 * shift, imin);
}

int coverage_study(const Model<double>& nominal, double seconds, double rate_hz, int seeds, int max_iterations,
                   int window) {
  const ParameterSet params = panda_parameters(nominal);
  std::printf("Coverage of the base parameters' 95 %% intervals: Panda 7-DoF, %d parameters, 2 × %.0f s at %.0f Hz, "
              "0.05 N·m noise, a new truth and noise per seed\n",
              params.size(), seconds, rate_hz);
  int inside = 0, total = 0;
  double sum_z2 = 0;
  for (int seed = 1; seed <= seeds; ++seed) {
    const Model<double> truth = perturbed_truth(nominal, static_cast<unsigned>(seed));
    const std::vector<Trajectory> data = {excitation(truth, seconds, rate_hz, 100 + 2 * seed, 0.05),
                                          excitation(truth, seconds, rate_hz, 101 + 2 * seed, 0.05)};
    const StudyFit f = fit_study(nominal, params, data, 0, max_iterations, window);
    const Eigen::VectorXd z = base_z_scores(f, truth);
    const int in = static_cast<int>((z.array().abs() <= 1.96).count());
    inside += in;
    total += static_cast<int>(z.size());
    sum_z2 += z.squaredNorm();
    std::printf("seed %d: %d iterations, %.2f s, cost %.6g; %d of %zd base parameters inside their 95 %% interval, "
                "mean z² %.3f, max |z| %.2f\n",
                seed, f.result.iterations, f.seconds, f.result.cost, in, z.size(), z.squaredNorm() / z.size(),
                z.cwiseAbs().maxCoeff());
    std::fflush(stdout);
  }
  std::printf("all seeds: %d of %d inside (%.1f %%), mean z² %.3f (1 for calibrated intervals)\n\n", inside, total,
              100.0 * inside / total, sum_z2 / total);
  // Poor excitation: 5 % of the amplitude, the same truth.
  const Model<double> truth = perturbed_truth(nominal, 1);
  const std::vector<Trajectory> poor = {excitation(truth, seconds, rate_hz, 2, 0.05, 0.05),
                                        excitation(truth, seconds, rate_hz, 3, 0.05, 0.05)};
  std::printf("Poor excitation (5 %% of the amplitude): fitted links against the truth\n");
  for (double w : {0.0, 0.01, 0.1, 1.0}) {
    const StudyFit f = fit_study(nominal, params, poor, w, max_iterations);
    std::printf("geometric prior %g: %d iterations, %.2f s, cost %.6g; ", w, f.result.iterations, f.seconds,
                f.result.cost);
    print_plausibility(f.fitted, truth);
    std::printf("\n");
    std::fflush(stdout);
  }
  std::printf("(the URDF's values, the fit's start: ");
  print_plausibility(nominal, truth);
  std::printf(")\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 10.0;
  const int max_iterations = argc > 2 ? std::atoi(argv[2]) : 100;
  const bool both = argc > 3 ? std::string(argv[3]) != "fast" : true;
  const double rate_hz = argc > 4 ? std::atof(argv[4]) : 200.0;
  const Model<double> nominal = panda_seven_dof();
  if (argc > 3 && std::string(argv[3]) == "coverage")
    return coverage_study(nominal, seconds, rate_hz, argc > 5 ? std::atoi(argv[5]) : 10, max_iterations,
                          argc > 6 ? std::atoi(argv[6]) : 0);
  const Model<double> truth = perturbed_truth(nominal, 1);
  std::vector<Trajectory> data = {excitation(truth, seconds, rate_hz, 2, 0.05), excitation(truth, seconds, rate_hz, 3, 0.05)};
  if (argc > 5) {
    // The model and the data for configs/simid_panda_inverse_dynamics.yaml.
    const std::string dir = argv[5];
    std::ofstream(dir + "/panda7.urdf") << panda_seven_dof_urdf();
    TrajectorySet set;
    set.meta.model = "panda7.urdf";
    set.meta.joint_names = nominal.velocity_names();
    set.meta.q_names = nominal.position_names();
    set.meta.generator = "study_regressor_fit";
    set.trajectories = data;
    write_trajectories(dir + "/panda_excitation.h5", set);
    std::printf("wrote %s/panda7.urdf and %s/panda_excitation.h5\n", dir.c_str(), dir.c_str());
    return 0;
  }
  std::vector<const Trajectory*> train;
  for (const Trajectory& t : data) train.push_back(&t);
  const ParameterSet params = panda_parameters(nominal);
  std::printf("Panda 7-DoF, %d parameters, %d samples per trajectory x %zu, noise 0.05 N·m\n", params.size(),
              static_cast<int>(data[0].size()), data.size());
  const ResidualContext ctx{&nominal, &params, StepOptions{}, ObservationSpec{}};
  // The truth's base parameters over the links.
  const BaseParameters base = compute_base_parameters(random_state_regressor(nominal, 100, 7));
  const Eigen::VectorXd beta_true = base.base_values(model_inertial_parameters(truth));
  std::printf("base parameters (random states): %d of %d\n", base.rank, 10 * nominal.num_bodies());
  for (const bool regressor : {true, false}) {
    if (!regressor && !both) break;
    ProblemOptions po;
    po.formulation = Formulation::kInverseDynamics;
    po.regressor = regressor;
    po.derivatives = default_derivative_options(&nominal);
    const auto t0 = std::chrono::steady_clock::now();
    EstimationProblem problem(ctx, train, po);
    SolverOptions so;
    so.max_iterations = max_iterations;
    const auto tj = std::chrono::steady_clock::now();
    Eigen::VectorXd residuals;
    problem.parameter_jacobian(params.initial_variables(), &residuals);
    const double jacobian_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - tj).count();
    const LocalResult r = problem.solve(params.initial_variables(), so);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    Model<double> fitted = nominal;
    params.apply(r.x.data(), fitted);
    const Eigen::VectorXd beta = base.base_values(model_inertial_parameters(fitted));
    const double rel = ((beta - beta_true).cwiseAbs().array() / beta_true.cwiseAbs().array().max(1e-3)).maxCoeff();
    std::printf("%s: %.2f s wall (setup + Jacobian + solve; one Jacobian of all residuals %.3f s; solve %.2f s), "
                "%d iterations, cost %.6g -> %.6g, %s\n"
                "  base parameters: max |β − β_true| / max(|β_true|, 1e-3) = %.3g, max |β − β_true| = %.3g; "
                "fitted link masses:",
                problem.torque_route().c_str(), wall, jacobian_s, r.seconds, r.iterations, r.initial_cost, r.cost,
                r.report.c_str(), rel, (beta - beta_true).cwiseAbs().maxCoeff());
    for (const Body<double>& b : fitted.bodies) std::printf(" %.3f", b.inertia.mass);
    std::printf(" (true:");
    for (const Body<double>& b : truth.bodies) std::printf(" %.3f", b.inertia.mass);
    std::printf(")\n");
    std::fflush(stdout);
  }
  return 0;
}
