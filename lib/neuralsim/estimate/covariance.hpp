// Covariance of least-squares estimates θ̂ = argmin ½‖r(θ)‖², from the
// Jacobian J = ∂r/∂θ and the residuals r at the optimum. Three estimates,
// which differ in what they assume about the residuals:
//
//  - gauss_newton: Σ = s² (JᵀJ)⁻¹, s² = ‖r‖²/(m − P) (Ljung, *System
//    Identification*, 2nd ed., §9.2). Holds when the residuals are
//    independent, of equal variance, and the model is right. On model
//    mismatch or correlated residuals (a shooting window, neighbouring
//    filtered samples) it can be many times too small.
//  - sandwich: Σ = A⁻¹ B A⁻¹ · G/(G − 1), A = JᵀJ, B = Σ_g J_gᵀ r_g r_gᵀ J_g
//    over G clusters of residual rows (White, Econometrica 48, 1980;
//    cluster-robust form: Liang & Zeger, Biometrika 73, 1986; G/(G − 1) is
//    the usual small-sample factor). Holds for any variance and any
//    correlation within a cluster, as long as clusters are independent and
//    many (G ≫ P); it is the covariance of the pseudo-true parameters the
//    fit converges to when the model is wrong. Undefined for G < 2 (the
//    scores sum to zero at the optimum).
//  - bootstrap: clusters drawn with replacement, B replicates; each
//    replicate takes one Gauss–Newton step from θ̂ on the resampled cost,
//    Δ_b = −(Σ_g w_g J_gᵀJ_g)⁻¹ Σ_g w_g J_gᵀ r_g (w_g: times cluster g was
//    drawn), and Σ is the sample covariance of the Δ_b. For a linear
//    problem this is exactly the refitting cluster bootstrap; for a
//    nonlinear one it is its linearization at θ̂ (an estimating-equation
//    bootstrap, Hu & Kalbfleisch, Can. J. Stat. 28, 2000). Same assumptions
//    as the sandwich, and also needs G ≫ P. Replicate b draws from its own
//    generator seeded by (seed, b), and the replicates are reduced in index
//    order, so the result is the same at any thread count.
//
// Rank-deficient J: directions whose singular value is below
// singular_threshold · σ_max are left out of (JᵀJ)⁻¹ (a pseudo-inverse),
// as in identifiability.hpp; such parameters are reported as not
// identifiable there, whatever the method.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <vector>

namespace neuralsim {

// The clusters of residual rows the robust estimates resample or sum over:
// whole trajectories, or windows (a shooting window or segment; for inverse
// dynamics, runs of consecutive samples). EstimationProblem::residual_clusters.
enum class ClusterBy { kTrajectory, kWindow };

enum class UncertaintyMethod { kGaussNewton, kSandwich, kBootstrap };

const char* uncertainty_method_name(UncertaintyMethod m);  // "gauss_newton", "sandwich", "bootstrap"
// One line: when the estimate holds.
const char* uncertainty_assumption(UncertaintyMethod m);

struct CovarianceOptions {
  UncertaintyMethod method = UncertaintyMethod::kGaussNewton;
  int bootstrap_samples = 200;
  uint64_t seed = 1;
  double singular_threshold = 1e-4;
};

struct CovarianceEstimate {
  UncertaintyMethod method = UncertaintyMethod::kGaussNewton;
  Eigen::MatrixXd covariance;  // P × P; NaN when undefined (sandwich/bootstrap with < 2 clusters)
  Eigen::VectorXd std_error;   // √diag
  int clusters = 0;            // distinct clusters (0 for gauss_newton)
  int bootstrap_samples = 0;
};

// `cluster[i]` is the cluster of residual row i, in 0 .. G − 1 (every id
// used at least once); ignored by gauss_newton. Throws InvalidArgument on
// mismatched sizes or bad ids.
CovarianceEstimate estimate_covariance(const Eigen::MatrixXd& J, const Eigen::VectorXd& r,
                                       const std::vector<int>& cluster, const CovarianceOptions& options);

// Cluster ids for consecutive groups of rows: sizes[g] rows in cluster g.
std::vector<int> clusters_from_sizes(const std::vector<int>& sizes);

}  // namespace neuralsim
