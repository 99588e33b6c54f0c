// What an inertial measurement unit rigidly mounted on a link reads (issue
// #36, sensor models): the angular velocity (gyro) and the specific force
// (accelerometer) of its frame, in its frame. The model side of a future
// `observe: {imus: [...]}` channel; the residual, the data layout and the
// fitted gain and bias are not wired yet (docs/simid.md, Observation
// channels).
#pragma once

#include "neuralsim/core/scalar.hpp"
#include "neuralsim/model/data.hpp"
#include "neuralsim/spatial/motion.hpp"

namespace neuralsim {

// The sensor frame in its link's frame: origin `position` and the rotation
// `rotation` from sensor to link coordinates (its columns are the sensor
// axes in link coordinates).
struct ImuMount {
  int body = -1;
  Eigen::Vector3d position = Eigen::Vector3d::Zero();
  Eigen::Matrix3d rotation = Eigen::Matrix3d::Identity();
};

template <class S>
struct ImuReading {
  Vec3<S> gyro;            // ω of the link in sensor coordinates (rad/s)
  Vec3<S> specific_force;  // p̈ − g of the sensor origin in sensor coordinates (m/s²)
};

// From the body velocities and accelerations of rnea(model, data, q, q̇, q̈)
// (data.v, data.a in body coordinates, gravity entered as the base's upward
// acceleration a₀ = −g, RBDA §5.3): with (ω, v_O) and (ω̇, a_O) the body's
// spatial velocity and acceleration (v_O, a_O: of the body-fixed point at
// the link origin, a_O already minus g), the sensor origin p moves at
// v_p = v_O + ω × p and accelerates at p̈ − g = a_O + ω̇ × p + ω × v_p
// (Featherstone, RBDA §2.11: a spatial acceleration is not a classical one).
// Both vectors are then rotated into the sensor frame. Smooth in q, q̇, q̈:
// no branch on a value.
template <class S>
ImuReading<S> imu_reading(const Data<S>& data, const ImuMount& mount) {
  const Vec6<S>& v = data.v[static_cast<size_t>(mount.body)];
  const Vec6<S>& a = data.a[static_cast<size_t>(mount.body)];
  const Vec3<S> w = v.template head<3>(), dw = a.template head<3>();
  const Vec3<S> p = mount.position.cast<S>();
  const Vec3<S> v_p = Vec3<S>(v.template tail<3>()) + w.cross(p);
  const Vec3<S> f = Vec3<S>(a.template tail<3>()) + dw.cross(p) + w.cross(v_p);
  const Mat3<S> Rt = mount.rotation.transpose().cast<S>();
  return {Rt * w, Rt * f};
}

}  // namespace neuralsim
