// Centroidal quantities (Orin, Goswami & Lee, "Centroidal dynamics of a
// humanoid robot", Auton. Robots 2013): total mass, centre of mass and the
// spatial momentum about the COM in world-aligned axes, h_G = [k_G; l].
#pragma once

#include "neuralsim/dynamics/rnea.hpp"

namespace neuralsim {

template <class S>
struct Centroidal {
  S mass = S(0);
  Vec3<S> com = Vec3<S>::Zero();              // world
  Vec3<S> linear_momentum = Vec3<S>::Zero();  // world, = m·ċ
  Vec3<S> angular_momentum = Vec3<S>::Zero(); // about the COM, world axes
  Vec3<S> com_velocity() const { return linear_momentum / mass; }
};

// Requires forward_kinematics(model, data, q, qd).
template <class S>
Centroidal<S> centroidal(const Model<S>& model, const Data<S>& data) {
  Centroidal<S> out;
  Vec3<S> mc = Vec3<S>::Zero();
  Vec3<S> k_origin = Vec3<S>::Zero();  // angular momentum about the world origin
  for (int i = 0; i < model.num_bodies(); ++i) {
    const Inertia<S>& I = model.bodies[i].inertia;
    const Mat3<S> R = data.X_world[i].E.transpose();
    const Vec3<S>& p = data.X_world[i].r;
    out.mass += I.mass;
    mc += I.mass * p + R * I.h;
    // Body momentum I·v in body coordinates, moved to world-aligned axes at
    // the world origin: (R n + p × R l, R l).
    const Vec6<S> hb = I * data.v[i];
    const Vec3<S> l = R * hb.template tail<3>();
    out.linear_momentum += l;
    k_origin += R * hb.template head<3>() + p.cross(l);
    // A motor rotor (massless) adds the pure angular momentum Ir (aᵀω_r) a.
    const Joint<S>& j = model.joints[i];
    if (j.has_rotor) {
      // q̇ from S q̇ = v_i - X_up v_parent (RBDA eq. 5.7).
      const Vec6<S> vj = j.parent < 0 ? data.v[i] : Vec6<S>(data.v[i] - data.X_up[i].apply_motion(data.v[j.parent]));
      const S qd = j.type == JointType::kRevolute ? j.axis.dot(Vec3<S>(vj.template head<3>()))
                                                  : j.axis.dot(Vec3<S>(vj.template tail<3>()));
      k_origin += R * (j.axis * (j.dynamics.rotor_inertia * internal::rotor_spin_rate(j, data.v[i], qd)));
    }
  }
  out.com = mc / out.mass;
  out.angular_momentum = k_origin - out.com.cross(out.linear_momentum);
  return out;
}

// Explicit instantiations (dynamics/instantiate_*.cpp).
#define NEURALSIM_CENTROIDAL_TEMPLATES(PREFIX, S) \
  PREFIX template Centroidal<S> centroidal<S>(const Model<S>&, const Data<S>&);
NEURALSIM_CENTROIDAL_TEMPLATES(extern, double)  // Jets instantiate on use: identification does not need centroidal

}  // namespace neuralsim
