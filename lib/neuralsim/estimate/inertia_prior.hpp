// The geometric prior on a link's inertia (estimate.prior: {geometric: w};
// issue #41): the affine-invariant Riemannian distance between the fitted
// pseudo-inertia J (model/parameterization.hpp) and the model's J0,
//
//   d(J, J0) = ‖log(J0^{-1/2} J J0^{-1/2})‖_F = (Σ_i log² λ_i)^{1/2},
//
// λ_i the eigenvalues of J0⁻¹ J (Lee, Wensing & Park, "Geometric robot
// dynamic identification: a convex programming approach", IEEE T-RO 36(2),
// 2020, §III-B; the metric of Pennec, Fillard & Ayache, IJCV 66, 2006).
//
// Why this and not a Euclidean prior on the parameters: d is unchanged by a
// change of link frame and of length or mass units (d(X J Xᵀ, X J0 Xᵀ) =
// d(J, J0) for any invertible X), so one weight means the same for a 50 g
// finger and a 20 kg torso; and it grows without bound as J approaches the
// boundary of physical consistency (some λ → 0), so a poorly excited link
// cannot collapse toward a zero mass or inertia, which a Euclidean prior of
// the same weight allows at a finite cost. (Lee et al. also give the
// entropic, log-det divergence; this is their geometric one.)
//
// As least-squares residuals: r = svec(log A) with A = L0⁻¹ J L0⁻ᵀ
// (J0 = L0 L0ᵀ; A is similar to J0⁻¹ J: the same λ) and svec the ten
// entries of a symmetric 4×4 with the off-diagonal ones times √2, so that
// ‖r‖² = d². Derivative: the Daleckii–Krein formula (Higham, "Functions of
// Matrices", SIAM 2008, Thm 3.11): with A = V Λ Vᵀ,
//   d log A = V (F ∘ (Vᵀ dA V)) Vᵀ,  F_ij = (log λ_i − log λ_j)/(λ_i − λ_j),  F_ii = 1/λ_i,
// exact also where eigenvalues repeat (A = 1 at the prior's centre), where
// differentiating an eigensolver would not be.
#pragma once

#include <vector>

#include <Eigen/Core>

#include "neuralsim/core/scalar.hpp"
#include "neuralsim/model/model.hpp"
#include "neuralsim/parameters/parameter_set.hpp"

namespace neuralsim {

using Vec10 = Eigen::Matrix<double, 10, 1>;

class GeometricInertiaDistance {
 public:
  // Throws InvalidArgument unless J0 is symmetric positive definite.
  explicit GeometricInertiaDistance(const Eigen::Matrix4d& J0);
  // r with ‖r‖ = d(J, J0), and with `dJ` (symmetric directions) the
  // derivative of r along each into `dr`. False when J is not positive
  // definite (r untouched).
  bool residual(const Eigen::Matrix4d& J, Vec10* r, const std::vector<Eigen::Matrix4d>& dJ = {},
                std::vector<Vec10>* dr = nullptr) const;
  double distance(const Eigen::Matrix4d& J) const;  // +inf when J is not positive definite

 private:
  Eigen::Matrix4d L0_inverse_;
};

// The prior's rows of one link: √w · r(J(x)), J(x) the link's
// pseudo-inertia when `params` at variables x are applied to `model`, J0
// the model's own.
class LinkInertiaPrior {
 public:
  LinkInertiaPrior(const Model<double>& model, const ParameterSet& params, int body, double weight);
  int body() const { return body_; }
  // The variables of `params` that change the link's inertia (ascending).
  const std::vector<int>& variables() const { return variables_; }
  // r (10 values) and, when `jacobian` is not null, ∂r/∂x (10 × params.size(),
  // row-major). False when J(x) is not positive definite.
  bool evaluate(const double* x, double* r, double* jacobian) const;

 private:
  const ParameterSet& params_;
  Model<Jet8> model_;
  int body_;
  double sqrt_weight_;
  GeometricInertiaDistance distance_;
  std::vector<int> variables_;
};

// The body whose inertia parameter `p` changes (a log-Cholesky block, a
// mass, COM or inertia entry), or -1.
int inertial_body(const EstimatedParameter& p);
// Every such body of `params`, ascending, each once.
std::vector<int> inertial_bodies(const ParameterSet& params);

}  // namespace neuralsim
