// Velocities and accelerations of recorded joint signals: for the
// inverse-dynamics (equation-error) residual, for `data.velocity` and for the
// CSV import's derived `qd` (io/csv_import.hpp). It lives in core, below both
// the I/O and the identification layers, so that they share one filter.
//
// Two methods:
//  - central_difference (the original one): a centred moving average of
//    `window` samples on q and on the recorded q̇, then q̈ from central
//    differences of the smoothed q̇ on the actual (non-uniform) time stamps.
//    On quantized velocities the differences amplify the quantization step
//    by 1/Δt, and the averaging that tames it also flattens the peaks of q̈,
//    which biases fitted inertias low.
//  - savitzky_golay (Savitzky & Golay, Anal. Chem. 36, 1964): at every sample
//    k a polynomial of degree `order` in (t − t_k) is fitted by least squares
//    to the positions of the `window` samples centred on k, on their actual
//    time stamps; q, q̇, q̈ are its value, first and second derivative at t_k.
//    On uniform time stamps this is exactly the classical Savitzky–Golay
//    convolution; on non-uniform ones it is the local polynomial regression
//    it is derived from. It is exact for polynomials of degree ≤ order and
//    uses the positions only (the recorded q̇ is not read), so it needs
//    q and q̇ of the same size (no quaternion joints).
//
// `filter_torque` passes the measured τ through the same smoother (the
// moving average, or the Savitzky–Golay value), so that τ and the filtered
// kinematics have the same phase and the same attenuation: a filter applied
// to both sides of a linear equation leaves the equation intact.
//
// Both methods are zero-phase and drop the samples at the ends of a
// trajectory that have no full window (derivative_margin of them at each
// end). The window is in samples: it is the number of points each fit sees,
// whatever the sampling rate.
#pragma once

#include <Eigen/Core>
#include <vector>

#include "neuralsim/core/trajectory.hpp"

namespace neuralsim {

enum class DerivativeMethod { kCentralDifference, kSavitzkyGolay };

const char* derivative_method_name(DerivativeMethod m);  // "central_difference", "savitzky_golay"

struct DerivativeOptions {
  DerivativeMethod method = DerivativeMethod::kCentralDifference;
  // Samples. central_difference: moving-average width (1 = no smoothing; an
  // even width averages width + 1 samples, as it always did);
  // savitzky_golay: the fit window, odd and ≥ order + 1.
  int window = 5;
  int order = 2;               // savitzky_golay: polynomial degree, 2..10 (q̈ needs 2)
  bool filter_torque = false;  // smooth τ with the same filter
};

// Throws InvalidArgument naming the field ("window", "order") when the
// options cannot work on any data.
void check_derivative_options(const DerivativeOptions& o);

// Samples dropped at each end of a trajectory; a trajectory needs more than
// 2·margin samples to give any.
int derivative_margin(const DerivativeOptions& o);

// Filtered signals at the kept samples: row i is sample rows[i].
struct FilteredDerivatives {
  std::vector<int> rows;
  Eigen::MatrixXd q, qd, qdd;  // rows.size() × nq, nv, nv
  Eigen::MatrixXd tau;         // rows.size() × nv; measured, or filtered (filter_torque); empty without τ
};

// Throws InvalidArgument for invalid options, and for savitzky_golay on a
// trajectory whose q and q̇ differ in size. Returns no rows when the
// trajectory is too short.
FilteredDerivatives filter_derivatives(const Trajectory& tr, const DerivativeOptions& o);

// The local polynomial fit itself, column by column of x (T × n, sampled at
// `time`): value, first and second time derivative at every sample k with
// window/2 samples on both sides (rows window/2 .. T − 1 − window/2 of x;
// T − 2·(window/2) output rows). window odd, 1 ≤ order < window, order ≤ 10.
// d1, d2 may be null.
void savitzky_golay(const Eigen::VectorXd& time, const RowMatrixXd& x, int window, int order,
                    Eigen::MatrixXd* value, Eigen::MatrixXd* d1, Eigen::MatrixXd* d2);

}  // namespace neuralsim
