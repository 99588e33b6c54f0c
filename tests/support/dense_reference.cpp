#include "support/dense_reference.hpp"

#include <Eigen/Dense>

namespace neuralsim::testing {

Eigen::MatrixXd spd_solve(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B) { return A.ldlt().solve(B); }

Eigen::MatrixXd lu_solve(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B) { return A.partialPivLu().solve(B); }

Eigen::MatrixXd least_squares(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B) {
  return A.colPivHouseholderQr().solve(B);
}

Eigen::MatrixXd orthogonal_factor(const Eigen::MatrixXd& A) {
  return Eigen::HouseholderQR<Eigen::MatrixXd>(A).householderQ();
}

double min_eigenvalue(const Eigen::MatrixXd& symmetric) {
  return Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(symmetric, Eigen::EigenvaluesOnly).eigenvalues().minCoeff();
}

}  // namespace neuralsim::testing
