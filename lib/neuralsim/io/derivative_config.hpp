// How a config names a Savitzky–Golay fit (core/derivative_filter.hpp):
// `window` and `order` keys, read and checked by one rule wherever they
// appear (csv_import.qd, data.velocity, estimate.residual.derivatives).
#pragma once

#include "neuralsim/io/config.hpp"

namespace neuralsim {

// The default fit: 31 samples, cubic.
constexpr int kDefaultSavitzkyGolayWindow = 31;
constexpr int kDefaultSavitzkyGolayOrder = 3;

struct SavitzkyGolayFit {
  int window = kDefaultSavitzkyGolayWindow;
  int order = kDefaultSavitzkyGolayOrder;
};

// `window` (odd, 3..100001, at least order + 1 samples: the polynomial's
// coefficients) and `order` (2..10) of `c`, each optional; a bad value is
// a ConfigError naming c's file, line and key.
SavitzkyGolayFit read_savitzky_golay_fit(const Config& c);

}  // namespace neuralsim
