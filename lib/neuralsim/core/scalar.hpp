// Scalar traits: the one place that knows how a scalar type stores its
// value and its derivatives.
//
// The engine is templated on the scalar S: double, ceres::Jet (forward-mode
// derivatives) and a reverse-mode type (grad/). Algorithms never read a
// scalar's members; they ask these traits. A new derivative-carrying type
// specializes ScalarTraits and the algorithms need no change.
//
// Derivatives must never vanish silently: a branch on value(x) alone (as
// `x != S(0)` does on a Jet) drops ∂x where the value happens to be zero.
// Use exactly_zero(), which is false for a scalar that carries derivatives.
#pragma once

#include <ceres/jet.h>

#include <cmath>

namespace neuralsim {

template <class S, class Enable = void>
struct ScalarTraits;

template <>
struct ScalarTraits<double> {
  static constexpr bool kHasDerivatives = false;
  static double value(double x) { return x; }
  static bool exactly_zero(double x) { return x == 0.0; }
};

template <class T, int N>
struct ScalarTraits<ceres::Jet<T, N>> {
  static constexpr bool kHasDerivatives = true;
  static double value(const ceres::Jet<T, N>& x) { return ScalarTraits<T>::value(x.a); }
  static bool exactly_zero(const ceres::Jet<T, N>& x) { return ScalarTraits<T>::exactly_zero(x.a) && x.v.isZero(); }
};

// The value of a scalar of any supported type (derivatives dropped).
template <class S>
inline double to_double(const S& x) {
  return ScalarTraits<S>::value(x);
}

// True when x is zero and carries no derivative: a term multiplied by x may
// then be skipped without changing any derivative.
template <class S>
inline bool exactly_zero(const S& x) {
  return ScalarTraits<S>::exactly_zero(x);
}

// Finiteness of the value (derivatives of a finite value are checked by the
// algorithms that produce them).
template <class S>
inline bool is_finite(const S& x) {
  return std::isfinite(to_double(x));
}

// The scalars the engine is explicitly instantiated for (each layer's
// instantiate_*.cpp): double and the one Jet width that identification
// uses (residual stride 8). Fits of fewer parameters carry unused lanes,
// which costs them derivative arithmetic, but each further width is a
// whole engine instantiation in the build (a Jet4 engine was ~30 CPU-s of
// a clean build; docs/performance.md). Other types instantiate the header
// templates on use.
using Jet8 = ceres::Jet<double, 8>;

}  // namespace neuralsim

// Calls MACRO(PREFIX, S) for every explicitly instantiated scalar. Headers
// use it with PREFIX = extern (declarations); the instantiation units with
// an empty PREFIX (definitions).
#define NEURALSIM_FOR_EACH_SCALAR(MACRO, PREFIX) \
  MACRO(PREFIX, double)                          \
  MACRO(PREFIX, ::neuralsim::Jet8)
