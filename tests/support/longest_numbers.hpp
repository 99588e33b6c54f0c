// Numbers whose JSON text is as long as it gets (17 significant digits, a
// sign and a three-digit exponent): the worst case for a size bound on a
// file of numbers (the checkpoint bounds' tests).
#pragma once

namespace neuralsim::testing {

inline double longest_json_number(int i) { return -1.2345678901234567e-300 * (1 + i % 7); }

}  // namespace neuralsim::testing
