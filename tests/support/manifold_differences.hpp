// Central differences of a joint-space function y(q, q̇) (RNEA, ABA) with
// respect to q on the configuration manifold (q ⊕ h e_i in tangent
// coordinates, model/configuration.hpp) and to q̇: the reference the
// analytical derivatives are tested against (rnea_derivatives_test,
// aba_derivatives_test). Richardson's extrapolation R = (4 D(h/2) - D(h)) / 3
// removes the h² term (Press et al., Numerical Recipes §5.7): with h = 1e-3
// the truncation error is O(h⁴) ~ 1e-12 and the rounding error ~1e-13 of |y|.
#pragma once

#include <string>
#include <vector>

#include <Eigen/Core>

#include "neuralsim/io/urdf_model.hpp"
#include "neuralsim/io/yaml_model.hpp"
#include "neuralsim/model/configuration.hpp"
#include "support/files.hpp"
#include "support/test_models.hpp"

namespace neuralsim::testing {

// Jq = ∂y/∂δq and Jv = ∂y/∂q̇ (y.size() × nv each); f(q, q̇) returns y.
template <class F>
void manifold_central_jacobians(const Model<double>& model, const Eigen::VectorXd& q, const Eigen::VectorXd& qd,
                                F&& f, Eigen::MatrixXd& Jq, Eigen::MatrixXd& Jv, double h = 1e-3) {
  const int nv = model.nv;
  const Eigen::Index ny = f(q, qd).size();
  Jq.resize(ny, nv);
  Jv.resize(ny, nv);
  Eigen::VectorXd qs(model.nq), dv(nv);
  auto along_q = [&](int i, double step) {
    dv.setZero();
    dv[i] = step;
    integrate_configuration(model, q, dv, qs);
    return Eigen::VectorXd(f(qs, qd));
  };
  auto along_v = [&](int i, double step) {
    Eigen::VectorXd v = qd;
    v[i] += step;
    return Eigen::VectorXd(f(q, v));
  };
  auto richardson = [h](auto&& g) {
    const Eigen::VectorXd d1 = (g(h) - g(-h)) / (2 * h);
    const Eigen::VectorXd d2 = (g(h / 2) - g(-h / 2)) / h;
    return Eigen::VectorXd((4 * d2 - d1) / 3);
  };
  for (int i = 0; i < nv; ++i) {
    Jq.col(i) = richardson([&](double s) { return along_q(i, s); });
    Jv.col(i) = richardson([&](double s) { return along_v(i, s); });
  }
}

// max |A - B| / max(max |B|, floor): one number per comparison.
inline double max_relative_difference(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B, double floor = 1e-12) {
  return (A - B).lpNorm<Eigen::Infinity>() / std::max(B.lpNorm<Eigen::Infinity>(), floor);
}

// The models both derivative tests run on, each with the seed of its random
// states: every joint type (with and without armature), the YAML double
// pendulum, swimmer and cart-pole, the fixed-base Panda and the floating
// Laikago (two seeds). The robots come from ../shared (the test command
// requires it).
struct DerivativeTestModel {
  Model<double> model;
  std::string label;
  int seed;
};
inline std::vector<DerivativeTestModel> derivative_test_models() {
  std::vector<DerivativeTestModel> out;
  out.push_back({mixed_joint_model(), "mixed", 1});
  Model<double> armature = mixed_joint_model();
  armature.joints[0].dynamics.armature = 0.03;  // the free root through the general 6-DoF factorization
  armature.joints[1].dynamics.armature = 0.01;
  out.push_back({armature, "mixed+armature", 2});
  for (const char* file : {"configs/models/double_pendulum.yaml", "configs/models/swimmer5.yaml",
                           "configs/models/cartpole.yaml"})
    out.push_back({load_yaml_model(source_path(file)), file, 3});
  out.push_back({load_urdf_model(shared_path("models/franka_panda/panda.urdf")), "panda (fixed base)", 6});
  UrdfOptions floating;
  floating.floating_base = true;
  const Model<double> laikago = load_urdf_model(shared_path("models/laikago/laikago_toes_zup.urdf"), floating);
  out.push_back({laikago, "laikago", 4});
  out.push_back({laikago, "laikago", 5});
  return out;
}

}  // namespace neuralsim::testing
