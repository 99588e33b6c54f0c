// The fitted inertia of a link in physical coordinates, with standard
// errors: what a user reads after estimating `link.<body>.inertial` through
// its ten log-Cholesky coordinates θ (model/parameterization.hpp).
//
// Coordinates, in the link frame: the mass m, the centre of mass
// c = h / m, and the rotational inertia about the centre of mass
// I_c = I_o − m (|c|² 1 − c cᵀ) (the parallel-axis theorem; Featherstone,
// RBDA §2.13), reported as xx, yy, zz, xy, yz, xz.
//
// Standard errors by the delta method (first-order propagation; Wasserman,
// "All of Statistics", 2004, §9.9): σ_k² = Σ_ij G_ki Σ_ij G_kj with
// G = ∂(m, c, I_c)/∂θ exact by forward-mode Jets and Σ the covariance of
// θ. A term whose derivative is exactly 0 contributes nothing, so an
// undetermined coordinate (NaN in Σ) leaves NaN only in the quantities that
// depend on it: m = e^{2α} depends on α alone, so the mass can be known
// while the inertia is not.
#pragma once

#include <array>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "neuralsim/model/model.hpp"
#include "neuralsim/parameters/parameter_set.hpp"

namespace neuralsim {

struct InertialEstimate {
  std::string link;
  // "mass", "com.x", "com.y", "com.z", "inertia.xx", "inertia.yy",
  // "inertia.zz", "inertia.xy", "inertia.yz", "inertia.xz".
  static const std::array<const char*, 10>& coordinate_names();
  Eigen::Matrix<double, 10, 1> value;
  Eigen::Matrix<double, 10, 1> std_error;  // NaN where the data do not determine it
};

// m, c and I_c of the log-Cholesky coordinates θ, and their Jacobian ∂/∂θ.
Eigen::Matrix<double, 10, 1> inertial_coordinates(const Eigen::Matrix<double, 10, 1>& theta,
                                                  Eigen::Matrix<double, 10, 10>* jacobian = nullptr);

// One estimate per link whose inertial block `params` estimates, in the
// order of the set. `values`: the physical values of every parameter;
// `covariance`: their P × P covariance (NaN entries allowed).
std::vector<InertialEstimate> inertial_estimates(const Model<double>& model, const ParameterSet& params,
                                                 const std::vector<double>& values,
                                                 const Eigen::MatrixXd& covariance);

}  // namespace neuralsim
