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
#include <Eigen/SparseCore>
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
  // Nuisance parameters profiled out of J (profile_nuisance below):
  // gauss_newton's s² has m − P − nuisance degrees of freedom.
  int nuisance = 0;
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

// Nuisance parameters (fitted starting states, multiple-shooting segment
// states) profiled out of the Jacobian J = [J_θ J_s] of a joint fit:
// J̃_θ = (I − J_s J_s⁺) J_θ, the part of each θ column the nuisance columns
// cannot mimic (Frisch–Waugh–Lovell; Seber & Wild, *Nonlinear Regression*,
// 1989, §2.1.3 and §5.9). θ's block of the joint Gauss–Newton covariance
// (JᵀJ)⁻¹ is (J̃_θᵀJ̃_θ)⁻¹, and θ's block of the joint sandwich is the
// sandwich of J̃_θ (the nuisance rows of the joint A⁻¹Jᵀ vanish from θ's),
// so every estimate above, and the identifiability analysis, applied to
// J̃_θ accounts for the nuisance parameters (the bootstrap's replicates
// then keep the projection of the full data: a linearization). J_s⁺ is
// taken through a sparse LDLᵀ of J_sᵀJ_s with a relative 1e-12 diagonal
// shift, which tends to the pseudo-inverse when J_s is rank-deficient (the
// projection onto J_s's column space does not depend on the shift's form).
// The residual variance then has m − P − N degrees of freedom (N = J_s's
// columns): see analyze_identifiability's `nuisance`. A θ column the
// nuisance columns reproduce (to 1e-8 of its norm) comes back exactly zero.
Eigen::MatrixXd profile_nuisance(const Eigen::MatrixXd& J_theta, const Eigen::SparseMatrix<double>& J_nuisance);

// The rows that are observations: all but those with r = 0 and a zero row
// of J, which a missing entry of the data (NaN) or a masked delayed sample
// leaves (estimate/observation.hpp). Such a row says nothing about θ nor
// about the noise, so it takes no degree of freedom: the residual variance
// divides by (informative rows − P − N), not by every row.
int informative_rows(const Eigen::MatrixXd& J, const Eigen::VectorXd& r);

}  // namespace neuralsim
