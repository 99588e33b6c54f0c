// Named physical parameters of a Model, readable and writable in any scalar
// type, so an estimator can optimize them by name on Ceres Jets.
//
// Names (stable; `parameter_names(model)` lists every one a model has):
//   gravity.{x,y,z}
//   link.<body>.mass | .com.{x,y,z} | .inertia.{xx,yy,zz,xy,xz,yz} (about the COM,
//                    body axes) | .length (links declared with a length) |
//                    .drag.linear.{x,y,z,rx,ry,rz} | .drag.quadratic.{x,y,z,rx,ry,rz}
//                    (links declared with drag; model.hpp, BodyDrag)
//   joint.<joint>.origin.{x,y,z} | .damping | .friction | .friction_velocity |
//                 .friction_static | .stribeck_velocity (act under friction_law: stribeck) |
//                 .friction_slope | .friction_shift (act under friction_law: sigmoid) |
//                 .armature | .spring.stiffness | .spring.rest | .gear_ratio | .torque_offset |
//                 .rotor.inertia (joints declared with a rotor)
// Resolve a name once (find_parameter) and use the ParameterRef in loops;
// string handling never happens in the hot path.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "neuralsim/model/model.hpp"

namespace neuralsim {

struct ParameterRef {
  enum class Kind {
    kGravity, kMass, kCom, kInertia, kLength, kOrigin, kDamping, kFriction,
    kFrictionVelocity, kArmature, kSpringStiffness, kSpringRest, kGearRatio, kTorqueOffset,
    kFrictionStatic, kStribeckVelocity, kRotorInertia, kFrictionSlope, kFrictionShift, kDragLinear,
    kDragQuadratic
  };
  Kind kind = Kind::kGravity;
  int index = -1;      // body/joint index
  int component = 0;   // x/y/z, inertia entry 0..5 = xx yy zz xy xz yz, or drag axis 0..5 = x y z rx ry rz
  std::string name;
};

std::vector<std::string> parameter_names(const Model<double>& model);

// The parameter called `name`, or nothing when the model has none.
std::optional<ParameterRef> find_parameter(const Model<double>& model, const std::string& name);
// The same for a name known to exist; InvalidArgument listing the valid
// names otherwise (a config's names go through find_parameter and are
// reported with their file and line).
ParameterRef resolve_parameter(const Model<double>& model, const std::string& name);

// The physical domain of a parameter: masses, lengths, principal inertias
// and the sigmoid friction slope are > 0 (reported as lower bound 0),
// dampings, frictions, armatures, stiffnesses, rotor inertias and drag
// coefficients >= 0, the friction shift and the rest unbounded
// (±inf). A value inside it can still make the model unphysical as a whole
// (the triangle inequality of the principal moments): Model::validate says.
std::pair<double, double> parameter_bounds(const ParameterRef& p);

namespace internal {
inline int inertia_row(int c) { static const int r[6] = {0, 1, 2, 0, 0, 1}; return r[c]; }
inline int inertia_col(int c) { static const int k[6] = {0, 1, 2, 1, 2, 2}; return k[c]; }
}  // namespace internal

template <class S>
S get_parameter(const Model<S>& model, const ParameterRef& p) {
  using K = ParameterRef::Kind;
  switch (p.kind) {
    case K::kGravity: return model.gravity[p.component];
    case K::kMass: return model.bodies[p.index].inertia.mass;
    case K::kCom: return model.bodies[p.index].inertia.com()[p.component];
    case K::kInertia:
      return model.bodies[p.index].inertia.inertia_about_com()(internal::inertia_row(p.component),
                                                               internal::inertia_col(p.component));
    case K::kLength: return model.bodies[p.index].length;
    case K::kOrigin: return model.joints[p.index].origin.r[p.component];
    case K::kDamping: return model.joints[p.index].dynamics.damping;
    case K::kFriction: return model.joints[p.index].dynamics.coulomb_friction;
    case K::kFrictionVelocity: return model.joints[p.index].dynamics.friction_velocity;
    case K::kArmature: return model.joints[p.index].dynamics.armature;
    case K::kSpringStiffness: return model.joints[p.index].dynamics.spring_stiffness;
    case K::kSpringRest: return model.joints[p.index].dynamics.spring_rest;
    case K::kGearRatio: return model.joints[p.index].dynamics.gear_ratio;
    case K::kTorqueOffset: return model.joints[p.index].dynamics.torque_offset;
    case K::kFrictionStatic: return model.joints[p.index].dynamics.friction_static;
    case K::kStribeckVelocity: return model.joints[p.index].dynamics.stribeck_velocity;
    case K::kRotorInertia: return model.joints[p.index].dynamics.rotor_inertia;
    case K::kFrictionSlope: return model.joints[p.index].dynamics.friction_slope;
    case K::kFrictionShift: return model.joints[p.index].dynamics.friction_shift;
    case K::kDragLinear: return model.bodies[p.index].drag.linear[p.component];
    case K::kDragQuadratic: return model.bodies[p.index].drag.quadratic[p.component];
  }
  return S(0);
}

// Setting mass keeps the COM and the inertia about the COM; setting the COM
// keeps mass and inertia about the COM (the physically meaningful split).
template <class S>
void set_parameter(Model<S>& model, const ParameterRef& p, const S& value) {
  using K = ParameterRef::Kind;
  auto rebuild = [&](const S& m, const Vec3<S>& c, const Mat3<S>& Ic) {
    model.bodies[p.index].inertia = Inertia<S>::from_com(m, c, Ic);
  };
  switch (p.kind) {
    case K::kGravity: model.gravity[p.component] = value; return;
    case K::kMass: {
      const Inertia<S>& I = model.bodies[p.index].inertia;
      rebuild(value, I.com(), I.inertia_about_com());
      return;
    }
    case K::kCom: {
      const Inertia<S>& I = model.bodies[p.index].inertia;
      Vec3<S> c = I.com();
      c[p.component] = value;
      rebuild(I.mass, c, I.inertia_about_com());
      return;
    }
    case K::kInertia: {
      const Inertia<S>& I = model.bodies[p.index].inertia;
      Mat3<S> Ic = I.inertia_about_com();
      const int r = internal::inertia_row(p.component), c = internal::inertia_col(p.component);
      Ic(r, c) = value;
      Ic(c, r) = value;
      rebuild(I.mass, I.com(), Ic);
      return;
    }
    case K::kLength: model.set_link_length(p.index, value); return;
    case K::kOrigin: model.joints[p.index].origin.r[p.component] = value; return;
    case K::kDamping: model.joints[p.index].dynamics.damping = value; return;
    case K::kFriction: model.joints[p.index].dynamics.coulomb_friction = value; return;
    case K::kFrictionVelocity: model.joints[p.index].dynamics.friction_velocity = value; return;
    case K::kArmature: model.joints[p.index].dynamics.armature = value; return;
    case K::kSpringStiffness: model.joints[p.index].dynamics.spring_stiffness = value; return;
    case K::kSpringRest: model.joints[p.index].dynamics.spring_rest = value; return;
    case K::kGearRatio: model.joints[p.index].dynamics.gear_ratio = value; return;
    case K::kTorqueOffset: model.joints[p.index].dynamics.torque_offset = value; return;
    case K::kFrictionStatic: model.joints[p.index].dynamics.friction_static = value; return;
    case K::kStribeckVelocity: model.joints[p.index].dynamics.stribeck_velocity = value; return;
    case K::kRotorInertia: model.joints[p.index].dynamics.rotor_inertia = value; return;
    case K::kFrictionSlope: model.joints[p.index].dynamics.friction_slope = value; return;
    case K::kFrictionShift: model.joints[p.index].dynamics.friction_shift = value; return;
    case K::kDragLinear: model.bodies[p.index].drag.linear[p.component] = value; return;
    case K::kDragQuadratic: model.bodies[p.index].drag.quadratic[p.component] = value; return;
  }
}

// Explicit instantiations (model/instantiate_*.cpp).
#define NEURALSIM_PARAMETER_TEMPLATES(PREFIX, S)                                  \
  PREFIX template S get_parameter<S>(const Model<S>&, const ParameterRef&);       \
  PREFIX template void set_parameter<S>(Model<S>&, const ParameterRef&, const S&);
NEURALSIM_FOR_EACH_SCALAR(NEURALSIM_PARAMETER_TEMPLATES, extern)

}  // namespace neuralsim
