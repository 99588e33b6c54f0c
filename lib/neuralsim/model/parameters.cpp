#include "neuralsim/model/parameters.hpp"

#include <algorithm>

#include "neuralsim/io/errors.hpp"

namespace neuralsim {
namespace {

const char* kAxis[3] = {"x", "y", "z"};
const char* kInertiaEntry[6] = {"xx", "yy", "zz", "xy", "xz", "yz"};

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
  }
  for (int i = 0; i < model.num_bodies(); ++i) {
    const std::string j = "joint." + model.joints[i].name + ".";
    for (int c = 0; c < 3; ++c) add(j + "origin." + kAxis[c], K::kOrigin, i, c);
    if (model.joints[i].nv == 0) continue;
    add(j + "damping", K::kDamping, i, 0);
    add(j + "friction", K::kFriction, i, 0);
    add(j + "friction_velocity", K::kFrictionVelocity, i, 0);
    add(j + "armature", K::kArmature, i, 0);
    add(j + "spring.stiffness", K::kSpringStiffness, i, 0);
    add(j + "spring.rest", K::kSpringRest, i, 0);
    add(j + "gear_ratio", K::kGearRatio, i, 0);
    add(j + "torque_offset", K::kTorqueOffset, i, 0);
  }
  return out;
}

}  // namespace

std::vector<std::string> parameter_names(const Model<double>& model) {
  std::vector<std::string> names;
  for (const auto& e : all_parameters(model)) names.push_back(e.name);
  return names;
}

ParameterRef resolve_parameter(const Model<double>& model, const std::string& name) {
  const auto all = all_parameters(model);
  for (const auto& e : all)
    if (e.name == name) return e.ref;
  // List the names that share the most leading characters, then all.
  std::string msg = "unknown parameter '" + name + "' for model '" + model.name + "'. Valid names: ";
  for (size_t k = 0; k < all.size(); ++k) msg += (k ? ", " : "") + all[k].name;
  throw ConfigError(msg);
}

}  // namespace neuralsim
