#include "neuralsim/estimate/residuals.hpp"

#include <ceres/dynamic_autodiff_cost_function.h>

#include "neuralsim/dynamics/kinematics.hpp"
#include "neuralsim/dynamics/rnea.hpp"
#include "neuralsim/model/configuration.hpp"
#include "neuralsim/step/passive_forces.hpp"

namespace neuralsim {
namespace {

// Jets carry derivatives for `Stride` parameters per pass and Ceres runs as
// many passes as needed. Matching the stride to the number of parameters
// avoids carrying unused derivative lanes (2 parameters in a Jet of 8 costs
// ~3x more than in a Jet of 2).
constexpr int kMaxStride = 8;

template <class T>
bool all_finite(const VecX<T>& v) {
  for (int i = 0; i < v.size(); ++i)
    if (!is_finite(v[i])) return false;
  return true;
}

// Writes the residuals of one sample; returns the number written.
template <class T>
int sample_residuals(const ResidualContext& ctx, const Model<T>& model, Data<T>& data, const Trajectory& tr, int k,
                     const VecX<T>& q, const VecX<T>& qd, VecX<T>& dq, T* r) {
  int n = 0;
  const ObservationSpec& obs = ctx.observe;
  if (obs.q_weight > 0) {
    const VecX<T> qk = tr.q.row(k).transpose().cast<T>();
    difference_configuration(model, qk, q, dq);
    for (int i = 0; i < model.nv; ++i) r[n++] = T(obs.q_weight) * dq[i];
  }
  if (obs.qd_weight > 0)
    for (int i = 0; i < model.nv; ++i) r[n++] = T(obs.qd_weight) * (qd[i] - T(tr.qd(k, i)));
  if (!obs.link_positions.empty()) {
    forward_kinematics(model, data, q);
    for (const auto& ch : obs.link_positions) {
      const auto& pose = tr.link_poses.at(ch.link);
      const Vec3<T> p = data.X_world[ch.body].r;
      for (int c = 0; c < 3; ++c) r[n++] = T(ch.weight) * (p[c] - T(pose(k, c)));
    }
  }
  return n;
}

template <class T>
void load_state(const Trajectory& tr, int k, VecX<T>& q, VecX<T>& qd) {
  q = tr.q.row(k).transpose().cast<T>();
  qd = tr.qd.row(k).transpose().cast<T>();
}

struct SingleShooting {
  ResidualContext ctx;
  Window w;

  template <class T>
  bool operator()(T const* const* blocks, T* residuals) const {
    Model<T> model = ctx.model->template cast<T>();
    ctx.parameters->apply(blocks[0], model);
    StepOptions opts = ctx.step;
    opts.check_finite = false;  // reported as an evaluation failure instead
    Stepper<T> stepper(model, opts);
    const Trajectory& tr = *w.trajectory;
    VecX<T> q, qd, u = VecX<T>::Zero(model.nv), dq(model.nv);
    load_state(tr, w.start, q, qd);
    normalize_configuration(model, q);
    int n = 0;
    for (int k = w.start; k < w.start + w.length; ++k) {
      if (tr.has_tau()) u = tr.tau.row(k).transpose().cast<T>();
      stepper.step(q, qd, u, tr.time[k], tr.time[k + 1] - tr.time[k]);
      if (!all_finite(q) || !all_finite(qd)) return false;
      n += sample_residuals(ctx, model, stepper.data(), tr, k + 1, q, qd, dq, residuals + n);
    }
    return true;
  }
};

struct MultipleShooting {
  ResidualContext ctx;
  Window w;
  bool last = false;
  double continuity_weight = 1;

  template <class T>
  bool operator()(T const* const* blocks, T* residuals) const {
    Model<T> model = ctx.model->template cast<T>();
    ctx.parameters->apply(blocks[0], model);
    StepOptions opts = ctx.step;
    opts.check_finite = false;
    Stepper<T> stepper(model, opts);
    const Trajectory& tr = *w.trajectory;
    const int nq = model.nq, nv = model.nv;
    VecX<T> q(nq), qd(nv), u = VecX<T>::Zero(nv), dq(nv);
    for (int i = 0; i < nq; ++i) q[i] = blocks[1][i];
    for (int i = 0; i < nv; ++i) qd[i] = blocks[1][nq + i];
    normalize_configuration(model, q);
    int n = sample_residuals(ctx, model, stepper.data(), tr, w.start, q, qd, dq, residuals);
    const int end = w.start + w.length;
    for (int k = w.start; k < end; ++k) {
      if (tr.has_tau()) u = tr.tau.row(k).transpose().cast<T>();
      stepper.step(q, qd, u, tr.time[k], tr.time[k + 1] - tr.time[k]);
      if (!all_finite(q) || !all_finite(qd)) return false;
      if (k + 1 < end || last) n += sample_residuals(ctx, model, stepper.data(), tr, k + 1, q, qd, dq, residuals + n);
    }
    if (!last) {
      VecX<T> q_next(nq);
      for (int i = 0; i < nq; ++i) q_next[i] = blocks[2][i];
      normalize_configuration(model, q_next);
      difference_configuration(model, q_next, q, dq);
      const T cw(continuity_weight);
      for (int i = 0; i < nv; ++i) residuals[n++] = cw * dq[i];
      for (int i = 0; i < nv; ++i) residuals[n++] = cw * (qd[i] - blocks[2][nq + i]);
    }
    return true;
  }
};

struct InverseDynamics {
  ResidualContext ctx;
  std::shared_ptr<const InverseDynamicsSamples> s;
  int row = 0;
  double weight = 1;

  template <class T>
  bool operator()(T const* const* blocks, T* residuals) const {
    Model<T> model = ctx.model->template cast<T>();
    ctx.parameters->apply(blocks[0], model);
    Data<T> data(model);
    const VecX<T> q = s->q.row(row).transpose().cast<T>();
    const VecX<T> qd = s->qd.row(row).transpose().cast<T>();
    const VecX<T> qdd = s->qdd.row(row).transpose().cast<T>();
    rnea(model, data, q, qd, qdd);
    passive_forces(model, data, q, qd);
    for (const Joint<T>& j : model.joints)
      for (int k = 0; k < j.nv; ++k) {
        const int i = j.idx_v + k;
        residuals[i] = T(weight) * (data.tau[i] - data.tau_passive[i] - j.dynamics.gear_ratio * T(s->tau(row, i)));
      }
    return true;
  }
};

// Creates the cost function with the smallest stride that covers
// `derivative_dims` (Ceres takes ownership of the functor), then lets
// `configure` add parameter blocks and residuals.
template <class Functor, class Configure>
ceres::CostFunction* make_dynamic(Functor* f, int derivative_dims, Configure&& configure) {
  if (derivative_dims <= 2) {
    auto* c = new ceres::DynamicAutoDiffCostFunction<Functor, 2>(f);
    configure(*c);
    return c;
  }
  if (derivative_dims <= 4) {
    auto* c = new ceres::DynamicAutoDiffCostFunction<Functor, 4>(f);
    configure(*c);
    return c;
  }
  auto* c = new ceres::DynamicAutoDiffCostFunction<Functor, kMaxStride>(f);
  configure(*c);
  return c;
}

}  // namespace

ceres::CostFunction* make_single_shooting_cost(const ResidualContext& ctx, const Window& window) {
  const int P = ctx.parameters->size();
  return make_dynamic(new SingleShooting{ctx, window}, P, [&](auto& cost) {
    cost.AddParameterBlock(P);
    cost.SetNumResiduals(window.length * ctx.observe.residuals_per_sample(*ctx.model));
  });
}

ceres::CostFunction* make_multiple_shooting_cost(const ResidualContext& ctx, const Window& window, bool last,
                                                 double continuity_weight) {
  const int P = ctx.parameters->size();
  const int state = ctx.model->nq + ctx.model->nv;
  const int per = ctx.observe.residuals_per_sample(*ctx.model);
  return make_dynamic(new MultipleShooting{ctx, window, last, continuity_weight}, P + (last ? 1 : 2) * state,
                      [&](auto& cost) {
                        cost.AddParameterBlock(P);
                        cost.AddParameterBlock(state);
                        if (last) {
                          cost.SetNumResiduals((window.length + 1) * per);
                        } else {
                          cost.AddParameterBlock(state);
                          cost.SetNumResiduals(window.length * per + 2 * ctx.model->nv);
                        }
                      });
}

ceres::CostFunction* make_inverse_dynamics_cost(const ResidualContext& ctx,
                                                const std::shared_ptr<const InverseDynamicsSamples>& samples,
                                                int row, double weight) {
  const int P = ctx.parameters->size();
  return make_dynamic(new InverseDynamics{ctx, samples, row, weight}, P, [&](auto& cost) {
    cost.AddParameterBlock(P);
    cost.SetNumResiduals(ctx.model->nv);
  });
}

InverseDynamicsSamples prepare_inverse_dynamics(const Trajectory& tr, int filter_window, int stride) {
  const int T = static_cast<int>(tr.size());
  const int half = std::max(0, filter_window / 2);
  const int nv = static_cast<int>(tr.qd.cols());
  // Centred moving average (a zero-phase low-pass: no lag between q and τ).
  auto smooth = [&](const RowMatrixXd& x) {
    Eigen::MatrixXd out = x;
    for (int k = half; k < T - half; ++k) out.row(k) = x.middleRows(k - half, 2 * half + 1).colwise().mean();
    return out;
  };
  const Eigen::MatrixXd q = smooth(tr.q), qd = smooth(tr.qd);
  std::vector<int> rows;
  for (int k = half + 1; k < T - half - 1; k += std::max(1, stride)) rows.push_back(k);
  InverseDynamicsSamples s;
  const int n = static_cast<int>(rows.size());
  s.q.resize(n, q.cols());
  s.qd.resize(n, nv);
  s.qdd.resize(n, nv);
  s.tau.resize(n, nv);
  for (int i = 0; i < n; ++i) {
    const int k = rows[i];
    s.q.row(i) = q.row(k);
    s.qd.row(i) = qd.row(k);
    // Central difference on non-uniform samples (second-order accurate).
    const double h0 = tr.time[k] - tr.time[k - 1], h1 = tr.time[k + 1] - tr.time[k];
    s.qdd.row(i) = (h0 * h0 * (qd.row(k + 1) - qd.row(k)) + h1 * h1 * (qd.row(k) - qd.row(k - 1))) /
                   (h0 * h1 * (h0 + h1));
    s.tau.row(i) = tr.has_tau() ? Eigen::RowVectorXd(tr.tau.row(k)) : Eigen::RowVectorXd::Zero(nv);
  }
  return s;
}

Trajectory windowed_prediction(const Model<double>& model, const StepOptions& step, const Trajectory& data,
                               int window) {
  Stepper<double> stepper(model, step);
  Trajectory out;
  out.name = data.name;
  out.time = data.time;
  out.q.resize(data.size(), model.nq);
  out.qd.resize(data.size(), model.nv);
  if (data.has_tau()) out.tau = data.tau;
  Eigen::VectorXd q, qd, u = Eigen::VectorXd::Zero(model.nv);
  for (Eigen::Index k = 0; k < data.size(); ++k) {
    if (k % window == 0) {
      q = data.q.row(k).transpose();
      qd = data.qd.row(k).transpose();
      normalize_configuration(model, q);
    }
    out.q.row(k) = q.transpose();
    out.qd.row(k) = qd.transpose();
    if (k + 1 == data.size()) break;
    if (data.has_tau()) u = data.tau.row(k).transpose();
    stepper.step(q, qd, u, data.time[k], data.time[k + 1] - data.time[k]);
  }
  return out;
}

}  // namespace neuralsim
