#include "neuralsim/model/inertia_check.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "neuralsim/core/dense.hpp"
#include "neuralsim/model/model.hpp"

namespace neuralsim {
namespace {

// Rounding in I_c = Ī − m c× c×ᵀ is relative to the terms subtracted, not
// to the (possibly zero: point mass) result.
double link_scale(const Inertia<double>& I) {
  return std::max({I.inertia_about_com().cwiseAbs().maxCoeff(), I.I_origin.cwiseAbs().maxCoeff(),
                   I.mass > 0 ? I.h.squaredNorm() / I.mass : 0.0});
}

std::string vector_text(const Eigen::Vector3d& v) {
  std::ostringstream s;
  s.precision(6);
  s << "(" << v[0] << ", " << v[1] << ", " << v[2] << ")";
  return s.str();
}

// World orientation of each body frame at q = 0 (joint motion is then the
// identity for every joint type).
std::vector<Eigen::Matrix3d> neutral_orientations(const Model<double>& model) {
  std::vector<Eigen::Matrix3d> R(static_cast<size_t>(model.num_bodies()));
  for (int i = 0; i < model.num_bodies(); ++i) {
    const Joint<double>& j = model.joints[i];
    const Eigen::Matrix3d parent = j.parent < 0 ? Eigen::Matrix3d::Identity() : R[static_cast<size_t>(j.parent)];
    R[static_cast<size_t>(i)] = parent * j.origin.E.transpose();  // E maps parent to joint coordinates
  }
  return R;
}

}  // namespace

std::string inertia_problem(const Inertia<double>& I, double reference) {
  std::ostringstream msg;
  msg.precision(6);
  if (!std::isfinite(I.mass) || !I.h.allFinite() || !I.I_origin.allFinite()) {
    msg << "inertial parameters must be finite (mass " << I.mass << ")";
    return msg.str();
  }
  if (I.mass < 0) {
    msg << "mass " << I.mass << " is negative";
    return msg.str();
  }
  const Eigen::Matrix3d Ic = I.inertia_about_com();
  const double asym = (Ic - Ic.transpose()).cwiseAbs().maxCoeff();
  const double scale = std::max({link_scale(I), std::isfinite(reference) ? reference : 0.0, 1e-300});
  const double tol = 1e-9 * scale;
  if (asym > tol) {
    msg << "inertia about the COM is not symmetric (|I - Iᵀ| = " << asym << ")";
    return msg.str();
  }
  const Eigen::Vector3d J = symmetric_eigenvalues(0.5 * (Ic + Ic.transpose()));  // ascending
  auto moments = [&] {
    std::ostringstream m;
    m.precision(6);
    m << "(" << J[0] << ", " << J[1] << ", " << J[2] << ")";
    return m.str();
  };
  if (J[0] < -tol) {
    msg << "inertia about the COM is not positive semidefinite: principal moments " << moments();
    return msg.str();
  }
  // With J ascending, only J2 ≤ J0 + J1 can fail.
  if (J[2] > J[0] + J[1] + tol) {
    msg << "principal moments " << moments() << " violate the triangle inequality: " << J[2] << " > " << J[0]
        << " + " << J[1];
    return msg.str();
  }
  return "";
}

double model_inertia_scale(const Model<double>& model) {
  double s = 0;
  for (const Body<double>& b : model.bodies)
    if (b.inertia.I_origin.allFinite() && b.inertia.h.allFinite() && std::isfinite(b.inertia.mass))
      s = std::max(s, link_scale(b.inertia));
  return s;
}

std::optional<Eigen::Vector3d> planar_axis(const Model<double>& model) {
  const std::vector<Eigen::Matrix3d> R = neutral_orientations(model);
  std::optional<Eigen::Vector3d> axis;
  for (int i = 0; i < model.num_bodies(); ++i) {
    const Joint<double>& j = model.joints[i];
    if (j.type != JointType::kRevolute) continue;
    const Eigen::Vector3d a = (R[static_cast<size_t>(i)] * j.axis).normalized();
    if (!axis) axis = a;
    else if (axis->cross(a).norm() > 1e-9) return std::nullopt;
  }
  if (!axis) return std::nullopt;
  for (int i = 0; i < model.num_bodies(); ++i) {
    const Joint<double>& j = model.joints[i];
    if (j.type == JointType::kFixed || j.type == JointType::kRevolute) continue;
    if (j.type != JointType::kPrismatic) return std::nullopt;
    if (std::abs(axis->dot((R[static_cast<size_t>(i)] * j.axis).normalized())) > 1e-9) return std::nullopt;
  }
  return axis;
}

std::string link_inertia_problem(const Model<double>& model, int body, InertiaCheck check, std::string* warning) {
  const Inertia<double>& I = model.bodies[static_cast<size_t>(body)].inertia;
  const std::string& name = model.bodies[static_cast<size_t>(body)].name;
  const double scale = model_inertia_scale(model);
  const std::string problem = inertia_problem(I, scale);
  if (problem.empty()) return "";
  const std::string what = "link '" + name + "': " + problem;
  // Only the inertia about the COM can be accepted by the planar check.
  const bool com_inertia = std::isfinite(I.mass) && I.mass >= 0 && I.h.allFinite() && I.I_origin.allFinite();
  if (check != InertiaCheck::kJointSpace || !com_inertia) return what;
  const std::optional<Eigen::Vector3d> axis = planar_axis(model);
  const std::string hint =
      "; a link that is not a physical 3-D body is accepted only in a planar chain (every joint revolute about "
      "parallel axes or prismatic across them), whose dynamics use only its inertia about that axis";
  if (!axis) return what + hint;
  // The inertia about the axis through the link's joint (its frame origin).
  const Eigen::Vector3d a = neutral_orientations(model)[static_cast<size_t>(body)].transpose() * *axis;
  const double about_joint = a.dot(I.I_origin * a);
  std::ostringstream s;
  s.precision(6);
  if (about_joint < -1e-9 * std::max(scale, 1e-300)) {
    s << what << "; its inertia about the joint axis " << vector_text(*axis) << " is " << about_joint
      << " < 0, which no planar system has either";
    return s.str();
  }
  if (warning) {
    s << what << ": not a physical 3-D body; accepted because the model is a planar chain about the axis "
      << vector_text(*axis) << ", whose dynamics use only the link's inertia about that axis (" << about_joint
      << " kg·m² about its joint, mass " << I.mass
      << "); estimating 'link." << name << ".inertial' (log-Cholesky) or a non-planar joint would refuse it";
    *warning = s.str();
  }
  return "";
}

}  // namespace neuralsim
