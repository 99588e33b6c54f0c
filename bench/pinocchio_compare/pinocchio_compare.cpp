// NeuralSim and Pinocchio on the same URDF (scripts/bench_pinocchio.sh):
// both load the file with their own parser; at random states q̈, τ, M and
// the derivatives must agree (the state maps between the two coordinate
// conventions below), then each algorithm pair is timed interleaved, the
// least time per call over the samples.
//
// Coordinates: Pinocchio orders a free-flyer's velocity (v, ω), NeuralSim
// (ω, v), both in the base frame; Pinocchio stores an unbounded revolute
// joint (URDF "continuous") as (cos θ, sin θ), NeuralSim as θ. Fixed joints
// are merged by NeuralSim and are frames in Pinocchio.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "pinocchio/algorithm/aba-derivatives.hpp"
#include "pinocchio/algorithm/aba.hpp"
#include "pinocchio/algorithm/crba.hpp"
#include "pinocchio/algorithm/joint-configuration.hpp"
#include "pinocchio/algorithm/kinematics.hpp"
#include "pinocchio/algorithm/rnea-derivatives.hpp"
#include "pinocchio/algorithm/rnea.hpp"
#include "pinocchio/parsers/urdf.hpp"

#include "neuralsim/dynamics/aba.hpp"
#include "neuralsim/dynamics/aba_derivatives.hpp"
#include "neuralsim/dynamics/crba.hpp"
#include "neuralsim/dynamics/kinematics.hpp"
#include "neuralsim/dynamics/rnea.hpp"
#include "neuralsim/dynamics/rnea_derivatives.hpp"
#include "neuralsim/io/urdf_model.hpp"

namespace ns = neuralsim;
namespace pin = pinocchio;

struct JointMap {
  int ours_q, ours_v, pin_q, pin_v, pin_nq, nv;
  bool free, unbounded;
};

struct Pair {
  ns::Model<double> ours;
  pin::Model theirs;
  std::vector<JointMap> joints;
  std::vector<int> pin_index_of_ours;  // velocity coordinate k of ours is pin_index_of_ours[k] in Pinocchio's
  std::vector<bool> base_coordinate;   // ours: a coordinate of the free base
};

Pair load(const std::string& urdf, bool floating) {
  Pair p;
  ns::UrdfOptions options;
  options.floating_base = floating;
  p.ours = ns::load_urdf_model(urdf, options);
  if (floating)
    pin::urdf::buildModel(urdf, pin::JointModelFreeFlyer(), p.theirs);
  else
    pin::urdf::buildModel(urdf, p.theirs);
  if (p.theirs.nv != p.ours.nv) {
    std::fprintf(stderr, "nv differs: Pinocchio %d, NeuralSim %d\n", p.theirs.nv, p.ours.nv);
    std::exit(2);
  }
  p.pin_index_of_ours.assign(p.ours.nv, -1);
  p.base_coordinate.assign(p.ours.nv, false);
  for (pin::JointIndex j = 1; j < p.theirs.njoints; ++j) {
    const std::string& name = p.theirs.names[j];
    const int ours = p.ours.joint_index(name == "root_joint" ? "floating_base" : name);
    if (ours < 0) {
      std::fprintf(stderr, "Pinocchio's joint '%s' is not in NeuralSim's model\n", name.c_str());
      std::exit(2);
    }
    const ns::Joint<double>& oj = p.ours.joints[ours];
    JointMap m{oj.idx_q, oj.idx_v, p.theirs.idx_qs[j], p.theirs.idx_vs[j], p.theirs.nqs[j], p.theirs.nvs[j],
               p.theirs.nqs[j] == 7, p.theirs.nqs[j] == 2 && p.theirs.nvs[j] == 1};
    if (m.nv != oj.nv) {
      std::fprintf(stderr, "joint '%s': nv %d in Pinocchio, %d in NeuralSim\n", name.c_str(), m.nv, oj.nv);
      std::exit(2);
    }
    for (int k = 0; k < m.nv; ++k) {
      // A free base: ours (ω, v) -> Pinocchio's (v, ω).
      p.pin_index_of_ours[m.ours_v + k] = m.pin_v + (m.free ? (k + 3) % 6 : k);
      p.base_coordinate[m.ours_v + k] = m.free;
    }
    p.joints.push_back(m);
  }
  return p;
}

Eigen::VectorXd pin_q(const Pair& p, const Eigen::VectorXd& q) {
  Eigen::VectorXd out(p.theirs.nq);
  for (const JointMap& m : p.joints) {
    if (m.unbounded) {
      out[m.pin_q] = std::cos(q[m.ours_q]);
      out[m.pin_q + 1] = std::sin(q[m.ours_q]);
    } else {
      out.segment(m.pin_q, m.pin_nq) = q.segment(m.ours_q, m.pin_nq);  // free: (x y z qx qy qz qw) in both
    }
  }
  return out;
}

Eigen::VectorXd to_pin(const Pair& p, const Eigen::VectorXd& v) {
  Eigen::VectorXd out(v.size());
  for (int k = 0; k < v.size(); ++k) out[p.pin_index_of_ours[k]] = v[k];
  return out;
}

Eigen::MatrixXd to_pin(const Pair& p, const Eigen::MatrixXd& A) {
  Eigen::MatrixXd out(A.rows(), A.cols());
  for (int r = 0; r < A.rows(); ++r)
    for (int c = 0; c < A.cols(); ++c) out(p.pin_index_of_ours[r], p.pin_index_of_ours[c]) = A(r, c);
  return out;
}

double rel(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return (a - b).cwiseAbs().maxCoeff() / std::max(1.0, b.cwiseAbs().maxCoeff());
}

// Least seconds per call over `samples` samples of `calls` calls each,
// the two functions alternating sample by sample.
std::pair<double, double> interleaved(const std::function<void()>& a, const std::function<void()>& b, int samples,
                                      int calls) {
  double best_a = 1e300, best_b = 1e300;
  for (int s = 0; s < samples; ++s)
    for (int which = 0; which < 2; ++which) {
      const std::function<void()>& f = which == 0 ? a : b;
      const auto t0 = std::chrono::steady_clock::now();
      for (int c = 0; c < calls; ++c) f();
      const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / calls;
      (which == 0 ? best_a : best_b) = std::min(which == 0 ? best_a : best_b, t);
    }
  return {best_a, best_b};
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: pinocchio_compare URDF [--fixed-base] [--samples N]\n");
    return 2;
  }
  const std::string urdf = argv[1];
  bool floating = true;
  int samples = 30;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--fixed-base") floating = false;
    else if (a == "--samples" && i + 1 < argc) samples = std::max(1, std::atoi(argv[++i]));
  }
  Pair p = load(urdf, floating);
  ns::Data<double> od(p.ours);
  pin::Data pd(p.theirs);

  // Agreement at random states.
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  double err_qdd = 0, err_tau = 0, err_M = 0, err_Minv = 0, err_dqdd_dv = 0, err_dtau_dv = 0, err_dqdd_dq = 0;
  Eigen::VectorXd q(p.ours.nq), v(p.ours.nv), tau(p.ours.nv), a(p.ours.nv);
  for (int trial = 0; trial < 10; ++trial) {
    for (int k = 0; k < q.size(); ++k) q[k] = u(rng);
    for (const JointMap& m : p.joints)
      if (m.free) q.segment(m.ours_q + 3, 4).normalize();
    for (int k = 0; k < v.size(); ++k) v[k] = u(rng), tau[k] = 5 * u(rng), a[k] = u(rng);
    const Eigen::VectorXd pq = pin_q(p, q), pv = to_pin(p, v), ptau = to_pin(p, tau), pa = to_pin(p, a);
    ns::aba(p.ours, od, q, v, tau);
    pin::aba(p.theirs, pd, pq, pv, ptau);
    err_qdd = std::max(err_qdd, rel(to_pin(p, od.qdd), pd.ddq));
    ns::rnea(p.ours, od, q, v, a);
    pin::rnea(p.theirs, pd, pq, pv, pa);
    err_tau = std::max(err_tau, rel(to_pin(p, od.tau), pd.tau));
    ns::crba(p.ours, od, q);
    pin::crba(p.theirs, pd, pq);
    pd.M.triangularView<Eigen::StrictlyLower>() = pd.M.transpose().triangularView<Eigen::StrictlyLower>();
    err_M = std::max(err_M, rel(to_pin(p, od.M), pd.M));
    ns::aba_derivatives(p.ours, od, q, v, tau);
    pin::computeABADerivatives(p.theirs, pd, pq, pv, ptau);
    pd.Minv.triangularView<Eigen::StrictlyLower>() = pd.Minv.transpose().triangularView<Eigen::StrictlyLower>();
    err_Minv = std::max(err_Minv, rel(to_pin(p, od.Minv), pd.Minv));
    err_dqdd_dv = std::max(err_dqdd_dv, rel(to_pin(p, od.dqdd_dv), pd.ddq_dv));
    // ∂q̈/∂q: the joints' columns (the free base's tangent conventions differ).
    const Eigen::MatrixXd ours_dq = to_pin(p, od.dqdd_dq);
    for (int k = 0; k < p.ours.nv; ++k)
      if (!p.base_coordinate[k]) {
        const int c = p.pin_index_of_ours[k];
        err_dqdd_dq = std::max(err_dqdd_dq, rel(ours_dq.col(c), pd.ddq_dq.col(c)));
      }
    ns::rnea_derivatives(p.ours, od, q, v, a);
    pin::computeRNEADerivatives(p.theirs, pd, pq, pv, pa);
    err_dtau_dv = std::max(err_dtau_dv, rel(to_pin(p, od.dtau_dv), pd.dtau_dv));
  }
  std::printf("%s: nq %d (Pinocchio %d), nv %d, %s base\n", urdf.c_str(), p.ours.nq, p.theirs.nq, p.ours.nv,
              floating ? "free" : "fixed");
  std::printf("agreement (max relative, 10 random states): qdd %.1e, tau %.1e, M %.1e, Minv %.1e, dqdd/dv %.1e, "
              "dqdd/dq (joint columns) %.1e, dtau/dv %.1e\n",
              err_qdd, err_tau, err_M, err_Minv, err_dqdd_dv, err_dqdd_dq, err_dtau_dv);
  const double worst = std::max({err_qdd, err_tau, err_M, err_Minv, err_dqdd_dv, err_dqdd_dq, err_dtau_dv});

  const Eigen::VectorXd pq = pin_q(p, q), pv = to_pin(p, v), ptau = to_pin(p, tau), pa = to_pin(p, a);
  struct Row {
    const char* name;
    std::function<void()> ours, theirs;
  };
  const std::vector<Row> rows = {
      {"ABA", [&] { ns::aba(p.ours, od, q, v, tau); }, [&] { pin::aba(p.theirs, pd, pq, pv, ptau); }},
      {"RNEA", [&] { ns::rnea(p.ours, od, q, v, a); }, [&] { pin::rnea(p.theirs, pd, pq, pv, pa); }},
      {"forward kinematics (q, v)", [&] { ns::forward_kinematics(p.ours, od, q, v); },
       [&] { pin::forwardKinematics(p.theirs, pd, pq, pv); }},
      {"CRBA (full symmetric M)", [&] { ns::crba(p.ours, od, q); },
       [&] {
         pin::crba(p.theirs, pd, pq);
         pd.M.triangularView<Eigen::StrictlyLower>() = pd.M.transpose().triangularView<Eigen::StrictlyLower>();
       }},
      {"ABA derivatives", [&] { ns::aba_derivatives(p.ours, od, q, v, tau); },
       [&] { pin::computeABADerivatives(p.theirs, pd, pq, pv, ptau); }},
      {"RNEA derivatives", [&] { ns::rnea_derivatives(p.ours, od, q, v, a); },
       [&] { pin::computeRNEADerivatives(p.theirs, pd, pq, pv, pa); }},
  };
  std::printf("\n| algorithm | Pinocchio µs | ours µs | ours / Pinocchio |\n|---|---:|---:|---:|\n");
  for (const Row& r : rows) {
    const auto t = interleaved(r.ours, r.theirs, samples, 2000);
    std::printf("| %s | %.2f | %.2f | %.2f |\n", r.name, 1e6 * t.second, 1e6 * t.first, t.first / t.second);
  }
  if (!(worst < 1e-8)) {
    std::fprintf(stderr, "the two libraries disagree (worst relative difference %.2e > 1e-8)\n", worst);
    return 1;
  }
  return 0;
}
