#include "support/dense_reference.hpp"

#include <Eigen/Cholesky>
#include <Eigen/LU>

#include "neuralsim/core/dense.hpp"

namespace neuralsim::testing {

Eigen::MatrixXd spd_solve(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B) { return A.ldlt().solve(B); }

Eigen::MatrixXd lu_solve(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B) { return A.partialPivLu().solve(B); }

Eigen::MatrixXd least_squares(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B) {
  const SingularValueDecomposition svd = singular_value_decomposition(A, SingularVectors::kThinUV);
  return svd.V * svd.values.cwiseInverse().asDiagonal() * (svd.U.transpose() * B);
}

Eigen::MatrixXd orthogonal_factor(const Eigen::MatrixXd& A) {
  return singular_value_decomposition(A, SingularVectors::kThinUV).U;
}

double min_eigenvalue(const Eigen::MatrixXd& symmetric) { return symmetric_eigen(symmetric, false).values(0); }

}  // namespace neuralsim::testing
