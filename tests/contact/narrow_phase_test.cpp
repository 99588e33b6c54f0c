// Narrow phase against hand-computed distances, normals and points.
#include <gtest/gtest.h>

#include "neuralsim/contact/narrow_phase.hpp"

namespace neuralsim {
namespace {

using V = Eigen::Vector3d;

void expect_vec(const V& a, const V& b, double tol = 1e-12) {
  EXPECT_LT((a - b).norm(), tol) << a.transpose() << " vs " << b.transpose();
}

TEST(NarrowPhase, SpherePlane) {
  Hit<double> h[1];
  // Sphere r = 0.5 at height 0.3 above the plane z = 0.1: gap 0.3 - 0.1 - 0.5 = -0.3... centre at z = 0.4.
  ASSERT_EQ(sphere_plane<double>(V(1, 2, 0.4), 0.5, V(0, 0, 1), 0.1, h), 1);
  EXPECT_NEAR(h[0].distance, -0.2, 1e-15);
  expect_vec(h[0].normal, V(0, 0, 1));
  // Surfaces at z = -0.1 (sphere bottom) and z = 0.1 (plane): midway z = 0.
  expect_vec(h[0].point, V(1, 2, 0.0));
  // Tilted plane x + y = 0 through the origin, sphere at (1, 1, 0): gap √2 - r.
  const V n = V(1, 1, 0).normalized();
  sphere_plane<double>(V(1, 1, 0), 0.5, n, 0.0, h);
  EXPECT_NEAR(h[0].distance, std::sqrt(2.0) - 0.5, 1e-15);
}

TEST(NarrowPhase, BoxPlaneCorners) {
  Hit<double> h[8];
  ShapePose<double> box;
  box.c = V(0, 0, 0.5);
  box.R = Eigen::AngleAxisd(M_PI / 4, V::UnitY()).toRotationMatrix();  // on an edge
  ASSERT_EQ(box_plane<double>(box, V(0.5, 0.5, 0.5), V::UnitZ(), 0.0, h), 8);
  // Rotated 45° about y: the lowest corners are at 0.5 - 0.5·√2.
  double lowest = 1e9;
  int n_lowest = 0;
  for (auto& hit : h) lowest = std::min(lowest, hit.distance);
  for (auto& hit : h) n_lowest += std::abs(hit.distance - lowest) < 1e-12;
  EXPECT_NEAR(lowest, 0.5 - 0.5 * std::sqrt(2.0), 1e-12);
  EXPECT_EQ(n_lowest, 2);  // the edge
}

TEST(NarrowPhase, CapsulePlaneUsesEndSpheres) {
  Hit<double> h[2];
  ShapePose<double> cap;
  cap.c = V(0, 0, 0.3);
  cap.R = Eigen::AngleAxisd(M_PI / 2, V::UnitX()).toRotationMatrix();  // axis along -y: lying flat
  ASSERT_EQ(capsule_plane<double>(cap, 0.1, 0.4, V::UnitZ(), 0.0, h), 2);
  EXPECT_NEAR(h[0].distance, 0.2, 1e-12);
  EXPECT_NEAR(h[1].distance, 0.2, 1e-12);
  EXPECT_NEAR(std::abs(h[0].point.y()), 0.4, 1e-12);
  // Standing upright: only the lower end touches, at 0.3 - 0.4 - 0.1.
  cap.R.setIdentity();
  capsule_plane<double>(cap, 0.1, 0.4, V::UnitZ(), 0.0, h);
  EXPECT_NEAR(std::min(h[0].distance, h[1].distance), -0.2, 1e-12);
}

TEST(NarrowPhase, SphereSphere) {
  Hit<double> h[1];
  sphere_sphere<double>(V(0, 0, 0), 1.0, V(3, 4, 0), 2.0, h);  // centres 5 apart
  EXPECT_NEAR(h[0].distance, 2.0, 1e-14);
  expect_vec(h[0].normal, V(-0.6, -0.8, 0));  // from b towards a
  // Surface points (0.6,0.8,0)·1 on a and (3,4,0) - 2·(0.6,0.8,0) on b: midway.
  expect_vec(h[0].point, 0.5 * (V(0.6, 0.8, 0) + V(1.8, 2.4, 0)), 1e-14);
  sphere_sphere<double>(V(0, 0, 0), 1.0, V(1.5, 0, 0), 1.0, h);
  EXPECT_NEAR(h[0].distance, -0.5, 1e-14);
}

TEST(NarrowPhase, SphereBoxFaceEdgeCornerInside) {
  Hit<double> h[1];
  ShapePose<double> box;  // unit cube of half extent 1 at the origin
  const V half(1, 1, 1);
  sphere_box<double>(V(0, 0, 3), 0.5, box, half, h);  // above the top face
  EXPECT_NEAR(h[0].distance, 1.5, 1e-14);
  expect_vec(h[0].normal, V::UnitZ());
  sphere_box<double>(V(2, 2, 0), 0.5, box, half, h);  // off an edge
  EXPECT_NEAR(h[0].distance, std::sqrt(2.0) - 0.5, 1e-14);
  expect_vec(h[0].normal, V(1, 1, 0).normalized());
  sphere_box<double>(V(2, 2, 2), 0.5, box, half, h);  // off a corner
  EXPECT_NEAR(h[0].distance, std::sqrt(3.0) - 0.5, 1e-14);
  sphere_box<double>(V(0.8, 0, 0), 0.5, box, half, h);  // centre inside, nearest face +x
  EXPECT_NEAR(h[0].distance, -0.2 - 0.5, 1e-14);
  expect_vec(h[0].normal, V::UnitX());
  // A rotated box: 45° about z, sphere on the +x axis meets an edge at √2.
  box.R = Eigen::AngleAxisd(M_PI / 4, V::UnitZ()).toRotationMatrix();
  sphere_box<double>(V(3, 0, 0), 0.5, box, half, h);
  EXPECT_NEAR(h[0].distance, 3 - std::sqrt(2.0) - 0.5, 1e-12);
  expect_vec(h[0].normal, V::UnitX(), 1e-12);
}

TEST(NarrowPhase, SphereCapsule) {
  Hit<double> h[1];
  ShapePose<double> cap;  // axis z, half-length 1, radius 0.2
  sphere_capsule<double>(V(1, 0, 0.5), 0.3, cap, 0.2, 1.0, h);  // beside the cylinder part
  EXPECT_NEAR(h[0].distance, 1 - 0.5, 1e-14);
  expect_vec(h[0].normal, V::UnitX());
  sphere_capsule<double>(V(0, 0, 2), 0.3, cap, 0.2, 1.0, h);  // above the end cap
  EXPECT_NEAR(h[0].distance, 1 - 0.5, 1e-14);
  expect_vec(h[0].normal, V::UnitZ());
}

TEST(NarrowPhase, CapsuleBoxSideContact) {
  Hit<double> h[1];
  ShapePose<double> cap, box;
  cap.c = V(-0.07, 0.01, 0.05);  // vertical pusher tip r = 0.01 beside a box side
  const V half(0.05, 0.05, 0.025);
  box.c = V(0, 0, 0.025);
  ASSERT_EQ(capsule_box<double>(cap, 0.01, 0.05, box, half, h), 1);
  EXPECT_NEAR(h[0].distance, 0.07 - 0.05 - 0.01, 1e-12);
  expect_vec(h[0].normal, -V::UnitX(), 1e-12);
  cap.c.x() = -0.055;  // 5 mm into the side
  capsule_box<double>(cap, 0.01, 0.05, box, half, h);
  EXPECT_NEAR(h[0].distance, -0.005, 1e-12);
}

}  // namespace
}  // namespace neuralsim
