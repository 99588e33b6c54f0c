// Eigen's dense decompositions of double matrices, compiled once
// (core/dense.cpp). Instantiating one costs 3-7 s of compile time in every
// translation unit that uses it; the estimation, control and training layers
// share these instead.
#pragma once

#include <Eigen/Core>

namespace neuralsim {

// A = V diag(values) Vᵀ for a symmetric A (only its lower triangle is read).
struct SymmetricEigen {
  Eigen::VectorXd values;   // ascending
  Eigen::MatrixXd vectors;  // orthonormal columns, matching `values`; empty when not asked for
  bool converged = false;   // false: the QL iteration did not converge (values unreliable)
};
SymmetricEigen symmetric_eigen(const Eigen::MatrixXd& A, bool with_vectors = true);
// Eigenvalues (ascending) of a symmetric 3×3 matrix, e.g. principal moments.
Eigen::Vector3d symmetric_eigenvalues(const Eigen::Matrix3d& A);

// A = U diag(values) Vᵀ (one-sided Jacobi SVD: accurate small singular values).
struct SingularValueDecomposition {
  Eigen::VectorXd values;  // descending, min(rows, cols) of them
  Eigen::MatrixXd U, V;    // as asked for; empty otherwise
};
enum class SingularVectors {
  kNone,
  kThinV,   // V: cols × min(rows, cols)
  kFullV,   // V: cols × cols (with a basis of the null space when rows < cols)
  kThinUV,  // U: rows × min, V: cols × min
};
SingularValueDecomposition singular_value_decomposition(const Eigen::MatrixXd& A, SingularVectors vectors);

// The least-squares solution of A x ≈ b (QR with column pivoting; the basic
// solution when A is rank deficient). Compiled once here: the factorization's
// templates cost seconds in every translation unit that instantiates them.
Eigen::VectorXd least_squares(const Eigen::MatrixXd& A, const Eigen::VectorXd& b);

}  // namespace neuralsim
