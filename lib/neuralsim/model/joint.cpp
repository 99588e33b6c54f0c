#include "neuralsim/model/joint.hpp"

#include "neuralsim/core/errors.hpp"

namespace neuralsim {

const char* joint_type_name(JointType t) {
  switch (t) {
    case JointType::kFixed: return "fixed";
    case JointType::kRevolute: return "revolute";
    case JointType::kPrismatic: return "prismatic";
    case JointType::kSpherical: return "spherical";
    case JointType::kFree: return "free";
  }
  return "?";
}

JointType joint_type_from_name(const std::string& name) {
  if (name == "fixed") return JointType::kFixed;
  if (name == "revolute" || name == "continuous" || name == "hinge") return JointType::kRevolute;
  if (name == "prismatic" || name == "slide") return JointType::kPrismatic;
  if (name == "spherical" || name == "ball") return JointType::kSpherical;
  if (name == "free" || name == "floating") return JointType::kFree;
  throw ModelError("unknown joint type '" + name +
                   "' (expected fixed, revolute, continuous, prismatic, spherical, free)");
}

}  // namespace neuralsim
