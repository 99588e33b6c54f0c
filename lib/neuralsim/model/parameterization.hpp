// Maps between unconstrained optimizer variables and physical quantities, so
// an estimator cannot wander into non-physical models:
//  - kLog: x = log(p), p = exp(x) > 0 (masses, lengths, damping, ...).
//  - Log-Cholesky inertia (Rucker & Wensing, "Smooth parameterization of rigid-
//    body inertia", IEEE RA-L 2022): 10 unconstrained numbers θ give the
//    pseudo-inertia J = U Uᵀ ≻ 0, hence a physically consistent (m, h, Ī)
//    satisfying the triangle inequalities, for every θ.
#pragma once

#include <string>

#include "neuralsim/core/scalar.hpp"
#include "neuralsim/spatial/inertia.hpp"

namespace neuralsim {

// kLogCholesky applies to the ten coordinates of a link's inertial block
// (parameters/named_parameter.hpp), which are used as they are: the
// transformation is inertia_from_log_cholesky itself.
enum class Transformation { kIdentity, kLog, kLogCholesky };

const char* transformation_name(Transformation t);  // "identity", "log", "log_cholesky"

template <class S>
S to_physical(Transformation t, const S& x) {
  using std::exp;
  return t == Transformation::kLog ? S(exp(x)) : x;
}
inline double to_unconstrained(Transformation t, double p) {
  return t == Transformation::kLog ? std::log(p) : p;
}

// The pseudo-inertia J = [Σ h; hᵀ m] (4×4, Σ = ½ tr(I_o) 1 − I_o with I_o
// about the link frame's origin; Wensing, Kim & Slotine, RA-L 2018): J ≻ 0
// exactly for a physically consistent inertia, and a change of link frame
// T = [R p; 0 1] maps it to T J Tᵀ.
template <class S>
Eigen::Matrix<S, 4, 4> pseudo_inertia(const Inertia<S>& I) {
  Eigen::Matrix<S, 4, 4> J;
  J.template topLeftCorner<3, 3>() = S(0.5) * I.I_origin.trace() * Mat3<S>::Identity() - I.I_origin;
  J.template block<3, 1>(0, 3) = I.h;
  J.template block<1, 3>(3, 0) = I.h.transpose();
  J(3, 3) = I.mass;
  return J;
}

// θ = (α, d1, d2, d3, s12, s23, s13, t1, t2, t3);
// U = e^α [[e^d1, s12, s13, t1], [0, e^d2, s23, t2], [0, 0, e^d3, t3], [0, 0, 0, 1]].
// J = U Uᵀ = [Σ h; hᵀ m] with Σ = ½ tr(Ī) 1 - Ī, so Ī = tr(Σ) 1 - Σ (RA-L 2022, eq. 5-7).
template <class S>
Inertia<S> inertia_from_log_cholesky(const Eigen::Matrix<S, 10, 1>& th) {
  using std::exp;
  Eigen::Matrix<S, 4, 4> U = Eigen::Matrix<S, 4, 4>::Zero();
  U(0, 0) = exp(th[1]);
  U(1, 1) = exp(th[2]);
  U(2, 2) = exp(th[3]);
  U(0, 1) = th[4];
  U(1, 2) = th[5];
  U(0, 2) = th[6];
  U(0, 3) = th[7];
  U(1, 3) = th[8];
  U(2, 3) = th[9];
  U(3, 3) = S(1);
  U *= exp(th[0]);
  const Eigen::Matrix<S, 4, 4> J = U * U.transpose();
  Inertia<S> I;
  I.mass = J(3, 3);
  I.h = J.template block<3, 1>(0, 3);
  const Mat3<S> Sigma = J.template topLeftCorner<3, 3>();
  I.I_origin = Sigma.trace() * Mat3<S>::Identity() - Sigma;
  return I;
}

// Inverse map; requires a physically consistent inertia with positive mass
// (J ≻ 0), else throws ModelError naming `what`.
Eigen::Matrix<double, 10, 1> log_cholesky_from_inertia(const Inertia<double>& I, const std::string& what);

// Explicit instantiations (model/instantiate_*.cpp).
#define NEURALSIM_PARAMETERIZATION_TEMPLATES(PREFIX, S) \
  PREFIX template Inertia<S> inertia_from_log_cholesky<S>(const Eigen::Matrix<S, 10, 1>&);
NEURALSIM_FOR_EACH_SCALAR(NEURALSIM_PARAMETERIZATION_TEMPLATES, extern)

}  // namespace neuralsim
