// Named parameters' columns of an excitation design's information
// (excitation_parameters.hpp): forward-mode Jets through the model.
#include "neuralsim/estimate/excitation_parameters.hpp"

#include <algorithm>
#include <cmath>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/dynamics/rnea.hpp"
#include "neuralsim/step/passive_forces.hpp"

namespace neuralsim {

ExcitationParameterJacobian::ExcitationParameterJacobian(const Model<double>& model,
                                                         const std::vector<std::string>& names,
                                                         const std::vector<int>& rows,
                                                         const std::vector<bool>& command_rows)
    : model_(model), rows_(rows), command_rows_(command_rows) {
  check_argument_size("ExcitationParameterJacobian", "command_rows", command_rows.size(), rows.size());
  for (int v : rows)
    for (const Joint<double>& j : model.joints)
      if (v >= j.idx_v && v < j.idx_v + j.nv) row_joints_.push_back(static_cast<int>(&j - model.joints.data()));
  check_argument_size("ExcitationParameterJacobian", "rows", row_joints_.size(), rows.size());
  for (const std::string& name : names) {
    const std::optional<NamedParameter> p = resolve_named_parameter(name, model, false);
    if (!p) throw InvalidArgument("excitation design: " + unknown_parameter_message(name, model, false));
    if (p->kind != ParameterKind::kModel)
      throw InvalidArgument("excitation design: '" + name +
                            "' is no model quantity the torques depend on (model "
                            "parameters only: link.*, joint.*, gravity.*; a link's inertias enter through links)");
    params_.push_back(*p);
    values_.push_back(get_parameter(model, p->model));
  }
}

ExcitationParameterJacobian::Workspace::Workspace(const ExcitationParameterJacobian& jac)
    : clean(jac.model_.template cast<Jet8>()),
      work(clean),
      data(work),
      q(jac.model_.nq),
      qd(jac.model_.nv),
      qdd(jac.model_.nv) {}

void ExcitationParameterJacobian::observe(Workspace& w, VecX<Jet8>& y) const {
  rnea(w.work, w.data, w.q, w.qd, w.qdd);
  passive_forces(w.work, w.data, w.q, w.qd);
  y.resize(static_cast<Eigen::Index>(rows_.size()));
  for (size_t i = 0; i < rows_.size(); ++i) {
    const int v = rows_[i];
    y[static_cast<Eigen::Index>(i)] = command_rows_[i]
                                          ? Jet8((w.data.tau[v] - w.data.tau_passive[v]) /
                                                 w.work.joints[static_cast<size_t>(row_joints_[i])].dynamics.gear_ratio)
                                          : w.data.tau[v];
  }
}

void ExcitationParameterJacobian::evaluate(Workspace& w, const Eigen::VectorXd& q, const Eigen::VectorXd& qd,
                                           const Eigen::VectorXd& qdd, Eigen::MatrixXd& J) const {
  const int r = size(), rows = static_cast<int>(rows_.size());
  J.resize(rows, r);
  w.q = q.cast<Jet8>();
  w.qd = qd.cast<Jet8>();
  w.qdd = qdd.cast<Jet8>();
  VecX<Jet8> y;
  for (int first = 0; first < r; first += kLanes) {
    // A fresh copy per group: a length also moves a COM and child origins,
    // and none of the previous group's lanes may stay behind.
    w.work = w.clean;
    const int lanes = std::min(kLanes, r - first);
    for (int l = 0; l < lanes; ++l) {
      Jet8 v(values_[static_cast<size_t>(first + l)]);
      v.v[l] = 1;
      set_named_parameter<Jet8>(params_[static_cast<size_t>(first + l)], v, &w.work, nullptr, nullptr);
    }
    observe(w, y);
    for (int i = 0; i < rows; ++i)
      for (int l = 0; l < lanes; ++l) J(i, first + l) = y[i].v[l];
  }
}

void ExcitationParameterJacobian::state_derivative(Workspace& w, const VecX<Jet8>& q, const VecX<Jet8>& qd,
                                                   const VecX<Jet8>& qdd, MatX<Jet8>& dJ) const {
  const int r = size(), rows = static_cast<int>(rows_.size());
  dJ.resize(rows, r);
  w.q = q;
  w.qd = qd;
  w.qdd = qdd;
  VecX<Jet8> yp, ym;
  for (int c = 0; c < r; ++c) {
    const double value = values_[static_cast<size_t>(c)], h = 6e-6 * std::max(std::abs(value), 0.01);
    const NamedParameter& p = params_[static_cast<size_t>(c)];
    w.work = w.clean;
    set_named_parameter<Jet8>(p, Jet8(value + h), &w.work, nullptr, nullptr);
    observe(w, yp);
    w.work = w.clean;
    set_named_parameter<Jet8>(p, Jet8(value - h), &w.work, nullptr, nullptr);
    observe(w, ym);
    for (int i = 0; i < rows; ++i) dJ(i, c) = (yp[i] - ym[i]) / (2 * h);
  }
}

}  // namespace neuralsim
