#include "neuralsim/step/replay.hpp"

#include <algorithm>

#include "neuralsim/model/configuration.hpp"

namespace neuralsim {

Trajectory predict_recording(Stepper<double>& stepper, const Trajectory& recorded, long long window,
                             const Eigen::VectorXd* qd0, const StartStates* starts,
                             const WindowCallback& after_window) {
  const Model<double>& model = stepper.model();
  const long long T = recorded.size();
  if (window < 1) throw InvalidArgument("predict_recording: window must be >= 1");
  Trajectory out;
  out.name = recorded.name;
  out.time = recorded.time;
  out.q.resize(T, model.nq);
  out.qd.resize(T, model.nv);
  if (recorded.has_tau()) out.tau = recorded.tau;
  Eigen::VectorXd q, qd;
  for (long long start = 0; start < T; start += window) {
    q = recorded.q.row(start).transpose();
    qd = recorded.qd.row(start).transpose();
    if (start == 0 && qd0) qd = *qd0;
    if (starts) {
      const auto it = std::lower_bound(starts->samples.begin(), starts->samples.end(), start);
      if (it != starts->samples.end() && *it == start) {
        const Eigen::Index row = it - starts->samples.begin();
        q = starts->q.row(row).transpose();
        qd = starts->qd.row(row).transpose();
      }
    }
    normalize_configuration(model, q);
    out.q.row(start) = q.transpose();
    out.qd.row(start) = qd.transpose();
    const long long length = std::min(window, T - 1 - start);
    replay_window(stepper, recorded, static_cast<int>(start), static_cast<int>(length), q, qd,
                  [&](int k, const Eigen::VectorXd& qk, const Eigen::VectorXd& qdk) {
                    out.q.row(k) = qk.transpose();
                    out.qd.row(k) = qdk.transpose();
                  });
    if (after_window) after_window(start, length, out);
    if (length < window) break;
  }
  return out;
}

}  // namespace neuralsim
