// The columns of an excitation design's information for named model
// parameters the torque need not be linear in (link lengths, joint origins,
// gravity, gear ratios, a Stribeck law's static level, ...): the Jacobian
// J = ∂y/∂θ of what the design observes at one state (y: each joint's
// recorded command u = (RNEA − passive)/gear; on a mounted floating base
// also the mount's wrench, the free joint's rows of RNEA), computed exactly
// by forward-mode Jets through the model's named parameters
// (parameters/named_parameter.hpp) at the model's values.
//
// J is exact: the parameters' derivative lanes of one Jet8 evaluation
// (up to 8 parameters per evaluation). Its derivative in the state, which
// the design's gradient needs, is exact in the state (Jet8 lanes over the
// designed coordinates) and a central difference in θ: the engine does not
// compile on nested Jets (ceres::Jet<Jet8, N> has no constructor from a
// literal, and the model writes S(0)), so ∂²y/∂θ_c∂s ≈ (∂y/∂s(θ + h e_c) −
// ∂y/∂s(θ − h e_c)) / 2h, h = 6e-6 · max(|θ_c|, 0.01) (≈ ε^⅓, the step that
// balances truncation and rounding; relative error ≈ ε^⅔ for a smooth y).
//
//   ExcitationParameterJacobian jac(model, {"link.l2.length", "gravity.z"}, rows, command_rows);
//   ExcitationParameterJacobian::Workspace w(jac);
//   jac.evaluate(w, q, qd, qdd, J);   // J: rows × 2
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "neuralsim/core/scalar.hpp"
#include "neuralsim/model/data.hpp"
#include "neuralsim/parameters/named_parameter.hpp"

namespace neuralsim {

class ExcitationParameterJacobian {
 public:
  static constexpr int kLanes = 8;  // parameters per evaluation (the engine's Jet8)

  // `names` resolved by resolve_named_parameter (model kinds only;
  // InvalidArgument naming the name otherwise); `rows` the observed
  // velocity coordinates; command_rows[i]: row i is a joint's recorded
  // command (divided by the gear ratio, passive forces subtracted), else a
  // row of RNEA as it is (the mount's wrench).
  ExcitationParameterJacobian(const Model<double>& model, const std::vector<std::string>& names,
                              const std::vector<int>& rows, const std::vector<bool>& command_rows);

  int size() const { return static_cast<int>(params_.size()); }
  const std::vector<NamedParameter>& parameters() const { return params_; }
  const std::vector<double>& values() const { return values_; }  // the model's values, where J is evaluated

  // One thread's copies of the model.
  struct Workspace {
    explicit Workspace(const ExcitationParameterJacobian& jac);
    Model<Jet8> clean, work;
    Data<Jet8> data;
    VecX<Jet8> q, qd, qdd;
  };

  // J (rows × size()) at the full state (q, q̇, q̈) of the model.
  void evaluate(Workspace& w, const Eigen::VectorXd& q, const Eigen::VectorXd& qd, const Eigen::VectorXd& qdd,
                Eigen::MatrixXd& J) const;
  // At a state with derivative lanes (Jet8 over the design's state): entry
  // (i, c) of dJ has lane l ≈ ∂²y_i/∂θ_c∂s_l (central difference in θ_c).
  void state_derivative(Workspace& w, const VecX<Jet8>& q, const VecX<Jet8>& qd, const VecX<Jet8>& qdd,
                        MatX<Jet8>& dJ) const;

 private:
  const Model<double>& model_;
  std::vector<NamedParameter> params_;
  std::vector<double> values_;
  std::vector<int> rows_, row_joints_;
  std::vector<bool> command_rows_;

  // y of the observed rows on the model in w.work at w's state.
  void observe(Workspace& w, VecX<Jet8>& y) const;
};

}  // namespace neuralsim
