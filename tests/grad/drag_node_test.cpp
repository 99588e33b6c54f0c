// The drag-site and link-input external nodes (augment/drag.hpp:
// DragSiteNode, LinkInputsNode), whose VJPs are written by hand, checked
// against mathematics:
//  * central finite differences of the node's own double forward function
//    (Richardson-extrapolated, (4 D(h/2) - D(h)) / 3), for every input of
//    every site variant (drag force and coefficient × residual, scale,
//    replace × world and body frame × three drag laws) and every link
//    quantity, at random link states whose rotation is perturbed off SO(3)
//    (the nodes differentiate the literal expressions, so each of the 9
//    entries of E has its own partial): relative 1e-6;
//  * the same function taped operation by operation in Rev with the
//    templates the double path uses (link_com_velocity_world,
//    drag_force_world, add_world_force_at_point): 1e-12, values to 1e-14.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "neuralsim/augment/drag.hpp"
#include "neuralsim/grad/rev_engine.hpp"

namespace neuralsim {
namespace {

using Fn = std::function<void(const double*, double*)>;

// x̄ = Jᵀȳ by central differences of f (Richardson), for n inputs, m outputs.
std::vector<double> fd_vjp(const Fn& f, std::vector<double> x, int m, const std::vector<double>& ybar) {
  const int n = static_cast<int>(x.size());
  std::vector<double> g(n), yp(m), ym(m);
  auto D = [&](int i, double h) {
    const double x0 = x[i];
    x[i] = x0 + h;
    f(x.data(), yp.data());
    x[i] = x0 - h;
    f(x.data(), ym.data());
    x[i] = x0;
    double d = 0;
    for (int k = 0; k < m; ++k) d += ybar[k] * (yp[k] - ym[k]);
    return d / (2 * h);
  };
  for (int i = 0; i < n; ++i) {
    const double h = 1e-4 * std::max(1.0, std::abs(x[i]));
    g[i] = (4 * D(i, h / 2) - D(i, h)) / 3;
  }
  return g;
}

double relative_error(const std::vector<double>& g, const std::vector<double>& ref) {
  double scale = 0;
  for (double r : ref) scale = std::max(scale, std::abs(r));
  double worst = 0;
  for (std::size_t i = 0; i < g.size(); ++i)
    worst = std::max(worst, std::abs(g[i] - ref[i]) / std::max(std::abs(ref[i]), 1e-3 * scale));
  return worst;
}

// A random link state (pack_link_state layout): a rotation perturbed by
// 1e-2 off SO(3), an origin, a body velocity and a centre of mass.
std::vector<double> random_link_state(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const Eigen::Quaterniond qr(u(rng), u(rng), u(rng), u(rng));
  Eigen::Matrix3d E = qr.normalized().toRotationMatrix();
  for (int k = 0; k < 9; ++k) E.data()[k] += 1e-2 * u(rng);
  std::vector<double> x(kLinkStateSize);
  for (int k = 0; k < 9; ++k) x[k] = E.data()[k];
  for (int k = 9; k < kLinkStateSize; ++k) x[k] = 0.5 * u(rng);
  return x;
}

// The node's VJP called directly (as Tape::reverse calls it).
std::vector<double> node_vjp(ExternalFunction& node, const std::vector<double>& x, int m,
                             const std::vector<double>& ybar) {
  std::vector<double> y(m), g(x.size(), 0.0);
  const ExternalCall call{x.data(), y.data(), static_cast<int>(x.size()), m, 0};
  node.vjp(call, ybar.data(), g.data());
  return g;
}

std::vector<double> random_vector(std::mt19937_64& rng, int n) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> v(n);
  for (double& e : v) e = u(rng);
  return v;
}

// The reference of a drag site in Rev, taped operation by operation: the
// same templates and expressions as AugmentedDynamics::apply_step_site.
void taped_drag_site(SiteQuantity quantity, AugmentMode mode, AugmentFrame frame, const DragLaw& law,
                     const Eigen::Vector3d& axis, const Rev* x, Rev* out) {
  Model<Rev> model;
  Body<Rev> body;
  body.inertia.mass = Rev(1.0);
  model.bodies.push_back(body);
  Data<Rev> data;
  data.X_world.assign(1, Transform<Rev>());
  data.v.assign(1, Vec6<Rev>::Zero());
  data.f_ext.assign(1, Vec6<Rev>::Zero());
  for (int k = 0; k < 9; ++k) data.X_world[0].E.data()[k] = x[k];
  for (int k = 0; k < 3; ++k) data.X_world[0].r[k] = x[9 + k];
  for (int k = 0; k < 6; ++k) data.v[0][k] = x[12 + k];
  const Vec3<Rev> c(x[18], x[19], x[20]);
  const Rev* y = x + kLinkStateSize;
  const Vec3<Rev> v = body_point_velocity_world(data, 0, c);
  const Vec3<Rev> a = data.X_world[0].E.transpose() * axis.cast<Rev>();
  Vec3<Rev> f = drag_force_world(law, a, v);
  const Mat3<Rev>& E = data.X_world[0].E;
  auto change = [&](const Rev& base, const Rev& yy) {
    return mode == AugmentMode::kResidual ? yy : mode == AugmentMode::kScale ? base * yy : yy - base;
  };
  if (quantity == SiteQuantity::kDragCoefficient) {
    f -= change(Rev(law.linear), y[0]) * v;
  } else {
    const Vec3<Rev> yv(y[0], y[1], y[2]);
    const bool b = frame == AugmentFrame::kBody;
    if (mode == AugmentMode::kReplace) {
      f = b ? Vec3<Rev>(E.transpose() * yv) : yv;
    } else {
      Vec3<Rev> delta = yv;
      if (mode == AugmentMode::kScale) delta = (b ? Vec3<Rev>(E * f) : f).cwiseProduct(yv);
      f += b ? Vec3<Rev>(E.transpose() * delta) : delta;
    }
  }
  add_world_force_at_point<Rev>(data, 0, body_point_world(data, 0, c), f);
  if (quantity == SiteQuantity::kDragWrench) {  // the couple, residual or replace of 0
    const Vec3<Rev> yt(y[3], y[4], y[5]);
    data.f_ext[0].head<3>() += frame == AugmentFrame::kBody ? yt : Vec3<Rev>(E * yt);
  }
  for (int k = 0; k < 6; ++k) out[k] = data.f_ext[0][k];
}

TEST(DragSiteNode, VjpMatchesCentralDifferencesAndTheTapedExpressions) {
  std::mt19937_64 rng(7);
  const DragLaw laws[] = {{0.05, 0.5, 0.2}, {0.3, 0.0, 0.0}, {0.0, 0.0, 0.4}, {0.0, 0.7, 0.0}};
  const Eigen::Vector3d axis = Eigen::Vector3d(1.0, 0.2, -0.3).normalized();
  int cases = 0;
  double worst_fd = 0, worst_tape = 0;
  for (SiteQuantity quantity : {SiteQuantity::kDragForce, SiteQuantity::kDragCoefficient, SiteQuantity::kDragWrench})
    for (AugmentMode mode : {AugmentMode::kResidual, AugmentMode::kScale, AugmentMode::kReplace})
      for (AugmentFrame frame : {AugmentFrame::kWorld, AugmentFrame::kBody})
        for (const DragLaw& law : laws) {
          if (quantity == SiteQuantity::kDragCoefficient && frame == AugmentFrame::kBody) continue;  // no frame
          if (quantity == SiteQuantity::kDragWrench && mode == AugmentMode::kScale) continue;  // refused: no couple to scale
          DragSiteNode node(quantity, mode, frame, law, axis);
          std::vector<double> x = random_link_state(rng);
          for (double yk : random_vector(rng, node.num_network_outputs())) x.push_back(yk);
          const std::vector<double> ybar = random_vector(rng, 6);
          const std::vector<double> g = node_vjp(node, x, 6, ybar);
          const Fn f = [&](const double* xi, double* yo) { node.evaluate(xi, yo); };
          const double e_fd = relative_error(g, fd_vjp(f, x, 6, ybar));
          // Taped reference.
          Tape tape;
          std::vector<Rev> xr(x.size());
          for (std::size_t k = 0; k < x.size(); ++k) xr[k] = tape.variable(x[k]);
          Rev out[6];
          taped_drag_site(quantity, mode, frame, law, axis, xr.data(), out);
          double yv[6];
          node.evaluate(x.data(), yv);
          Rev L = 0.0;
          for (int k = 0; k < 6; ++k) {
            EXPECT_NEAR(out[k].value(), yv[k], 1e-14 * (1 + std::abs(yv[k])));
            L += ybar[k] * out[k];
          }
          tape.reverse(L);
          std::vector<double> gt(x.size());
          for (std::size_t k = 0; k < x.size(); ++k) gt[k] = tape.adjoint(xr[k]);
          const double e_tape = relative_error(g, gt);
          const std::string label = std::string(site_quantity_name(quantity)) +
                                    " mode " + std::to_string(static_cast<int>(mode)) + " frame " +
                                    std::to_string(static_cast<int>(frame)) + " law (" + std::to_string(law.linear) +
                                    ", " + std::to_string(law.normal) + ", " + std::to_string(law.quadratic) + ")";
          EXPECT_LT(e_fd, 1e-6) << label;
          EXPECT_LT(e_tape, 1e-12) << label;
          worst_fd = std::max(worst_fd, e_fd);
          worst_tape = std::max(worst_tape, e_tape);
          ++cases;
        }
  std::printf("[ drag site node ] %d variants: VJP vs central differences %.1e, vs taped expressions %.1e\n", cases,
              worst_fd, worst_tape);
}

// Through a tape: the node's outputs are variables whose adjoints reach the
// inputs (record → reverse), and x = 0 velocity gives the documented
// constant-zero branches (speed, angle) without NaNs.
TEST(DragSiteNode, OnTheTapeAndAtRest) {
  std::mt19937_64 rng(11);
  DragSiteNode node(SiteQuantity::kDragForce, AugmentMode::kResidual, AugmentFrame::kWorld, {0.05, 0.5, 0.2},
                    Eigen::Vector3d::UnitX());
  std::vector<double> x = random_link_state(rng);
  for (double yk : random_vector(rng, 3)) x.push_back(yk);
  const std::vector<double> ybar = random_vector(rng, 6);
  Tape tape;
  std::vector<Rev> xr(x.size());
  for (std::size_t k = 0; k < x.size(); ++k) xr[k] = tape.variable(x[k]);
  Rev out[6];
  node.record(tape, xr.data(), out);
  EXPECT_EQ(tape.num_externals(), 1u);
  Rev L = 0.0;
  for (int k = 0; k < 6; ++k) L += ybar[k] * out[k];
  tape.reverse(L);
  const std::vector<double> g = node_vjp(node, x, 6, ybar);
  for (std::size_t k = 0; k < x.size(); ++k) EXPECT_EQ(tape.adjoint(xr[k]), g[k]) << k;
  // At rest (v = 0): finite adjoints, the quadratic term contributes nothing.
  for (int k = 12; k < 18; ++k) x[k] = 0.0;
  for (double gk : node_vjp(node, x, 6, ybar)) EXPECT_TRUE(std::isfinite(gk));
}

TEST(LinkInputsNode, VjpMatchesCentralDifferencesAndTheTapedExpressions) {
  std::mt19937_64 rng(5);
  const Eigen::Vector3d axis = Eigen::Vector3d(0.9, -0.3, 0.2).normalized();
  LinkInputsNode node;
  const int l0 = node.add_link(), l1 = node.add_link();
  node.add_quantity(InputKind::kLinkLinearVelocity, l0, axis);
  node.add_quantity(InputKind::kLinkAngleOfAttack, l0, axis);
  node.add_quantity(InputKind::kLinkAngularVelocity, l1, axis);
  node.add_quantity(InputKind::kLinkSpeed, l1, axis);
  node.add_quantity(InputKind::kLinkAngleOfAttack, l1, Eigen::Vector3d::UnitX());
  node.add_quantity(InputKind::kLinkSpeed, l0, axis);
  ASSERT_EQ(node.num_inputs(), 2 * kLinkStateSize);
  ASSERT_EQ(node.num_outputs(), 10);
  EXPECT_THROW(node.add_quantity(InputKind::kLinkPosition, l0, axis), InvalidArgument);
  double worst_fd = 0, worst_tape = 0;
  for (int trial = 0; trial < 5; ++trial) {
    std::vector<double> x = random_link_state(rng);
    for (double xk : random_link_state(rng)) x.push_back(xk);
    const std::vector<double> ybar = random_vector(rng, 10);
    const std::vector<double> g = node_vjp(node, x, 10, ybar);
    const Fn f = [&](const double* xi, double* yo) { node.evaluate(xi, yo); };
    const double e_fd = relative_error(g, fd_vjp(f, x, 10, ybar));
    EXPECT_LT(e_fd, 1e-6) << "trial " << trial;
    // Taped reference with the templates gather() uses on a Data<Rev>.
    Tape tape;
    std::vector<Rev> xr(x.size());
    for (std::size_t k = 0; k < x.size(); ++k) xr[k] = tape.variable(x[k]);
    Data<Rev> data;
    data.X_world.assign(2, Transform<Rev>());
    data.v.assign(2, Vec6<Rev>::Zero());
    Vec3<Rev> c[2];
    for (int b = 0; b < 2; ++b) {
      const Rev* s = xr.data() + b * kLinkStateSize;
      for (int k = 0; k < 9; ++k) data.X_world[b].E.data()[k] = s[k];
      for (int k = 0; k < 3; ++k) data.X_world[b].r[k] = s[9 + k];
      for (int k = 0; k < 6; ++k) data.v[b][k] = s[12 + k];
      c[b] = Vec3<Rev>(s[18], s[19], s[20]);
    }
    auto com_velocity = [&](int b) { return body_point_velocity_world(data, b, c[b]); };
    auto world = [&](int b, bool lin) {
      const Vec6<Rev>& v = data.v[b];
      const Vec3<Rev> vb = lin ? Vec3<Rev>(v.tail<3>()) : Vec3<Rev>(v.head<3>());
      return Vec3<Rev>(data.X_world[b].E.transpose() * vb);
    };
    auto aoa = [&](int b, const Eigen::Vector3d& ax) {
      return planar_angle(Vec3<Rev>(data.X_world[b].E.transpose() * ax.cast<Rev>()), com_velocity(b));
    };
    std::vector<Rev> out;
    for (int i = 0; i < 3; ++i) out.push_back(world(0, true)[i]);
    out.push_back(aoa(0, axis));
    for (int i = 0; i < 3; ++i) out.push_back(world(1, false)[i]);
    out.push_back(speed_of(com_velocity(1)));
    out.push_back(aoa(1, Eigen::Vector3d::UnitX()));
    out.push_back(speed_of(com_velocity(0)));
    std::vector<double> yv(10);
    node.evaluate(x.data(), yv.data());
    Rev L = 0.0;
    for (int k = 0; k < 10; ++k) {
      EXPECT_NEAR(out[k].value(), yv[k], 1e-14 * (1 + std::abs(yv[k]))) << k;
      L += ybar[k] * out[k];
    }
    tape.reverse(L);
    std::vector<double> gt(x.size());
    for (std::size_t k = 0; k < x.size(); ++k) gt[k] = tape.adjoint(xr[k]);
    const double e_tape = relative_error(g, gt);
    EXPECT_LT(e_tape, 1e-12) << "trial " << trial;
    worst_fd = std::max(worst_fd, e_fd);
    worst_tape = std::max(worst_tape, e_tape);
  }
  std::printf("[ link inputs node ] VJP vs central differences %.1e, vs taped expressions %.1e\n", worst_fd,
              worst_tape);
}

}  // namespace
}  // namespace neuralsim
