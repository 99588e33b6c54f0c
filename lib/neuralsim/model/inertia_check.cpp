#include "neuralsim/model/inertia_check.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "neuralsim/core/dense.hpp"

namespace neuralsim {

std::string inertia_problem(const Inertia<double>& I) {
  std::ostringstream msg;
  msg.precision(6);
  if (!std::isfinite(I.mass) || !I.h.allFinite() || !I.I_origin.allFinite()) {
    msg << "inertial parameters must be finite (mass " << I.mass << ")";
    return msg.str();
  }
  if (I.mass < 0) {
    msg << "mass " << I.mass << " is negative";
    return msg.str();
  }
  const Eigen::Matrix3d Ic = I.inertia_about_com();
  const double asym = (Ic - Ic.transpose()).cwiseAbs().maxCoeff();
  // Rounding in I_c = Ī - m c× c×ᵀ is relative to the terms subtracted, not
  // to the (possibly zero: point mass) result.
  const double scale = std::max({Ic.cwiseAbs().maxCoeff(), I.I_origin.cwiseAbs().maxCoeff(),
                                 I.mass > 0 ? I.h.squaredNorm() / I.mass : 0.0, 1e-300});
  if (asym > 1e-9 * scale) {
    msg << "inertia about the COM is not symmetric (|I - Iᵀ| = " << asym << ")";
    return msg.str();
  }
  const Eigen::Vector3d J = symmetric_eigenvalues(0.5 * (Ic + Ic.transpose()));  // ascending
  const double tol = 1e-9 * scale;
  auto moments = [&] {
    std::ostringstream m;
    m.precision(6);
    m << "(" << J[0] << ", " << J[1] << ", " << J[2] << ")";
    return m.str();
  };
  if (J[0] < -tol) {
    msg << "inertia about the COM is not positive semidefinite: principal moments " << moments();
    return msg.str();
  }
  // With J ascending, only J2 ≤ J0 + J1 can fail.
  if (J[2] > J[0] + J[1] + tol) {
    msg << "principal moments " << moments() << " violate the triangle inequality: " << J[2] << " > " << J[0]
        << " + " << J[1];
    return msg.str();
  }
  return "";
}

}  // namespace neuralsim
