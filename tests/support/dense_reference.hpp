// Reference dense solves for the tests, compiled once (dense_reference.cpp):
// each of Eigen's decompositions costs seconds of compile time in every unit
// that instantiates it. The SVD and the symmetric eigensolver are the
// library's own instances of Eigen's (core/dense.hpp), not compiled again.
#pragma once

#include <Eigen/Core>

namespace neuralsim::testing {

// A⁻¹ B for a symmetric positive (semi)definite A (LDLT).
Eigen::MatrixXd spd_solve(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B);
// A⁻¹ B for a square A (LU with partial pivoting).
Eigen::MatrixXd lu_solve(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B);
// argmin_X ‖A X - B‖ for A of full column rank (SVD: X = V Σ⁻¹ Uᵀ B).
Eigen::MatrixXd least_squares(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B);
// An orthogonal matrix made from a square A: its left singular vectors U.
Eigen::MatrixXd orthogonal_factor(const Eigen::MatrixXd& A);
// The smallest eigenvalue of a symmetric matrix.
double min_eigenvalue(const Eigen::MatrixXd& symmetric);

}  // namespace neuralsim::testing
