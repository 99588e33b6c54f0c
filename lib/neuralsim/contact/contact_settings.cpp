#include "neuralsim/contact/contact_settings.hpp"

#include <cmath>
#include <sstream>

namespace neuralsim {

const char* contact_model_name(ContactModelType t) {
  switch (t) {
    case ContactModelType::kHuntCrossley: return "hunt_crossley";
    case ContactModelType::kPenalty: return "penalty";
    case ContactModelType::kImpulse: return "impulse";
  }
  return "?";
}

std::string contact_parameters_problem(const ContactParameters<double>& p) {
  const std::vector<std::string> names = contact_parameter_names();
  for (size_t i = 0; i < names.size(); ++i) {
    const auto id = static_cast<ContactParameterId>(i);
    const double v = get_contact_parameter(p, id);
    std::ostringstream msg;
    msg << "contact parameter '" << names[i] << "' is " << v << ", expected ";
    const bool strictly_positive = id == ContactParameterId::kExponent || id == ContactParameterId::kFrictionVelocity ||
                                   id == ContactParameterId::kStribeckVelocity;
    if (id == ContactParameterId::kErp) {
      if (!(v >= 0 && v <= 1)) return msg.str() + "a value in [0, 1]";
    } else if (strictly_positive) {
      if (!(v > 0) || !std::isfinite(v)) return msg.str() + "a finite value > 0";
    } else if (!(v >= 0) || !std::isfinite(v)) {
      return msg.str() + "a finite value >= 0";
    }
  }
  return "";
}

}  // namespace neuralsim
