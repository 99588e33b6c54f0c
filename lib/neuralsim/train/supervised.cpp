// Supervised regression of an MLP with Adam; see supervised.hpp.
#include "neuralsim/train/supervised.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <string>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/core/format.hpp"

namespace neuralsim {

// Named (not anonymous): layers may be compiled as unity translation units.
namespace supervised_detail {

void sv_check_data(const nn::Mlp& net, const nn::RowMatrixXd& x, const nn::RowMatrixXd& y, const char* which,
                   bool may_be_empty) {
  if (x.rows() != y.rows())
    throw InvalidArgument(std::string("SupervisedRegression: ") + which + " inputs have " + std::to_string(x.rows()) +
                          " rows, targets " + std::to_string(y.rows()));
  if (x.rows() == 0 && !may_be_empty) throw InvalidArgument(std::string("SupervisedRegression: no ") + which + " samples");
  if (x.rows() == 0) return;
  if (x.cols() != net.input_dim() || y.cols() != net.output_dim())
    throw InvalidArgument(std::string("SupervisedRegression: ") + which + " samples are " + std::to_string(x.cols()) +
                          " -> " + std::to_string(y.cols()) + ", the network maps " +
                          std::to_string(net.input_dim()) + " -> " + std::to_string(net.output_dim()));
  if (!x.allFinite() || !y.allFinite())
    throw InvalidArgument(std::string("SupervisedRegression: ") + which + " samples are not all finite");
}

}  // namespace supervised_detail

void SupervisedOptions::check() const {
  if (epochs < 1) throw InvalidArgument("SupervisedOptions: epochs must be >= 1");
  if (batch_size < 1) throw InvalidArgument("SupervisedOptions: batch_size must be >= 1");
  if (!(clip_norm >= 0) || !std::isfinite(clip_norm)) throw InvalidArgument("SupervisedOptions: clip_norm must be >= 0");
  schedule.check();
  Adam probe(0, adam);  // checks beta1, beta2, epsilon, weight_decay
  (void)probe;
}

std::string regression_scale_problem(const nn::RowMatrixXd& m) {
  for (Eigen::Index j = 0; j < m.cols(); ++j) {
    // In units of the column's largest magnitude: finite for any finite data.
    const double a = m.col(j).cwiseAbs().maxCoeff();
    if (!(a > kMaxRegressionScale)) continue;  // then mean and deviation are at most a
    const Eigen::ArrayXd u = m.col(j).array() / a;
    const double mean = u.mean();
    const double sd = std::sqrt((u - mean).square().mean());
    if (std::abs(mean) * a > kMaxRegressionScale || sd * a > kMaxRegressionScale)
      return "column " + std::to_string(j) + " has mean " + format_number(mean * a) + " and standard deviation " +
             format_number(sd * a);
  }
  return "";
}

void fit_regression_normalization(nn::Mlp& network, const nn::RowMatrixXd& x, const nn::RowMatrixXd& y,
                                  double std_floor) {
  if (x.rows() == 0 || x.rows() != y.rows() || x.cols() != network.input_dim() || y.cols() != network.output_dim())
    throw InvalidArgument("fit_regression_normalization: expected N >= 1 samples of " +
                          std::to_string(network.input_dim()) + " -> " + std::to_string(network.output_dim()) +
                          ", got " + std::to_string(x.rows()) + " x " + std::to_string(x.cols()) + " and " +
                          std::to_string(y.rows()) + " x " + std::to_string(y.cols()));
  network.fit_input_normalization(x.data(), x.rows(), std_floor);
  const Eigen::VectorXd mean = y.colwise().mean().transpose();
  Eigen::VectorXd sd(y.cols());
  for (Eigen::Index j = 0; j < y.cols(); ++j) {
    const double var = (y.col(j).array() - mean[j]).square().mean();
    sd[j] = std::max(std::sqrt(var), std_floor);
  }
  network.set_output_scaling(sd, mean);
}

SupervisedRegression::SupervisedRegression(nn::Mlp network, nn::RowMatrixXd x_train, nn::RowMatrixXd y_train,
                                           nn::RowMatrixXd x_validation, nn::RowMatrixXd y_validation,
                                           SupervisedOptions options)
    : net_(std::move(network)),
      x_train_(std::move(x_train)),
      y_train_(std::move(y_train)),
      x_val_(std::move(x_validation)),
      y_val_(std::move(y_validation)),
      options_(options) {
  if (net_.num_layers() == 0) throw InvalidArgument("SupervisedRegression: the network has no layers");
  supervised_detail::sv_check_data(net_, x_train_, y_train_, "training", false);
  supervised_detail::sv_check_data(net_, x_val_, y_val_, "validation", true);
  options_.check();
  inv_scale2_ = net_.output_scale().array().square().inverse().matrix();
}

nn::Mlp SupervisedRegression::network_at(const Eigen::VectorXd& x) const {
  if (x.size() != net_.num_parameters())
    throw InvalidArgument("SupervisedRegression::network_at: expected " + std::to_string(net_.num_parameters()) +
                          " parameters, got " + std::to_string(x.size()));
  nn::Mlp n = net_;
  n.set_parameters(x.data());
  return n;
}

TrainingState SupervisedRegression::initial_state() const {
  TrainingState s;
  s.x = Eigen::Map<const Eigen::VectorXd>(net_.parameters(), net_.num_parameters());
  s.best_x = s.x;
  return s;
}

double SupervisedRegression::accumulate(const Eigen::VectorXd& x, const nn::RowMatrixXd& X, const nn::RowMatrixXd& Y,
                                        const int* rows, Eigen::Index count, Eigen::VectorXd* grad) const {
  const nn::Mlp net = network_at(x);
  const Eigen::Index np = net.num_parameters(), m = net.output_dim();
  const Eigen::Index blocks = (count + kBlock - 1) / kBlock;
  std::vector<double> loss(static_cast<size_t>(blocks), 0.0);
  Eigen::MatrixXd g;
  if (grad) g = Eigen::MatrixXd::Zero(np, blocks);
  const Communicator* comm = options_.communicator;
  tbb::parallel_for(tbb::blocked_range<Eigen::Index>(0, blocks, 1), [&](const tbb::blocked_range<Eigen::Index>& r) {
    nn::Workspace<double> ws(net);
    Eigen::VectorXd yhat(m), gy(m);
    for (Eigen::Index b = r.begin(); b != r.end(); ++b) {
      if (!owns(comm, b)) continue;  // block b is rank b mod size's
      double sum = 0;
      const Eigen::Index end = std::min(count, (b + 1) * kBlock);
      for (Eigen::Index k = b * kBlock; k < end; ++k) {
        const Eigen::Index row = rows ? rows[k] : k;
        net.forward(X.row(row).data(), yhat.data(), ws);
        const Eigen::VectorXd e = yhat - Y.row(row).transpose();
        sum += (e.array().square() * inv_scale2_.array()).sum() / static_cast<double>(m);
        if (grad) {
          gy = (2.0 / static_cast<double>(m)) * (e.array() * inv_scale2_.array()).matrix();
          net.backward(gy.data(), nullptr, g.col(b).data(), ws);
        }
      }
      loss[static_cast<size_t>(b)] = sum;
    }
  });
  if (comm) {
    // Every rank's blocks (loss, gradient column) to every rank.
    exchange_owned(
        *comm, static_cast<std::size_t>(blocks),
        [&](std::size_t b, ByteWriter& w) {
          w.put(loss[b]);
          if (grad) w.put_doubles(g.col(static_cast<Eigen::Index>(b)).data(), static_cast<std::size_t>(np));
        },
        [&](std::size_t b, ByteReader& in) {
          loss[b] = in.get<double>();
          if (grad) {
            const std::vector<double> col = in.get_vector();
            g.col(static_cast<Eigen::Index>(b)) = Eigen::Map<const Eigen::VectorXd>(col.data(), np);
          }
        });
  }
  double total = 0;
  for (double l : loss) total += l;  // block order
  if (grad) {
    grad->setZero(np);
    for (Eigen::Index b = 0; b < blocks; ++b) *grad += g.col(b);
  }
  return total;
}

double SupervisedRegression::train_loss(const Eigen::VectorXd& x, Eigen::VectorXd* grad) const {
  const double n = static_cast<double>(x_train_.rows());
  const double sum = accumulate(x, x_train_, y_train_, nullptr, x_train_.rows(), grad);
  if (grad) *grad /= n;
  return sum / n;
}

double SupervisedRegression::validation_loss(const Eigen::VectorXd& x) const {
  if (x_val_.rows() == 0) return std::numeric_limits<double>::quiet_NaN();
  return accumulate(x, x_val_, y_val_, nullptr, x_val_.rows(), nullptr) / static_cast<double>(x_val_.rows());
}

Eigen::VectorXd SupervisedRegression::rmse(const Eigen::VectorXd& x, bool validation) const {
  const nn::RowMatrixXd& X = validation ? x_val_ : x_train_;
  const nn::RowMatrixXd& Y = validation ? y_val_ : y_train_;
  Eigen::VectorXd sq = Eigen::VectorXd::Zero(net_.output_dim());
  if (X.rows() == 0) return Eigen::VectorXd::Constant(net_.output_dim(), std::numeric_limits<double>::quiet_NaN());
  const nn::Mlp net = network_at(x);
  nn::Workspace<double> ws(net);
  Eigen::VectorXd yhat(net.output_dim());
  for (Eigen::Index k = 0; k < X.rows(); ++k) {
    net.forward(X.row(k).data(), yhat.data(), ws);
    sq.array() += (yhat - Y.row(k).transpose()).array().square();
  }
  return (sq / static_cast<double>(X.rows())).cwiseSqrt();
}

bool SupervisedRegression::run_epoch(TrainingState& state, const std::atomic<bool>* stop) const {
  const int e = state.epoch;
  AdamEpochOptions o;
  o.epochs = options_.epochs;
  o.batch_size = options_.batch_size;
  o.clip_norm = options_.clip_norm;
  o.adam = options_.adam;
  o.schedule = options_.schedule;
  o.seed = options_.seed;
  o.communicator = options_.communicator;
  const MinibatchLoss loss = [&](const Eigen::VectorXd& x, const std::vector<int>& order, std::size_t first,
                                 std::size_t last, Eigen::VectorXd& grad) {
    const Eigen::Index count = static_cast<Eigen::Index>(last - first);
    const double value = accumulate(x, x_train_, y_train_, order.data() + first, count, &grad) /
                         static_cast<double>(count);
    grad /= static_cast<double>(count);
    if (!std::isfinite(value) || !grad.allFinite())
      throw NumericalError("supervised training: the loss or gradient of epoch " + std::to_string(e) +
                           ", minibatch " + std::to_string(first / static_cast<std::size_t>(options_.batch_size)) +
                           " is not finite");
    return value;
  };
  const ValidationLoss validation = [this](const Eigen::VectorXd& x) { return validation_loss(x); };
  return run_adam_epoch(state, o, static_cast<int>(x_train_.rows()), loss, validation, x_val_.rows() > 0, EpochRecord(),
                        stop);
}

void SupervisedRegression::run(TrainingState& state, const std::function<bool(const TrainingState&)>& after_epoch,
                               const std::atomic<bool>* stop) const {
  while (state.epoch < options_.epochs) {
    if (!run_epoch(state, stop)) return;
    if (after_epoch && any_of(options_.communicator, !after_epoch(state))) return;
  }
}

}  // namespace neuralsim
