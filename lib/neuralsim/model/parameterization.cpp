#include "neuralsim/model/parameterization.hpp"

#include <Eigen/Cholesky>
#include <cmath>

#include "neuralsim/core/dense.hpp"
#include "neuralsim/core/errors.hpp"

namespace neuralsim {

const char* transformation_name(Transformation t) {
  switch (t) {
    case Transformation::kIdentity: return "identity";
    case Transformation::kLog: return "log";
    case Transformation::kLogCholesky: return "log_cholesky";
  }
  return "?";
}

Eigen::Matrix<double, 10, 1> log_cholesky_from_inertia(const Inertia<double>& I, const std::string& what) {
  Eigen::Matrix4d J;
  const Eigen::Matrix3d Sigma = 0.5 * I.I_origin.trace() * Eigen::Matrix3d::Identity() - I.I_origin;
  J.topLeftCorner<3, 3>() = Sigma;
  J.block<3, 1>(0, 3) = I.h;
  J.block<1, 3>(3, 0) = I.h.transpose();
  J(3, 3) = I.mass;
  // J = U Uᵀ with U upper triangular: Cholesky of the "reversed" matrix.
  Eigen::Matrix4d P = Eigen::Matrix4d::Zero();
  for (int i = 0; i < 4; ++i) P(i, 3 - i) = 1;
  Eigen::LLT<Eigen::Matrix4d> llt(P * J * P);
  if (llt.info() != Eigen::Success) {
    // A pseudo-inertia that is positive definite up to rounding (a fit that
    // nearly collapsed a principal moment writes one: J's smallest
    // eigenvalue 1e-12 of its largest, lost in forming J from the stored
    // inertia) is accepted, its eigenvalues raised to 1e-12 of the largest:
    // what a tool writes it reads back. A clearly negative eigenvalue (the
    // triangle inequality broken) is not rounding.
    const SymmetricEigen e = symmetric_eigen(J);
    const double top = e.values.cwiseAbs().maxCoeff(), floor = 1e-12 * top;
    if (!(e.values.minCoeff() > -1e-9 * top))
      throw ModelError(what + ": inertia is not physically consistent (pseudo-inertia not positive definite)");
    const Eigen::Matrix4d Jp =
        e.vectors * e.values.cwiseMax(floor).asDiagonal() * e.vectors.transpose();
    llt.compute(P * (0.5 * (Jp + Jp.transpose())) * P);
    if (llt.info() != Eigen::Success)
      throw ModelError(what + ": inertia is not physically consistent (pseudo-inertia not positive definite)");
  }
  const Eigen::Matrix4d L = llt.matrixL();
  const Eigen::Matrix4d U = P * L * P;  // upper triangular, U Uᵀ = J
  const double alpha = std::log(U(3, 3));
  const Eigen::Matrix4d Un = U / U(3, 3);
  Eigen::Matrix<double, 10, 1> th;
  th << alpha, std::log(Un(0, 0)), std::log(Un(1, 1)), std::log(Un(2, 2)), Un(0, 1), Un(1, 2), Un(0, 2),
      Un(0, 3), Un(1, 3), Un(2, 3);
  return th;
}

}  // namespace neuralsim
