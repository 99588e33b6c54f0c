#include "neuralsim/core/dense.hpp"

#include <Eigen/Eigenvalues>
#include <Eigen/QR>
#include <Eigen/SVD>

namespace neuralsim {

SymmetricEigen symmetric_eigen(const Eigen::MatrixXd& A, bool with_vectors) {
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(A, with_vectors ? Eigen::ComputeEigenvectors
                                                                          : Eigen::EigenvaluesOnly);
  SymmetricEigen r;
  r.converged = es.info() == Eigen::Success;
  r.values = es.eigenvalues();
  if (with_vectors) r.vectors = es.eigenvectors();
  return r;
}

Eigen::Vector3d symmetric_eigenvalues(const Eigen::Matrix3d& A) {
  return Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d>(A, Eigen::EigenvaluesOnly).eigenvalues();
}

SingularValueDecomposition singular_value_decomposition(const Eigen::MatrixXd& A, SingularVectors vectors) {
  unsigned options = 0;
  switch (vectors) {
    case SingularVectors::kNone: break;
    case SingularVectors::kThinV: options = Eigen::ComputeThinV; break;
    case SingularVectors::kFullV: options = Eigen::ComputeFullV; break;
    case SingularVectors::kThinUV: options = Eigen::ComputeThinU | Eigen::ComputeThinV; break;
  }
  const Eigen::JacobiSVD<Eigen::MatrixXd> svd(A, options);
  SingularValueDecomposition r;
  r.values = svd.singularValues();
  if (svd.computeU()) r.U = svd.matrixU();
  if (svd.computeV()) r.V = svd.matrixV();
  return r;
}

Eigen::VectorXd least_squares(const Eigen::MatrixXd& A, const Eigen::VectorXd& b) {
  return A.colPivHouseholderQr().solve(b);
}

}  // namespace neuralsim
