#include "neuralsim/io/derivative_config.hpp"

#include <string>

namespace neuralsim {

SavitzkyGolayFit read_savitzky_golay_fit(const Config& c) {
  SavitzkyGolayFit f;
  f.order = static_cast<int>(c.get_int_in_range("order", kDefaultSavitzkyGolayOrder, 2, 10));
  f.window = static_cast<int>(c.get_int_in_range("window", kDefaultSavitzkyGolayWindow, 3, 100001));
  if (f.window % 2 == 0)
    c.fail("window", "must be odd (a fit centred on each sample), got " + std::to_string(f.window));
  if (f.window < f.order + 1)
    c.fail("window", std::to_string(f.window) + " samples are fewer than the " + std::to_string(f.order + 1) +
                         " coefficients of a polynomial of order " + std::to_string(f.order));
  return f;
}

}  // namespace neuralsim
