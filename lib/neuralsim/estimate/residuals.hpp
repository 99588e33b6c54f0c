// Residual formulations for identification, as Ceres cost functions with
// automatic-differentiation Jacobians. Each formulation has its own
// translation unit; the engine they run on Jets is instantiated once per
// Jet width in the lower layers (core/scalar.hpp), not here.
//
//  - Single shooting (NeuralSim): simulate a window from the measured state
//    (or from a fitted starting state) with the recorded controls; one
//    residual per observed coordinate and sample (a state difference, never
//    a re-squared sum).
//  - Multiple shooting: each segment's initial state is a free parameter
//    block; continuity residuals tie a segment's end to the next one's start.
//  - Inverse dynamics (equation error): RNEA(q, q̇, q̈; θ) - passive(q, q̇; θ)
//    - gear·τ_measured on filtered data.
#pragma once

#include <ceres/cost_function.h>

#include <memory>

#include "neuralsim/contact/contact_settings.hpp"
#include "neuralsim/core/derivative_filter.hpp"
#include "neuralsim/estimate/observation.hpp"
#include "neuralsim/parameters/parameter_set.hpp"
#include "neuralsim/step/replay.hpp"
#include "neuralsim/step/stepper.hpp"

namespace neuralsim {

// Shared, read-only context of every residual block of one problem.
struct ResidualContext {
  const Model<double>* model = nullptr;
  const ParameterSet* parameters = nullptr;
  StepOptions step;
  ObservationSpec observe;
  // The experiment's contact (null: none). Simulations install a contact
  // system whose named parameters the estimated contact.* values override.
  const ContactSettings* contact = nullptr;
};

// Samples [start, start + length] of `trajectory` (length steps).
struct Window {
  const Trajectory* trajectory = nullptr;
  int start = 0;
  int length = 0;
};

// What of a single-shooting window's starting state is fitted
// (`residual.fit_initial_state`): a nuisance parameter block per window,
// [δ (nv) if q][q̇0 (nv) if qd], with q0 = q_recorded ⊕ δ
// (integrate_configuration: tangent coordinates around the recorded sample,
// so quaternion joints stay on their manifold and δ = 0 is the recording).
// The residuals stay those of samples start + 1 ... start + length: the
// recorded start sample is only the fit's first guess (a tracker's first
// frames are its least reliable).
struct StartStateFit {
  bool q = false;
  bool qd = false;
  bool any() const { return q || qd; }
  int size(int nv) const { return (q ? nv : 0) + (qd ? nv : 0); }
};

// Parameter blocks: [θ (P)], and [start (fit.size(nv))] when fit.any().
// Residuals: length × residuals_per_sample. Estimated initial velocities
// (initial.qd.*) replace the measured q̇ of a window that starts at the
// trajectory's first sample; a fitted q̇0 replaces both.
ceres::CostFunction* make_single_shooting_cost(const ResidualContext& ctx, const Window& window,
                                               const StartStateFit& fit = {});

// The state a start block of `fit` stands for at sample `sample` of `tr`:
// q = q_recorded ⊕ δ, q̇ = the block's q̇0 (or the recorded q̇ when only q is
// fitted). `block` holds fit.size(nv) values.
void start_state(const Model<double>& model, const Trajectory& tr, int sample, const StartStateFit& fit,
                 const double* block, Eigen::VectorXd& q, Eigen::VectorXd& qd);

// The weights of a multiple-shooting segment's continuity residuals:
// factor·q·(q_end ⊖ q_next) per velocity coordinate (q in 1/rad) and
// factor·qd·(q̇_end − q̇_next) (qd in s/rad). `factor` (null: 1) is read at
// every evaluation: the problem that owns it raises it between the rounds
// of a quadratic-penalty schedule (estimation_problem.hpp).
struct ContinuityWeights {
  double q = 10, qd = 10;
  const double* factor = nullptr;
};

// Parameter blocks: [θ (P), segment state (nq + nv)] and, unless `last`,
// [next segment state (nq + nv)]. Residuals: data mismatch at samples
// 0..length-1 (0..length when last) plus, unless last, the 2·nv continuity
// residuals at the end (q then q̇), the block's last rows.
ceres::CostFunction* make_multiple_shooting_cost(const ResidualContext& ctx, const Window& window, bool last,
                                                 const ContinuityWeights& continuity);

// Filtered samples for inverse dynamics: q, q̇, q̈ and measured τ per sample.
struct InverseDynamicsSamples {
  Eigen::MatrixXd q, qd, qdd, tau;  // rows = samples
  std::vector<int> rows;            // each sample's row in the recording
  const Trajectory* trajectory = nullptr;  // the recording (its IMU rows; kept by the caller)
};
// q, q̇, q̈ (and τ when `filter_torque`) by the method of `derivatives`
// (core/derivative_filter.hpp: Savitzky–Golay on positions, or a moving
// average and central differences of q̇), every `stride`-th kept sample.
// Drops the end samples without a full window; τ is zero when not recorded.
InverseDynamicsSamples prepare_inverse_dynamics(const Trajectory& tr, const DerivativeOptions& derivatives,
                                                int stride);
// The original method: central differences on non-uniform time after a
// centred moving average of `filter_window` samples (1 = no filtering).
InverseDynamicsSamples prepare_inverse_dynamics(const Trajectory& tr, int filter_window, int stride);

// Parameter blocks: [θ]. Residuals: nv for sample `row` of `samples`, then
// 6 per IMU of ctx.observe.imus (imu_residual.hpp), then one per observed
// joint of the joint-torque and motor-current channels
// (joint_torque_residual.hpp).
ceres::CostFunction* make_inverse_dynamics_cost(const ResidualContext& ctx,
                                                const std::shared_ptr<const InverseDynamicsSamples>& samples,
                                                int row, double weight);

// The regressor route of inverse dynamics (regressor_residual.cpp). RNEA is
// linear in the standard inertial parameters π (dynamics/
// inverse_dynamics_regressor.hpp), so the residual of a sample is
//   Y_s π(θ) + τ_rotor,s + armature(θ)·q̈_s − passive_s(θ) − gear·τ_s,
// with Y_s and the rotor torques (which no fitted parameter changes)
// computed once. It applies when every fitted parameter acts only through
// the links' inertias (log-Cholesky blocks, mass, COM, inertia) or through
// joint-local terms (armature, damping, friction laws, springs, torque
// offsets), and the model has no body drag. Otherwise `why_not` (when not
// null) says which parameter or feature prevents it.
bool regressor_route_applies(const Model<double>& model, const ParameterSet& params, std::string* why_not);

// Y_s and the rotor torques of every sample of `samples`.
struct RegressorSamples {
  std::shared_ptr<const InverseDynamicsSamples> samples;
  std::vector<Eigen::MatrixXd> Y;  // per sample, nv × 10·num_bodies
  Eigen::MatrixXd tau_rotor;       // rows = samples
};
std::shared_ptr<const RegressorSamples> prepare_regressor_samples(
    const Model<double>& model, const std::shared_ptr<const InverseDynamicsSamples>& samples);

// Parameter blocks: [θ]. Residuals: nv per sample for samples
// [first, first + count), the same values as make_inverse_dynamics_cost's,
// with an exact Jacobian: Y_s ∂π/∂θ plus the joint-local terms' (∂π/∂θ and
// those by forward-mode Jets over θ, once per block, not per sample).
ceres::CostFunction* make_regressor_inverse_dynamics_cost(const ResidualContext& ctx,
                                                          const std::shared_ptr<const RegressorSamples>& samples,
                                                          int first, int count, double weight);

// The same residual with the fitted links' inertias in base-parameter
// coordinates (estimate/base_parameters.hpp): `replaced` are the columns of
// π (10·body + coordinate) of those links, `beta` the column of each base
// parameter β_k (its independent column). Y_s π becomes
// Y_s π|replaced = 0 + Σ_k Y_s[:, beta_k] β_k, exact on the samples whose
// stacked regressor defined β (W_2 = W_1 K). Parameter blocks: [θ, β]; θ's
// coordinates of those links' inertias have no effect (hold them constant).
struct BaseColumns {
  std::vector<int> beta;
  std::vector<int> replaced;
};
ceres::CostFunction* make_base_parameter_inverse_dynamics_cost(const ResidualContext& ctx,
                                                               const std::shared_ptr<const RegressorSamples>& samples,
                                                               const BaseColumns& base, int first, int count,
                                                               double weight);

// The step options of a simulation at parameters x: ctx.step with the
// fitted control delay (controls.delay) in place of sim.controls.delay.
StepOptions step_options_at(const ResidualContext& ctx, const std::vector<double>& x);

// Simulates windows of `window` samples, each restarted from the measured
// state (or from `starts`, the fitted states, at the samples they hold),
// with the parameters x applied exactly as the residuals apply them (model,
// contact, initial velocities and control delay; used for reporting and
// plots). Link poses are recorded for every observed link position under
// its data name, at its point (observation.hpp: a marker's world position
// beside its link's orientation), and for every other link the data has, and the
// sensor channels' readings (sensor_prediction.hpp: IMUs, joint torques,
// currents), both from the model's state at t_k. With sensor delays (fixed
// or fitted) the q and q̇ columns are what the residuals compare with the
// recording (sensor_delays.hpp): the model's state at t_k − d of that
// channel within the window; a sample that the residuals mask (t_k − d
// outside its window at the delay's bound; a restart sample under a
// positive delay) holds the recorded value, so it adds no error, as its
// residual is 0.
Trajectory windowed_prediction(const ResidualContext& ctx, const std::vector<double>& x, const Trajectory& data,
                               int window, const StartStates* starts = nullptr);

}  // namespace neuralsim
