#include "neuralsim/contact/contact_parameters.hpp"

#include "neuralsim/core/errors.hpp"

namespace neuralsim {
namespace {
// In ContactParameterId order.
const char* const kNames[] = {"stiffness",        "damping",       "exponent",
                              "friction",         "friction_velocity", "viscous_friction",
                              "static_friction",  "stribeck_velocity", "restitution",
                              "restitution_threshold", "erp",      "cfm",
                              "limit_stiffness",  "limit_damping"};
constexpr int kCount = sizeof(kNames) / sizeof(kNames[0]);
}  // namespace

std::vector<std::string> contact_parameter_names() {
  std::vector<std::string> out;
  for (int i = 0; i < kCount; ++i) out.push_back(std::string("contact.") + kNames[i]);
  return out;
}

std::optional<ContactParameterId> find_contact_parameter(const std::string& name) {
  const std::string key = name.rfind("contact.", 0) == 0 ? name.substr(8) : name;
  for (int i = 0; i < kCount; ++i)
    if (key == kNames[i]) return static_cast<ContactParameterId>(i);
  return std::nullopt;
}

ContactParameterId resolve_contact_parameter(const std::string& name) {
  if (const auto id = find_contact_parameter(name)) return *id;
  std::string list;
  for (const auto& n : contact_parameter_names()) list += (list.empty() ? "" : ", ") + n;
  throw InvalidArgument("unknown contact parameter '" + name + "' (valid: " + list + ")");
}

}  // namespace neuralsim
