// Implementation of Model<S>; included by model.hpp. Explicitly
// instantiated for the scalars of core/scalar.hpp (model/instantiate_*.cpp).
#pragma once

#include <sstream>
#include <type_traits>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/model/inertia_check.hpp"

namespace neuralsim {

template <class S>
int Model<S>::add_body(const std::string& body_name, int parent, const Joint<S>& joint,
                       const Inertia<S>& inertia) {
  if (parent < -1 || parent >= num_bodies())
    throw ModelError("body '" + body_name + "': parent index out of range");
  if (body_index(body_name) >= 0) throw ModelError("duplicate body name '" + body_name + "'");
  Body<S> b;
  b.name = body_name;
  b.inertia = inertia;
  bodies.push_back(b);
  Joint<S> j = joint;
  j.parent = parent;
  j.nq = joint_nq(j.type);
  j.nv = joint_nv(j.type);
  j.idx_q = nq;
  j.idx_v = nv;
  set_coordinate_axis(j);
  if (j.name.empty()) j.name = body_name + "_joint";
  if (joint_index(j.name) >= 0) throw ModelError("duplicate joint name '" + j.name + "'");
  nq += j.nq;
  nv += j.nv;
  joints.push_back(j);
  origin_follows_parent_length.push_back(false);
  return num_bodies() - 1;
}

template <class S>
int Model<S>::add_frame(const std::string& frame_name, int body, const Transform<S>& placement) {
  if (body < -1 || body >= num_bodies())
    throw ModelError("frame '" + frame_name + "': body index out of range");
  frames.push_back(Frame<S>{frame_name, body, placement});
  return static_cast<int>(frames.size()) - 1;
}

template <class S>
int Model<S>::body_index(const std::string& n) const {
  for (int i = 0; i < num_bodies(); ++i)
    if (bodies[i].name == n) return i;
  return -1;
}
template <class S>
int Model<S>::joint_index(const std::string& n) const {
  for (int i = 0; i < static_cast<int>(joints.size()); ++i)
    if (joints[i].name == n) return i;
  return -1;
}
template <class S>
int Model<S>::frame_index(const std::string& n) const {
  for (size_t i = 0; i < frames.size(); ++i)
    if (frames[i].name == n) return static_cast<int>(i);
  return -1;
}

template <class S>
std::vector<std::string> Model<S>::velocity_names() const {
  std::vector<std::string> names;
  for (const auto& j : joints) {
    switch (j.type) {
      case JointType::kFixed: break;
      case JointType::kRevolute:
      case JointType::kPrismatic: names.push_back(j.name); break;
      case JointType::kSpherical:
        for (const char* c : {"wx", "wy", "wz"}) names.push_back(j.name + "." + c);
        break;
      case JointType::kFree:
        for (const char* c : {"wx", "wy", "wz", "vx", "vy", "vz"}) names.push_back(j.name + "." + c);
        break;
    }
  }
  return names;
}

template <class S>
std::vector<std::string> Model<S>::position_names() const {
  std::vector<std::string> names;
  for (const auto& j : joints) {
    switch (j.type) {
      case JointType::kFixed: break;
      case JointType::kRevolute:
      case JointType::kPrismatic: names.push_back(j.name); break;
      case JointType::kSpherical:
        for (const char* c : {"qx", "qy", "qz", "qw"}) names.push_back(j.name + "." + c);
        break;
      case JointType::kFree:
        for (const char* c : {"x", "y", "z", "qx", "qy", "qz", "qw"}) names.push_back(j.name + "." + c);
        break;
    }
  }
  return names;
}

template <class S>
VecX<S> Model<S>::neutral_configuration() const {
  VecX<S> q = VecX<S>::Zero(nq);
  for (const auto& j : joints) {
    if (j.type == JointType::kSpherical) q[j.idx_q + 3] = S(1);
    if (j.type == JointType::kFree) q[j.idx_q + 6] = S(1);
  }
  return q;
}

template <class S>
S Model<S>::total_mass() const {
  S m = S(0);
  for (const auto& b : bodies) m += b.inertia.mass;
  return m;
}

template <class S>
void Model<S>::set_link_length(int body, const S& length) {
  Body<S>& b = bodies[body];
  if (!b.length_spec.enabled)
    throw ModelError("link '" + b.name + "' has no length (give it 'length' in the model)");
  b.length = length;
  const Vec3<S> axis = b.length_spec.axis.template cast<S>();
  if (b.length_spec.com_fraction >= 0) {
    // Keep mass and the inertia about the COM; move the COM along the axis.
    const Mat3<S> I_com = b.inertia.inertia_about_com();
    b.inertia = Inertia<S>::from_com(b.inertia.mass, axis * (length * S(b.length_spec.com_fraction)),
                                     I_com);
  }
  for (int i = body + 1; i < num_bodies(); ++i)
    if (joints[i].parent == body && origin_follows_parent_length[i]) joints[i].origin.r = axis * length;
}

template <class S>
template <class T>
Model<T> Model<S>::cast() const {
  Model<T> m;
  m.name = name;
  for (const auto& b : bodies) m.bodies.push_back(b.template cast<T>());
  for (const auto& j : joints) m.joints.push_back(j.template cast<T>());
  for (const auto& f : frames) m.frames.push_back(f.template cast<T>());
  m.geometries = geometries;
  m.gravity = gravity.template cast<T>();
  m.nq = nq;
  m.nv = nv;
  m.origin_follows_parent_length = origin_follows_parent_length;
  return m;
}

template <class S>
std::vector<std::string> Model<S>::validate(InertiaCheck check) const {
  std::vector<std::string> warnings;
  for (int i = 0; i < num_bodies(); ++i) {
    const auto& j = joints[i];
    if (j.parent >= i) throw ModelError("body '" + bodies[i].name + "': parent must come first");
    if ((j.type == JointType::kRevolute || j.type == JointType::kPrismatic) &&
        !(std::abs(to_double(j.axis.norm()) - 1.0) <= 1e-9))
      throw ModelError("joint '" + j.name + "': axis must be a finite unit vector");
    // Values only: the check of a model of double (the one loaded, set and
    // fitted) knows the model around the link; a model of Jets is checked
    // link by link.
    if constexpr (std::is_same_v<S, double>) {
      std::string warning;
      const std::string problem = link_inertia_problem(*this, i, check, &warning);
      if (!problem.empty()) throw ModelError(problem);
      if (!warning.empty()) warnings.push_back(warning);
    } else {
      const std::string problem = inertia_problem(bodies[i].inertia.values());
      if (!problem.empty()) throw ModelError("link '" + bodies[i].name + "': " + problem);
    }
    if (j.has_rotor) {
      if (j.type != JointType::kRevolute && j.type != JointType::kPrismatic)
        throw ModelError("joint '" + j.name + "': a rotor needs a revolute or prismatic joint, got " +
                         joint_type_name(j.type));
      const double Ir = to_double(j.dynamics.rotor_inertia);
      if (!(Ir >= 0) || !is_finite(j.dynamics.rotor_inertia))
        throw ModelError("joint '" + j.name + "': rotor.inertia must be finite and >= 0, got " + std::to_string(Ir));
      if (!is_finite(j.dynamics.gear_ratio))
        throw ModelError("joint '" + j.name + "': gear_ratio must be finite");
    }
  }
  static const char* const drag_axis_names[6] = {"x", "y", "z", "rx", "ry", "rz"};
  for (const ::neuralsim::Body<S>& b : bodies) {
    if (!b.drag.enabled) continue;
    for (int k = 0; k < 6; ++k)
      for (const auto& [law, value] : {std::make_pair("linear", &b.drag.linear[k]),
                                        std::make_pair("quadratic", &b.drag.quadratic[k])})
        if (!(to_double(*value) >= 0) || !is_finite(*value))
          throw ModelError("link '" + b.name + "': drag." + law + "." + drag_axis_names[k] + " must be finite and >= 0, got " +
                           std::to_string(to_double(*value)));
  }
  for (int c = 0; c < 3; ++c)
    if (!is_finite(gravity[c])) throw ModelError("gravity must be finite");
  return warnings;
}

// Explicit instantiations (model/instantiate_*.cpp): no other translation
// unit instantiates Model's members for these scalars.
#define NEURALSIM_MODEL_TEMPLATES(PREFIX, S) PREFIX template class Model<S>;
NEURALSIM_FOR_EACH_SCALAR(NEURALSIM_MODEL_TEMPLATES, extern)
#define NEURALSIM_MODEL_CASTS(PREFIX) \
  PREFIX template Model<Jet8> Model<double>::cast<Jet8>() const;
NEURALSIM_MODEL_CASTS(extern)

}  // namespace neuralsim
