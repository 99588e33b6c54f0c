// Denavit–Hartenberg models: the link frames are the products of the
// convention's elementary transforms (computed here independently with
// Eigen), the Panda's modified table reproduces its URDF, and a planar arm
// given in standard DH has the textbook mass matrix.
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <cmath>
#include <random>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/dynamics/crba.hpp"
#include "neuralsim/dynamics/energy.hpp"
#include "neuralsim/dynamics/kinematics.hpp"
#include "neuralsim/io/urdf_model.hpp"
#include "neuralsim/io/yaml_model.hpp"
#include "support/algorithms_agree.hpp"
#include "support/files.hpp"

namespace neuralsim {
namespace dh_model_test {

Eigen::Isometry3d rx(double a) { return Eigen::Isometry3d(Eigen::AngleAxisd(a, Eigen::Vector3d::UnitX())); }
Eigen::Isometry3d rz(double a) { return Eigen::Isometry3d(Eigen::AngleAxisd(a, Eigen::Vector3d::UnitZ())); }
Eigen::Isometry3d tx(double x) { return Eigen::Isometry3d(Eigen::Translation3d(x, 0, 0)); }
Eigen::Isometry3d tz(double z) { return Eigen::Isometry3d(Eigen::Translation3d(0, 0, z)); }

// A body's world pose from the kinematics (X_world: E = Rᵀ, r = origin).
Eigen::Isometry3d world_pose(const Data<double>& data, int body) {
  Eigen::Isometry3d T = Eigen::Isometry3d::Identity();
  T.linear() = data.X_world[body].E.transpose();
  T.translation() = data.X_world[body].r;
  return T;
}

struct Row {
  double a, alpha, d, theta;
  bool prismatic;
};

// A spatial RPR arm with every parameter non-zero, as YAML.
const Row kRows[] = {{0.1, 0.7, 0.3, 0.2, false}, {0.25, -1.1, 0.05, -0.4, true}, {-0.15, 0.5, 0.12, 1.3, false}};

std::string arm_yaml(const char* convention, const char* end_frame) {
  std::string y = "name: arm\ndh:\n  convention: " + std::string(convention) + "\n  links:\n";
  int i = 0;
  for (const Row& r : kRows) {
    ++i;
    y += "    - {name: l" + std::to_string(i) + ", a: " + std::to_string(r.a) + ", alpha: " + std::to_string(r.alpha) +
         ", d: " + std::to_string(r.d) + ", theta: " + std::to_string(r.theta) +
         ", type: " + (r.prismatic ? "prismatic" : "revolute") +
         ", mass: " + std::to_string(1.0 + i) + ", com: [0.03, -0.02, 0.05], inertia: [0.02, 0.03, 0.04, 0.001, 0.002, -0.001]}\n";
  }
  return y + "  end_frame: " + end_frame + "\n";
}

Eigen::VectorXd random_q(int n, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.5, 1.5);
  Eigen::VectorXd q(n);
  for (int i = 0; i < n; ++i) q[i] = u(rng);
  return q;
}

double row_value(const Row& r, double q_i, bool want_theta) {
  if (want_theta) return r.theta + (r.prismatic ? 0.0 : q_i);
  return r.d + (r.prismatic ? q_i : 0.0);
}

TEST(DhModel, ModifiedFramesAreCraigsProducts) {
  const Model<double> m = parse_yaml_model(arm_yaml("modified", "{name: tool, a: 0.05, alpha: 0.3, d: 0.2, theta: -0.6}"),
                                           "arm.yaml");
  ASSERT_EQ(m.nv, 3);
  ASSERT_EQ(m.num_bodies(), 4);
  std::mt19937 rng(3);
  Data<double> data(m);
  for (int trial = 0; trial < 5; ++trial) {
    const Eigen::VectorXd q = random_q(3, rng);
    forward_kinematics(m, data, q);
    Eigen::Isometry3d T = Eigen::Isometry3d::Identity();
    double potential = 0;
    for (int i = 0; i < 3; ++i) {
      const Row& r = kRows[i];
      T = T * rx(r.alpha) * tx(r.a) *
          rz(row_value(r, q[i], true)) * tz(row_value(r, q[i], false));
      EXPECT_LT((world_pose(data, i).matrix() - T.matrix()).norm(), 1e-12) << "link " << i + 1;
      // Inertials are given in frame i: the COM is at T (0.03, -0.02, 0.05).
      potential += (1.0 + i + 1) * 9.81 * (T * Eigen::Vector3d(0.03, -0.02, 0.05)).z();
    }
    T = T * rx(0.3) * tx(0.05) * rz(-0.6) * tz(0.2);
    EXPECT_LT((world_pose(data, 3).matrix() - T.matrix()).norm(), 1e-12) << "end frame";
    EXPECT_NEAR(potential_energy(m, data, q), potential, 1e-12);
  }
}

TEST(DhModel, StandardFramesAreDenavitHartenbergProducts) {
  const Model<double> m = parse_yaml_model(arm_yaml("standard", "{name: tool}"), "arm.yaml");
  ASSERT_EQ(m.nv, 3);
  ASSERT_EQ(m.num_bodies(), 4);
  std::mt19937 rng(5);
  Data<double> data(m);
  for (int trial = 0; trial < 5; ++trial) {
    const Eigen::VectorXd q = random_q(3, rng);
    forward_kinematics(m, data, q);
    Eigen::Isometry3d T = Eigen::Isometry3d::Identity();
    double potential = 0;
    for (int i = 0; i < 3; ++i) {
      const Row& r = kRows[i];
      T = T * rz(row_value(r, q[i], true)) * tz(row_value(r, q[i], false)) *
          tx(r.a) * rx(r.alpha);
      potential += (1.0 + i + 1) * 9.81 * (T * Eigen::Vector3d(0.03, -0.02, 0.05)).z();
    }
    EXPECT_LT((world_pose(data, 3).matrix() - T.matrix()).norm(), 1e-12) << "DH frame n";
    EXPECT_NEAR(potential_energy(m, data, q), potential, 1e-12);
  }
  testing::expect_algorithms_agree(m);
}

// Spong, Hutchinson & Vidyasagar, "Robot Modeling and Control", §7.4.1: the
// planar elbow arm, links along x_i of length a_i, COM at l_ci from joint i.
TEST(DhModel, StandardPlanarArmHasTheTextbookMassMatrix) {
  const double a1 = 0.7, lc1 = 0.3, lc2 = 0.2, m1 = 2.0, m2 = 1.5, I1 = 0.05, I2 = 0.03;  // a2 = 0.5 (no term)
  // The inertials are in DH frame i, at the distal end: the COM is at x = l_ci − a_i.
  const std::string yaml = "dh:\n  convention: standard\n  links:\n"
                           "    - {name: upper, a: 0.7, mass: 2.0, com: [-0.4, 0, 0], inertia: [0.001, 0.05, 0.05]}\n"
                           "    - {name: fore, a: 0.5, mass: 1.5, com: [-0.3, 0, 0], inertia: [0.001, 0.03, 0.03]}\n";
  const Model<double> m = parse_yaml_model(yaml, "planar.yaml");
  Data<double> data(m);
  for (double q2 : {0.0, 0.4, -1.9}) {
    const Eigen::Vector2d q(0.8, q2);
    crba(m, data, Eigen::VectorXd(q));
    const double c2 = std::cos(q2);
    EXPECT_NEAR(data.M(0, 0), m1 * lc1 * lc1 + m2 * (a1 * a1 + lc2 * lc2 + 2 * a1 * lc2 * c2) + I1 + I2, 1e-12);
    EXPECT_NEAR(data.M(0, 1), m2 * (lc2 * lc2 + a1 * lc2 * c2) + I2, 1e-12);
    EXPECT_NEAR(data.M(1, 1), m2 * lc2 * lc2 + I2, 1e-12);
  }
}

TEST(DhModel, PandaTableReproducesTheUrdf) {
  NEURALSIM_SKIP_WITHOUT_SHARED("models");
  const Model<double> dh = load_yaml_model(testing::source_path("configs/models/panda_dh.yaml"));
  const Model<double> urdf = load_urdf_model(testing::shared_path("models/franka_panda/panda.urdf"));
  ASSERT_EQ(dh.nv, 7);
  Data<double> ddh(dh), durdf(urdf);
  std::mt19937 rng(11);
  for (int trial = 0; trial < 5; ++trial) {
    const Eigen::VectorXd q = random_q(7, rng);
    Eigen::VectorXd qu = Eigen::VectorXd::Zero(urdf.nq);
    for (int j = 0; j < 7; ++j) qu[urdf.joints[urdf.joint_index("panda_joint" + std::to_string(j + 1))].idx_q] = q[j];
    forward_kinematics(dh, ddh, q);
    forward_kinematics(urdf, durdf, qu);
    // The URDF writes π/2 as 1.57079632679 (4.9e-12 short): 1e-10, not 1e-12.
    for (int j = 1; j <= 7; ++j) {
      const int b = urdf.body_index("panda_link" + std::to_string(j));
      EXPECT_LT((world_pose(ddh, dh.body_index("link" + std::to_string(j))).matrix() - world_pose(durdf, b).matrix())
                    .norm(),
                1e-10)
          << "link " << j;
    }
    const Transform<double> flange = frame_transform_world(urdf, durdf, urdf.frame_index("panda_link8"));
    EXPECT_LT((ddh.X_world[dh.body_index("flange")].r - flange.r).norm(), 1e-10);
  }
  // Same frames, so the same inertials (link 7 of the URDF carries the hand).
  for (int j = 1; j <= 6; ++j) {
    const Inertia<double>& a = dh.bodies[dh.body_index("link" + std::to_string(j))].inertia;
    const Inertia<double>& b = urdf.bodies[urdf.body_index("panda_link" + std::to_string(j))].inertia;
    EXPECT_LT((a.matrix() - b.matrix()).norm(), 1e-12) << "link " << j;
  }
  EXPECT_EQ(dh.joints[dh.joint_index("joint4")].upper, 0.0);
  EXPECT_EQ(dh.joints[dh.joint_index("joint6")].effort, 12);
}

void expect_refused(const std::string& yaml, const std::string& key) {
  try {
    parse_yaml_model(yaml, "bad.yaml");
    ADD_FAILURE() << "accepted:\n" << yaml;
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("bad.yaml"), std::string::npos) << e.what();
  }
}

TEST(DhModel, BadTablesAreRefusedNamingTheKey) {
  const std::string head = "dh:\n  convention: modified\n  links:\n";
  expect_refused("dh:\n  links:\n    - {name: a}\n", "dh.convention");
  expect_refused("dh:\n  convention: craig\n  links:\n    - {name: a}\n", "dh.convention");
  expect_refused(head + "    - {name: a, d: .nan}\n", "dh.links.0.d");
  expect_refused(head + "    - {name: a, type: spherical}\n", "dh.links.0.type");
  expect_refused(head + "    - {name: a, lenght: 1}\n", "lenght");
  expect_refused(head + "    - {name: a, mass: -1}\n", "dh.links.0.mass");
  expect_refused(head + "    - {name: a}\n    - {name: a}\n", "dh.links.1.name");
  expect_refused("dh:\n  convention: standard\n  links:\n    - {name: a}\n  end_frame: {name: t, d: 1}\n", "end_frame");
  expect_refused("dh:\n  convention: standard\n  links: []\n", "dh.links");
}

}  // namespace dh_model_test
}  // namespace neuralsim
