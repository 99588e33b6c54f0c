#include "common/exit_codes.hpp"

#include "neuralsim/core/errors.hpp"

namespace neuralsim {

ExitCode exit_code_for(const std::exception& e) {
  if (dynamic_cast<const ConfigError*>(&e) || dynamic_cast<const ModelError*>(&e)) return kExitUsage;
  if (dynamic_cast<const DataError*>(&e)) return kExitData;
  if (dynamic_cast<const NumericalError*>(&e)) return kExitNumerical;
  return kExitInternal;
}

}  // namespace neuralsim
