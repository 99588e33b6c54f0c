// The compact spatial-algebra routines against their 6x6 matrix definitions
// (Featherstone, RBDA §2.8-2.13, table 2.5): every fast path must equal the
// textbook matrix product it replaces.
#include <gtest/gtest.h>

#include <random>

#include <Eigen/Dense>

#include "neuralsim/spatial/inertia.hpp"
#include "support/test_models.hpp"

namespace neuralsim {
namespace {

constexpr double kTol = 1e-12;

struct SpatialTest : ::testing::Test {
  std::mt19937 rng{2024};
  std::uniform_real_distribution<double> u{-1.0, 1.0};

  Vec6<double> random6() {
    Vec6<double> v;
    for (int i = 0; i < 6; ++i) v[i] = u(rng);
    return v;
  }
  Transform<double> random_transform() {
    const Eigen::Vector3d axis = Eigen::Vector3d(u(rng), u(rng), u(rng)).normalized();
    return Transform<double>(axis_angle_rotation<double>(axis, 3.0 * u(rng)),
                             Eigen::Vector3d(u(rng), u(rng), u(rng)));
  }
  // Motion cross-product matrix crm(v) = [w× 0; v× w×] (RBDA eq. 2.31).
  static Mat6<double> crm(const Vec6<double>& v) {
    Mat6<double> M = Mat6<double>::Zero();
    M.topLeftCorner<3, 3>() = skew<double>(ang(v));
    M.bottomRightCorner<3, 3>() = skew<double>(ang(v));
    M.bottomLeftCorner<3, 3>() = skew<double>(lin(v));
    return M;
  }
};

TEST_F(SpatialTest, MotionMatrixMatchesDefinition) {
  // X = [E 0; -E r× E]: a pure translation by r maps the velocity of a body
  // point at the A-origin, v, to v - r × w at B's origin.
  const Transform<double> X = random_transform();
  Mat6<double> expected = Mat6<double>::Zero();
  expected.topLeftCorner<3, 3>() = X.E;
  expected.bottomRightCorner<3, 3>() = X.E;
  expected.bottomLeftCorner<3, 3>() = -X.E * skew(X.r);
  EXPECT_LT((X.motion_matrix() - expected).norm(), kTol);
  const Vec6<double> m = random6();
  EXPECT_LT((X.apply_motion(m) - expected * m).norm(), kTol);
}

TEST_F(SpatialTest, CompositionAndInverseAgreeWithMatrices) {
  for (int trial = 0; trial < 20; ++trial) {
    const Transform<double> A = random_transform(), B = random_transform();
    const Mat6<double> MA = A.motion_matrix(), MB = B.motion_matrix();
    EXPECT_LT(((A * B).motion_matrix() - MA * MB).norm(), kTol);
    EXPECT_LT((A.inverse().motion_matrix() - MA.inverse()).norm(), 1e-11);
    EXPECT_LT(((A * A.inverse()).motion_matrix() - Mat6<double>::Identity()).norm(), kTol);

    const Vec6<double> m = random6(), f = random6();
    EXPECT_LT((A.apply_motion_inverse(m) - MA.inverse() * m).norm(), 1e-11);
    // Force transform X* = X⁻ᵀ, and its inverse is Xᵀ.
    EXPECT_LT((A.apply_force(f) - MA.inverse().transpose() * f).norm(), 1e-11);
    EXPECT_LT((A.apply_force_inverse(f) - MA.transpose() * f).norm(), kTol);
  }
}

TEST_F(SpatialTest, ForceTransformIsDualOfMotionTransform) {
  // Power fᵀm is frame independent: (X* f)ᵀ (X m) = fᵀ m.
  for (int trial = 0; trial < 20; ++trial) {
    const Transform<double> X = random_transform();
    const Vec6<double> m = random6(), f = random6();
    EXPECT_NEAR(X.apply_force(f).dot(X.apply_motion(m)), f.dot(m), kTol);
    EXPECT_NEAR(X.apply_force_inverse(f).dot(X.apply_motion_inverse(m)), f.dot(m), kTol);
  }
}

TEST_F(SpatialTest, InertiaToParentIsCongruenceTransform) {
  for (int trial = 0; trial < 20; ++trial) {
    const Transform<double> X = random_transform();
    const Inertia<double> I = testing::random_inertia(rng);
    const Mat6<double> M = X.motion_matrix();
    const Mat6<double> expected = M.transpose() * I.matrix() * M;
    EXPECT_LT((Inertia<double>::to_parent(X, I).matrix() - expected).norm(), 1e-11);
    // Mass and COM are carried along: the COM maps as a point, B -> A.
    const Inertia<double> IA = Inertia<double>::to_parent(X, I);
    EXPECT_NEAR(IA.mass, I.mass, kTol);
    EXPECT_LT((IA.com() - (X.r + X.E.transpose() * I.com())).norm(), kTol);
  }
}

TEST_F(SpatialTest, InertiaTimesMotionMatchesMatrix) {
  const Inertia<double> I = testing::random_inertia(rng);
  const Vec6<double> v = random6();
  EXPECT_LT((I * v - I.matrix() * v).norm(), kTol);
  // Kinetic energy of a point mass m at c: ½ m |v_o + w × c|².
  const double m = 1.7;
  const Eigen::Vector3d c(0.3, -0.4, 0.2);
  const Inertia<double> P = Inertia<double>::from_com(m, c, Eigen::Matrix3d::Zero());
  const Eigen::Vector3d vp = lin(v) + ang(v).cross(c);
  EXPECT_NEAR(0.5 * v.dot(P * v), 0.5 * m * vp.squaredNorm(), kTol);
}

TEST_F(SpatialTest, TransformInertiaToParentMatchesMatrixProduct) {
  for (int trial = 0; trial < 20; ++trial) {
    const Transform<double> X = random_transform();
    const Mat6<double> R = Mat6<double>::Random();
    const Mat6<double> A = R + R.transpose();  // any symmetric matrix
    const Mat6<double> M = X.motion_matrix();
    EXPECT_LT((transform_inertia_to_parent(X, A) - M.transpose() * A * M).norm(), 1e-11);
  }
}

TEST_F(SpatialTest, ForceCrossIsNegativeTransposeOfMotionCross) {
  for (int trial = 0; trial < 20; ++trial) {
    const Vec6<double> v = random6(), f = random6(), m = random6();
    // crf(v) = -crm(v)ᵀ (RBDA eq. 2.32).
    EXPECT_LT((cross_force(v, f) + crm(v).transpose() * f).norm(), kTol);
    EXPECT_LT((cross_motion(v, m) - crm(v) * m).norm(), kTol);
    EXPECT_LT(cross_motion(v, v).norm(), kTol);
  }
}

}  // namespace
}  // namespace neuralsim
