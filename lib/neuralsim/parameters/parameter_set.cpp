#include "neuralsim/parameters/parameter_set.hpp"

#include <cmath>

namespace neuralsim {

ParameterSet::ParameterSet(std::vector<EstimatedParameter> params) : params_(std::move(params)) {
  for (int i = 0; i < size(); ++i) {
    const EstimatedParameter& p = params_[i];
    const std::string what = "parameter '" + p.name() + "': ";
    for (int k = 0; k < i; ++k)
      if (params_[k].name() == p.name()) throw InvalidArgument(what + "listed twice");
    if (!(p.scale > 0) || !std::isfinite(p.scale)) throw InvalidArgument(what + "scale must be finite and > 0");
    if (std::isnan(p.lower) || std::isnan(p.upper) || !(p.lower < p.upper))
      throw InvalidArgument(what + "bounds must be ordered [lower < upper]");
    if (!std::isfinite(p.initial) || !(p.initial >= p.lower && p.initial <= p.upper))
      throw InvalidArgument(what + "initial value must be finite and inside the bounds");
    if (p.transformation == Transformation::kLog && !(p.initial > 0 && p.lower >= 0))
      throw InvalidArgument(what + "a log transform needs positive values");
    const bool block = p.kind() == ParameterKind::kLogCholesky;
    if (block != (p.transformation == Transformation::kLogCholesky))
      throw InvalidArgument(what + "log-Cholesky coordinates and the log_cholesky transformation go together");
    if (block && p.target.component == 0) {
      for (int c = 0; c < 10; ++c)
        if (i + c >= size() || params_[i + c].kind() != ParameterKind::kLogCholesky ||
            params_[i + c].target.body != p.target.body || params_[i + c].target.component != c)
          throw InvalidArgument(what + "a log-Cholesky block needs its ten coordinates in order");
      log_cholesky_blocks_.push_back(i);
    } else if (block && (i == 0 || params_[i - 1].kind() != ParameterKind::kLogCholesky)) {
      throw InvalidArgument(what + "a log-Cholesky block needs its ten coordinates in order");
    }
  }
}

std::vector<std::string> ParameterSet::names() const {
  std::vector<std::string> n;
  for (const auto& p : params_) n.push_back(p.name());
  return n;
}

double ParameterSet::variable_lower(int i) const {
  const auto& p = params_[i];
  if (p.transformation == Transformation::kLog)
    return p.lower > 0 ? std::log(p.lower) / p.scale : -std::numeric_limits<double>::infinity();
  return p.lower / p.scale;
}

double ParameterSet::variable_upper(int i) const {
  const auto& p = params_[i];
  if (p.transformation == Transformation::kLog)
    return std::isfinite(p.upper) ? std::log(p.upper) / p.scale : std::numeric_limits<double>::infinity();
  return p.upper / p.scale;
}

std::vector<double> ParameterSet::initial_variables() const {
  std::vector<double> x(size());
  for (int i = 0; i < size(); ++i) x[i] = variable(i, params_[i].initial);
  return x;
}

NEURALSIM_FOR_EACH_SCALAR(NEURALSIM_PARAMETER_SET_TEMPLATES, )

}  // namespace neuralsim
