#include "neuralsim/model/parameters.hpp"

#include <limits>

#include <algorithm>

#include "neuralsim/core/errors.hpp"


namespace neuralsim {
namespace {

const char* kAxis[3] = {"x", "y", "z"};
const char* kInertiaEntry[6] = {"xx", "yy", "zz", "xy", "xz", "yz"};
const char* kDragAxis[6] = {"x", "y", "z", "rx", "ry", "rz"};

struct Entry {
  std::string name;
  ParameterRef ref;
};

std::vector<Entry> all_parameters(const Model<double>& model) {
  using K = ParameterRef::Kind;
  std::vector<Entry> out;
  auto add = [&](const std::string& name, K kind, int index, int component) {
    ParameterRef r;
    r.kind = kind;
    r.index = index;
    r.component = component;
    r.name = name;
    out.push_back({name, r});
  };
  for (int c = 0; c < 3; ++c) add(std::string("gravity.") + kAxis[c], K::kGravity, -1, c);
  for (int i = 0; i < model.num_bodies(); ++i) {
    const std::string b = "link." + model.bodies[i].name + ".";
    add(b + "mass", K::kMass, i, 0);
    for (int c = 0; c < 3; ++c) add(b + "com." + kAxis[c], K::kCom, i, c);
    for (int c = 0; c < 6; ++c) add(b + "inertia." + kInertiaEntry[c], K::kInertia, i, c);
    if (model.bodies[i].length_spec.enabled) add(b + "length", K::kLength, i, 0);
    if (model.bodies[i].drag.enabled) {
      for (int c = 0; c < 6; ++c) add(b + "drag.linear." + kDragAxis[c], K::kDragLinear, i, c);
      for (int c = 0; c < 6; ++c) add(b + "drag.quadratic." + kDragAxis[c], K::kDragQuadratic, i, c);
    }
  }
  for (int i = 0; i < model.num_bodies(); ++i) {
    const std::string j = "joint." + model.joints[i].name + ".";
    for (int c = 0; c < 3; ++c) add(j + "origin." + kAxis[c], K::kOrigin, i, c);
    if (model.joints[i].nv == 0) continue;
    add(j + "damping", K::kDamping, i, 0);
    add(j + "friction", K::kFriction, i, 0);
    add(j + "friction_velocity", K::kFrictionVelocity, i, 0);
    add(j + "friction_static", K::kFrictionStatic, i, 0);
    add(j + "stribeck_velocity", K::kStribeckVelocity, i, 0);
    add(j + "friction_slope", K::kFrictionSlope, i, 0);
    add(j + "friction_shift", K::kFrictionShift, i, 0);
    add(j + "armature", K::kArmature, i, 0);
    add(j + "spring.stiffness", K::kSpringStiffness, i, 0);
    add(j + "spring.rest", K::kSpringRest, i, 0);
    add(j + "gear_ratio", K::kGearRatio, i, 0);
    add(j + "torque_offset", K::kTorqueOffset, i, 0);
    if (model.joints[i].has_rotor) add(j + "rotor.inertia", K::kRotorInertia, i, 0);
  }
  return out;
}

}  // namespace

std::pair<double, double> parameter_bounds(const ParameterRef& p) {
  using K = ParameterRef::Kind;
  const double inf = std::numeric_limits<double>::infinity();
  switch (p.kind) {
    case K::kMass:
    case K::kLength:
    case K::kDamping:
    case K::kFriction:
    case K::kFrictionVelocity:
    case K::kArmature:
    case K::kSpringStiffness:
    case K::kFrictionStatic:
    case K::kStribeckVelocity:
    case K::kFrictionSlope:
    case K::kRotorInertia:
    case K::kDragLinear:
    case K::kDragQuadratic: return {0.0, inf};
    case K::kInertia: return p.component < 3 ? std::make_pair(0.0, inf) : std::make_pair(-inf, inf);
    default: return {-inf, inf};
  }
}

std::vector<std::string> parameter_names(const Model<double>& model) {
  std::vector<std::string> names;
  for (const auto& e : all_parameters(model)) names.push_back(e.name);
  return names;
}

std::optional<ParameterRef> find_parameter(const Model<double>& model, const std::string& name) {
  for (const auto& e : all_parameters(model))
    if (e.name == name) return e.ref;
  return std::nullopt;
}

ParameterRef resolve_parameter(const Model<double>& model, const std::string& name) {
  if (const auto ref = find_parameter(model, name)) return *ref;
  std::string msg = "unknown parameter '" + name + "' for model '" + model.name + "' (valid: ";
  const std::vector<std::string> names = parameter_names(model);
  for (size_t k = 0; k < names.size(); ++k) msg += (k ? ", " : "") + names[k];
  throw InvalidArgument(msg + ")");
}

}  // namespace neuralsim
