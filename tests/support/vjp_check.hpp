// Reference gradients for the hand-written VJPs of RNEA and forward
// dynamics (dynamics/rnea_vjp.hpp, dynamics/forward_dynamics_vjp.hpp):
// the same contraction L = cᵀ·RNEA(...) or cᵀ·ABA(...) differentiated
//  * in forward mode with ceres::Jet (the engine's own rnea()/aba() on Jets,
//    8 input directions per evaluation), and
//  * by central finite differences in double.
// Neither reference uses any code of the VJPs. All inputs are laid out in one
// flat vector (VjpLayout); the configuration enters through its tangent
// coordinates, q = integrate_configuration(q₀, δ) at δ = 0, exactly the
// convention documented in rnea_vjp.hpp.
#pragma once

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "neuralsim/dynamics/aba.hpp"
#include "neuralsim/dynamics/forward_dynamics_vjp.hpp"
#include "neuralsim/dynamics/rnea.hpp"
#include "neuralsim/dynamics/rnea_vjp.hpp"
#include "support/test_models.hpp"

namespace neuralsim::testing {

// What is differentiated: RNEA (third block = q̈) or ABA (third block = τ).
enum class VjpMode { kRnea, kForwardDynamics };

// Flat layout of the differentiated inputs, in the order of RneaVjp's fields.
struct VjpLayout {
  int nv = 0, nb = 0;
  explicit VjpLayout(const Model<double>& m) : nv(m.nv), nb(m.num_bodies()) {}
  int q() const { return 0; }
  int v() const { return nv; }
  int third() const { return 2 * nv; }  // q̈ (RNEA) or τ (forward dynamics)
  int f_ext() const { return 3 * nv; }
  int inertia() const { return f_ext() + 6 * nb; }
  int armature() const { return inertia() + 10 * nb; }
  int gravity() const { return armature() + nb; }
  int origin() const { return gravity() + 3; }
  int size() const { return origin() + 3 * nb; }

  struct Block {
    const char* name;
    int begin, size;
  };
  std::vector<Block> blocks(VjpMode mode) const {
    return {{"q (tangent)", q(), nv},
            {"v", v(), nv},
            {mode == VjpMode::kRnea ? "a (= M w)" : "tau", third(), nv},
            {"f_ext", f_ext(), 6 * nb},
            {"inertia", inertia(), 10 * nb},
            {"armature", armature(), nb},
            {"gravity", gravity(), 3},
            {"origin", origin(), 3 * nb}};
  }
};

// The VJP's output in the flat layout. `third` is out.a (RNEA) or out.tau.
template <class S>
VecX<S> flatten(const VjpLayout& L, const RneaVjp<S>& out, const VecX<S>& third) {
  VecX<S> g(L.size());
  g.segment(L.q(), L.nv) = out.q;
  g.segment(L.v(), L.nv) = out.v;
  g.segment(L.third(), L.nv) = third;
  for (int b = 0; b < L.nb; ++b) {
    g.template segment<6>(L.f_ext() + 6 * b) = out.f_ext[b];
    g.template segment<10>(L.inertia() + 10 * b) = out.inertia[b];
    g[L.armature() + b] = out.armature[b];
    g.template segment<3>(L.origin() + 3 * b) = out.origin[b];
  }
  g.template segment<3>(L.gravity()) = out.gravity;
  return g;
}

// The inputs in scalar T (double or a Jet), with the configuration as a
// tangent increment dq at q₀.
template <class T>
struct VjpInputs {
  Model<T> model;
  VecX<T> dq, qd, third;
  std::vector<Vec6<T>> f_ext;

  VjpInputs(const Model<double>& m, const Eigen::VectorXd& qd_, const Eigen::VectorXd& third_,
            const std::vector<Vec6<double>>& f_ext_)
      : model(m.template cast<T>()),
        dq(VecX<T>::Zero(m.nv)),
        qd(qd_.cast<T>()),
        third(third_.cast<T>()) {
    for (const auto& f : f_ext_) f_ext.push_back(f.cast<T>());
  }

  // Calls fn(x) on the scalar(s) of input d: two for an off-diagonal
  // rotational inertia (the symmetric pair), one otherwise.
  template <class Fn>
  void apply(const VjpLayout& L, int d, Fn&& fn) {
    if (d < L.v()) return fn(dq[d - L.q()]);
    if (d < L.third()) return fn(qd[d - L.v()]);
    if (d < L.f_ext()) return fn(third[d - L.third()]);
    if (d < L.inertia()) return fn(f_ext[(d - L.f_ext()) / 6][(d - L.f_ext()) % 6]);
    if (d < L.armature()) {
      Inertia<T>& I = model.bodies[(d - L.inertia()) / 10].inertia;
      const int c = (d - L.inertia()) % 10;
      if (c == 0) return fn(I.mass);
      if (c < 4) return fn(I.h[c - 1]);
      if (c < 7) return fn(I.I_origin(c - 4, c - 4));
      static const int kPair[3][2] = {{0, 1}, {0, 2}, {1, 2}};  // xy, xz, yz
      const int r = kPair[c - 7][0], s = kPair[c - 7][1];
      fn(I.I_origin(r, s));
      return fn(I.I_origin(s, r));
    }
    if (d < L.gravity()) return fn(model.joints[d - L.armature()].dynamics.armature);
    if (d < L.origin()) return fn(model.gravity[d - L.gravity()]);
    return fn(model.joints[(d - L.origin()) / 3].origin.r[(d - L.origin()) % 3]);
  }
};

// L = cᵀ RNEA(q₀ ⊕ dq, q̇, q̈) or cᵀ ABA(q₀ ⊕ dq, q̇, τ), with the inputs' f_ext.
template <class T>
T vjp_objective(const VjpInputs<T>& in, const Eigen::VectorXd& q0, const Eigen::VectorXd& c, VjpMode mode) {
  Data<T> data(in.model);
  const VecX<T> q0t = q0.cast<T>();
  VecX<T> q = q0t;
  integrate_configuration(in.model, q0t, in.dq, q);
  for (size_t b = 0; b < in.f_ext.size(); ++b) data.f_ext[b] = in.f_ext[b];
  T out = T(0);
  if (mode == VjpMode::kRnea) {
    rnea(in.model, data, q, in.qd, in.third);
    for (int k = 0; k < in.model.nv; ++k) out += T(c[k]) * data.tau[k];
  } else {
    aba(in.model, data, q, in.qd, in.third);
    for (int k = 0; k < in.model.nv; ++k) out += T(c[k]) * data.qdd[k];
  }
  return out;
}

// ∂L/∂(all inputs) by forward mode: ceres::Jet<double, 8>, 8 directions a pass.
inline Eigen::VectorXd jet_gradient(const Model<double>& model, const Eigen::VectorXd& q0, const Eigen::VectorXd& qd,
                                    const Eigen::VectorXd& third, const std::vector<Vec6<double>>& f_ext,
                                    const Eigen::VectorXd& c, VjpMode mode) {
  using J = Jet8;
  const VjpLayout L(model);
  Eigen::VectorXd g(L.size());
  for (int d0 = 0; d0 < L.size(); d0 += 8) {
    VjpInputs<J> in(model, qd, third, f_ext);
    for (int k = 0; k < 8 && d0 + k < L.size(); ++k) in.apply(L, d0 + k, [k](J& x) { x.v[k] += 1.0; });
    const J obj = vjp_objective(in, q0, c, mode);
    for (int k = 0; k < 8 && d0 + k < L.size(); ++k) g[d0 + k] = obj.v[k];
  }
  return g;
}

// ∂L/∂(all inputs) by central differences. The inputs span many scales (a
// swimmer link's rotational inertia is 1e-4, its mass 1; ∂q̈/∂θ is far from
// linear where M is small), so the step is chosen per input: central
// differences D(h) for h = s·10⁻², ..., s·10⁻⁸ with s = max(|x|, 0.1), and the
// estimate where two successive steps agree best, counting round-off
// (truncation error falls and round-off grows as h shrinks; C. Ridders' idea
// without the extrapolation).
inline Eigen::VectorXd fd_gradient(const Model<double>& model, const Eigen::VectorXd& q0, const Eigen::VectorXd& qd,
                                   const Eigen::VectorXd& third, const std::vector<Vec6<double>>& f_ext,
                                   const Eigen::VectorXd& c, VjpMode mode) {
  const VjpLayout L(model);
  const VjpInputs<double> base(model, qd, third, f_ext);
  Eigen::VectorXd g(L.size());
  for (int d = 0; d < L.size(); ++d) {
    double x0 = 0;
    VjpInputs<double>(base).apply(L, d, [&](double& x) { x0 = x; });
    const double s = std::max(std::abs(x0), 0.1);
    double prev = 0, best = 0, best_gap = std::numeric_limits<double>::infinity();
    for (int k = 2; k <= 8; ++k) {
      const double h = s * std::pow(10.0, -k);
      VjpInputs<double> plus = base, minus = base;
      plus.apply(L, d, [&](double& x) { x += h; });
      minus.apply(L, d, [&](double& x) { x -= h; });
      const double fp = vjp_objective(plus, q0, c, mode), fm = vjp_objective(minus, q0, c, mode);
      const double D = (fp - fm) / (2 * h);
      // Error estimate: the change from the previous step (truncation) plus
      // the round-off bound of this one (without it, two quantized
      // estimates at tiny h can agree by accident).
      const double gap = std::abs(D - prev) + 8e-16 * (std::abs(fp) + std::abs(fm)) / (2 * h);
      if (k > 2 && gap < best_gap) {
        best_gap = gap;
        best = D;
      }
      prev = D;
    }
    g[d] = best;
  }
  return g;
}

// Per block: ‖got - ref‖∞ / max(‖ref_block‖∞, floor·‖ref‖∞) ≤ tol (the floor
// keeps a block that is zero, e.g. the origin of a single root joint, from
// dividing round-off by zero). Returns the largest such relative error
// (printed, for the record).
inline double expect_gradient_close(const std::string& what, const VjpLayout& L, VjpMode mode,
                                    const Eigen::VectorXd& got, const Eigen::VectorXd& ref, double tol,
                                    double floor = 1e-6) {
  const double all = ref.lpNorm<Eigen::Infinity>();
  double worst = 0;
  std::string worst_block = "-";
  for (const auto& b : L.blocks(mode)) {
    if (b.size == 0) continue;
    const double scale = std::max(ref.segment(b.begin, b.size).lpNorm<Eigen::Infinity>(), floor * all);
    const double err = (got.segment(b.begin, b.size) - ref.segment(b.begin, b.size)).lpNorm<Eigen::Infinity>() /
                       std::max(scale, 1e-300);
    EXPECT_LE(err, tol) << what << ": block " << b.name << " (size " << b.size << ")\n got: "
                        << got.segment(b.begin, b.size).transpose() << "\n ref: "
                        << ref.segment(b.begin, b.size).transpose();
    if (err > worst) {
      worst = err;
      worst_block = b.name;
    }
  }
  std::printf("  [%s] worst block relative error %.2e (%s), |grad|_inf %.3g\n", what.c_str(), worst,
              worst_block.c_str(), all);
  return worst;
}

// A test case: model, random state, random external forces and cotangent,
// gravity with a horizontal component (so that every gravity partial acts).
struct VjpCase {
  Model<double> model;
  Eigen::VectorXd q, qd, third, c;
  std::vector<Vec6<double>> f_ext;
};

inline VjpCase random_vjp_case(Model<double> model, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  VjpCase k;
  model.gravity += Eigen::Vector3d(0.3 * u(rng), 0.3 * u(rng), 0.2 * u(rng));
  k.model = std::move(model);
  random_state(k.model, rng, k.q, k.qd);
  k.third = Eigen::VectorXd::NullaryExpr(k.model.nv, [&] { return 2.0 * u(rng); });
  k.c = Eigen::VectorXd::NullaryExpr(k.model.nv, [&] { return u(rng); });
  for (int b = 0; b < k.model.num_bodies(); ++b)
    k.f_ext.push_back(Vec6<double>::NullaryExpr([&] { return u(rng); }));
  return k;
}

}  // namespace neuralsim::testing
