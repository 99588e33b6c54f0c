#include "neuralsim/parameters/hybrid_parameters.hpp"

#include <limits>

namespace neuralsim {

HybridParameters::HybridParameters(ParameterSet physical, const std::vector<AugmentBlueprint>& blueprints)
    : physical_(std::move(physical)) {
  const std::vector<std::string> physical_names = physical_.names();
  for (const AugmentBlueprint& bp : blueprints) {
    const nn::Index n = bp.network.num_parameters();
    const std::size_t first = initial_weights_.size();
    initial_weights_.resize(first + static_cast<std::size_t>(n));
    bp.network.get_parameters(initial_weights_.data() + first);
    for (nn::Index k = 0; k < n; ++k) {
      std::string name = "augment." + bp.name + ".w" + std::to_string(k);
      for (const std::string& p : physical_names)
        if (p == name) throw InvalidArgument("HybridParameters: '" + name + "' is both physical and a weight");
      weight_names_.push_back(std::move(name));
    }
  }
}

std::vector<std::string> HybridParameters::names() const {
  std::vector<std::string> n = physical_.names();
  n.insert(n.end(), weight_names_.begin(), weight_names_.end());
  return n;
}

std::vector<double> HybridParameters::initial_variables() const {
  std::vector<double> x = physical_.initial_variables();
  x.insert(x.end(), initial_weights_.begin(), initial_weights_.end());
  return x;
}

double HybridParameters::variable_lower(int i) const {
  return i < physical_.size() ? physical_.variable_lower(i) : -std::numeric_limits<double>::infinity();
}

double HybridParameters::variable_upper(int i) const {
  return i < physical_.size() ? physical_.variable_upper(i) : std::numeric_limits<double>::infinity();
}

std::optional<std::pair<int, int>> find_weight_parameter(const std::string& name,
                                                         const std::vector<AugmentBlueprint>& blueprints) {
  const std::string prefix = "augment.";
  if (name.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  for (std::size_t i = 0; i < blueprints.size(); ++i) {
    const std::string head = prefix + blueprints[i].name + ".w";
    if (name.size() <= head.size() || name.compare(0, head.size(), head) != 0) continue;
    const std::string digits = name.substr(head.size());
    if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 9) continue;
    if (digits.size() > 1 && digits[0] == '0') continue;
    const long k = std::stol(digits);
    if (k < blueprints[i].network.num_parameters()) return std::make_pair(static_cast<int>(i), static_cast<int>(k));
  }
  return std::nullopt;
}

NEURALSIM_FOR_EACH_SCALAR(NEURALSIM_HYBRID_PARAMETERS_TEMPLATES, )
NEURALSIM_HYBRID_PARAMETERS_TEMPLATES(, ::neuralsim::Rev)
NEURALSIM_PARAMETER_SET_TEMPLATES(, ::neuralsim::Rev)

}  // namespace neuralsim
