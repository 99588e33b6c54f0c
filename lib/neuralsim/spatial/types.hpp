// Scalar-generic small types used throughout the engine.
//
// Everything is templated on the scalar S so that the same code runs on
// double, on ceres::Jet (forward-mode AD) and, later, on a reverse-mode type.
// Fixed-size Eigen types only: nothing here touches the heap.
#pragma once

#include <Eigen/Core>
#include <Eigen/Geometry>
#include <cmath>

#include "neuralsim/core/scalar.hpp"

namespace neuralsim {

template <class S> using Vec3 = Eigen::Matrix<S, 3, 1>;
template <class S> using Vec4 = Eigen::Matrix<S, 4, 1>;
template <class S> using Vec6 = Eigen::Matrix<S, 6, 1>;
template <class S> using Mat3 = Eigen::Matrix<S, 3, 3>;
template <class S> using Mat6 = Eigen::Matrix<S, 6, 6>;
template <class S> using VecX = Eigen::Matrix<S, Eigen::Dynamic, 1>;
template <class S> using MatX = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>;
template <class S> using Quat = Eigen::Quaternion<S>;

// Cross-product matrix: skew(a) * b == a.cross(b).
template <class S>
inline Mat3<S> skew(const Vec3<S>& a) {
  Mat3<S> m;
  m << S(0), -a.z(), a.y(),  //
      a.z(), S(0), -a.x(),   //
      -a.y(), a.x(), S(0);
  return m;
}

// Rotation by `angle` about the unit `axis` (Rodrigues' formula), mapping
// coordinates in the rotated frame to the original frame.
template <class S>
inline Mat3<S> axis_angle_rotation(const Vec3<S>& axis, const S& angle) {
  using std::cos;
  using std::sin;
  const S c = cos(angle), s = sin(angle), t = S(1) - c;
  const S x = axis.x(), y = axis.y(), z = axis.z();
  Mat3<S> r;
  r << t * x * x + c, t * x * y - s * z, t * x * z + s * y,  //
      t * x * y + s * z, t * y * y + c, t * y * z - s * x,   //
      t * x * z - s * y, t * y * z + s * x, t * z * z + c;
  return r;
}

// Rotation from URDF roll-pitch-yaw: R = Rz(yaw) * Ry(pitch) * Rx(roll).
template <class S>
inline Mat3<S> rpy_rotation(const S& roll, const S& pitch, const S& yaw) {
  return axis_angle_rotation<S>(Vec3<S>::UnitZ(), yaw) *
         axis_angle_rotation<S>(Vec3<S>::UnitY(), pitch) *
         axis_angle_rotation<S>(Vec3<S>::UnitX(), roll);
}

// Exponential map of a rotation vector, safe at zero (the Jet-friendly
// Taylor branch keeps derivatives finite when the rotation vanishes).
template <class S>
inline Quat<S> quat_exp(const Vec3<S>& w) {
  using std::cos;
  using std::sin;
  using std::sqrt;
  const S theta2 = w.squaredNorm();
  S k, c;
  if (theta2 < S(1e-12)) {
    k = S(0.5) - theta2 / S(48);
    c = S(1) - theta2 / S(8);
  } else {
    const S theta = sqrt(theta2);
    k = sin(theta / S(2)) / theta;
    c = cos(theta / S(2));
  }
  return Quat<S>(c, k * w.x(), k * w.y(), k * w.z());
}

}  // namespace neuralsim
