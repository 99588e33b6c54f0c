// MJCF loading checked against MuJoCo itself (libmujoco-dev, the oracle):
// for the shipped Laikago and swimmer MJCFs and the fixtures in
// tests/fixtures/mjcf/ (every joint kind, defaults and includes, each
// orientation form, inertia from each geom type, a free-floating base,
// armature, damping, springs, motors), on random states:
//  - the joint-space mass matrix against mj_fullM, the bias forces against
//    qfrc_bias, the passive forces against qfrc_passive and q̈ against
//    mj_forward's qacc with constraints disabled, to 1e-9 relative;
//  - body masses, world COM positions and world inertias against MuJoCo's
//    compiled model and kinematics;
//  - a 1000-step passive rollout against MuJoCo's RK4 at the same step, to 1e-6.
// Conventions compared in MuJoCo's: quaternions w x y z (ours x y z w), and a
// free joint's linear velocity in the world frame (ours in the body frame).
// Without MuJoCo the oracle tests skip, and fail under the test command
// (NEURALSIM_REQUIRE_ORACLES=1). Bad input: malformed XML, unknown joint
// type, shellinertia, tendons, strict mode, a range without limited.
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include <Eigen/Dense>

#ifdef NEURALSIM_HAVE_MUJOCO
#include <mujoco/mujoco.h>
#endif

#include "neuralsim/core/errors.hpp"
#include "neuralsim/dynamics/crba.hpp"
#include "neuralsim/dynamics/kinematics.hpp"
#include "neuralsim/dynamics/rnea.hpp"
#include "neuralsim/experiment/experiment.hpp"
#include "neuralsim/io/mjcf_model.hpp"
#include "neuralsim/step/stepper.hpp"
#include "support/files.hpp"

namespace neuralsim {
namespace mjcf_test {

constexpr double kPi() { return 3.14159265358979323846; }

std::string fixture(const std::string& name) { return testing::source_path("tests/fixtures/mjcf/" + name); }

#ifdef NEURALSIM_HAVE_MUJOCO
constexpr bool kHaveMujoco = true;
#else
constexpr bool kHaveMujoco = false;
#endif

// ||a - b||∞ ≤ tol·max(||b||∞, floor).
::testing::AssertionResult close(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b, double tol, double floor = 1e-300) {
  if (a.rows() != b.rows() || a.cols() != b.cols())
    return ::testing::AssertionFailure() << "shapes " << a.rows() << "x" << a.cols() << " vs " << b.rows() << "x" << b.cols();
  const double scale = std::max(b.cwiseAbs().maxCoeff(), floor);
  const double err = (a - b).cwiseAbs().maxCoeff();
  if (err <= tol * scale) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "max difference " << err << " > " << tol << " x " << scale << "\nours:\n"
                                       << a << "\nMuJoCo:\n" << b;
}

#ifdef NEURALSIM_HAVE_MUJOCO

struct Oracle {
  mjModel* m = nullptr;
  mjData* d = nullptr;
  explicit Oracle(const std::string& path) {
    char error[1000] = "";
    m = mj_loadXML(path.c_str(), nullptr, error, sizeof error);
    if (m) d = mj_makeData(m);
    EXPECT_NE(m, nullptr) << path << ": " << error;
  }
  ~Oracle() {
    if (d) mj_deleteData(d);
    if (m) mj_deleteModel(m);
  }
  Oracle(const Oracle&) = delete;
  Oracle& operator=(const Oracle&) = delete;
};

// Our moving joints in order, with MuJoCo's joint of the same position:
// both number joints depth-first in file order.
std::vector<int> moving_joints(const Model<double>& model) {
  std::vector<int> out;
  for (int i = 0; i < model.num_bodies(); ++i)
    if (model.joints[i].nv > 0) out.push_back(i);
  return out;
}

// The state in both conventions, and T with qvel_mj = T·v_ours, and
// c = Ṫ·v_ours (qacc_mj = T·q̈_ours + c).
struct State {
  Eigen::VectorXd q_mj, v_mj, q, v, c;
  Eigen::MatrixXd T;
};

Eigen::Quaterniond random_quaternion(std::mt19937_64& rng) {
  std::normal_distribution<double> n(0, 1);
  return Eigen::Quaterniond(n(rng), n(rng), n(rng), n(rng)).normalized();
}

State random_state(const Model<double>& model, const mjModel* m, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  State s;
  s.q_mj.resize(m->nq);
  s.v_mj.resize(m->nv);
  s.q.resize(model.nq);
  s.v.resize(model.nv);
  s.c = Eigen::VectorXd::Zero(model.nv);
  s.T = Eigen::MatrixXd::Identity(model.nv, model.nv);
  for (int k = 0; k < m->nv; ++k) s.v_mj[k] = u(rng);
  const std::vector<int> ours = moving_joints(model);
  EXPECT_EQ(static_cast<int>(ours.size()), m->njnt);
  for (int jm = 0; jm < m->njnt && jm < static_cast<int>(ours.size()); ++jm) {
    const Joint<double>& j = model.joints[ours[jm]];
    const int qa = m->jnt_qposadr[jm], va = m->jnt_dofadr[jm];
    EXPECT_EQ(qa, j.idx_q);
    EXPECT_EQ(va, j.idx_v);
    switch (m->jnt_type[jm]) {
      case mjJNT_HINGE:
      case mjJNT_SLIDE:
        EXPECT_TRUE(j.type == JointType::kRevolute || j.type == JointType::kPrismatic) << j.name;
        s.q_mj[qa] = u(rng);
        s.q[j.idx_q] = s.q_mj[qa];
        s.v[j.idx_v] = s.v_mj[va];
        break;
      case mjJNT_BALL: {
        EXPECT_EQ(j.type, JointType::kSpherical) << j.name;
        const Eigen::Quaterniond r = random_quaternion(rng);
        s.q_mj.segment<4>(qa) << r.w(), r.x(), r.y(), r.z();
        s.q.segment<4>(j.idx_q) << r.x(), r.y(), r.z(), r.w();
        s.v.segment<3>(j.idx_v) = s.v_mj.segment<3>(va);
        break;
      }
      case mjJNT_FREE: {
        EXPECT_EQ(j.type, JointType::kFree) << j.name;
        const Eigen::Vector3d p(u(rng), u(rng), 1 + u(rng));
        const Eigen::Quaterniond r = random_quaternion(rng);
        s.q_mj.segment<3>(qa) = p;
        s.q_mj.segment<4>(qa + 3) << r.w(), r.x(), r.y(), r.z();
        s.q.segment<3>(j.idx_q) = p;
        s.q.segment<4>(j.idx_q + 3) << r.x(), r.y(), r.z(), r.w();
        const Eigen::Matrix3d R = r.toRotationMatrix();
        const Eigen::Vector3d w = s.v_mj.segment<3>(va + 3), v_world = s.v_mj.segment<3>(va);
        const Eigen::Vector3d v_body = R.transpose() * v_world;
        s.v.segment<3>(j.idx_v) = w;
        s.v.segment<3>(j.idx_v + 3) = v_body;
        s.T.block(j.idx_v, j.idx_v, 6, 6).setZero();
        s.T.block<3, 3>(j.idx_v, j.idx_v + 3) = R;                   // v_world = R v_body
        s.T.block<3, 3>(j.idx_v + 3, j.idx_v) = Eigen::Matrix3d::Identity();  // ω local in both
        s.c.segment<3>(j.idx_v) = R * w.cross(v_body);               // d/dt(R) v_body
        break;
      }
      default: ADD_FAILURE() << "unexpected MuJoCo joint type";
    }
  }
  return s;
}

// Our q mapped to MuJoCo's qpos (quaternions reordered).
Eigen::VectorXd to_mujoco_q(const Model<double>& model, const Eigen::VectorXd& q) {
  Eigen::VectorXd out = q;
  for (const Joint<double>& j : model.joints) {
    const int o = j.type == JointType::kFree ? 3 : j.type == JointType::kSpherical ? 0 : -1;
    if (o < 0) continue;
    out[j.idx_q + o] = q[j.idx_q + o + 3];
    out.segment<3>(j.idx_q + o + 1) = q.segment<3>(j.idx_q + o);
  }
  return out;
}

struct ControlSetting {
  Eigen::VectorXd ctrl_mj, control;  // MuJoCo's ctrl, our per-coordinate control
};

ControlSetting random_controls(const MjcfModel& loaded, const mjModel* m, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  ControlSetting c;
  c.ctrl_mj = Eigen::VectorXd::Zero(m->nu);
  c.control = Eigen::VectorXd::Zero(loaded.model.nv);
  EXPECT_EQ(static_cast<int>(loaded.actuators.size()), m->nu);
  for (int a = 0; a < m->nu && a < static_cast<int>(loaded.actuators.size()); ++a) {
    c.ctrl_mj[a] = u(rng);
    c.control[loaded.model.joints[loaded.actuators[a].joint].idx_v] = c.ctrl_mj[a];
  }
  return c;
}

// Every check of the header comment on `path` (an MJCF file MuJoCo loads as is).
void check_against_mujoco(const std::string& path, int states = 5) {
  std::vector<std::string> warnings;
  const MjcfModel loaded = load_mjcf_model(path, {}, &warnings);
  const Model<double>& model = loaded.model;
  Oracle o(path);
  ASSERT_NE(o.m, nullptr);
  mjModel* m = o.m;
  mjData* d = o.d;
  ASSERT_EQ(model.nq, m->nq);
  ASSERT_EQ(model.nv, m->nv);
  m->opt.disableflags |= mjDSBL_CONSTRAINT;
  EXPECT_EQ(loaded.sim.timestep, m->opt.timestep);
  EXPECT_TRUE(close(model.gravity, Eigen::Map<const Eigen::Vector3d>(m->opt.gravity), 0));
  for (int a = 0; a < m->nu && a < static_cast<int>(loaded.actuators.size()); ++a) {
    EXPECT_EQ(loaded.actuators[a].gear, m->actuator_gear[6 * a]);
    EXPECT_EQ(loaded.actuators[a].ctrl_limited, m->actuator_ctrllimited[a] != 0);
    if (m->actuator_ctrllimited[a]) {
      EXPECT_EQ(loaded.actuators[a].ctrl_lower, m->actuator_ctrlrange[2 * a]);
      EXPECT_EQ(loaded.actuators[a].ctrl_upper, m->actuator_ctrlrange[2 * a + 1]);
    }
  }
  std::mt19937_64 rng(35);
  Data<double> data(model);
  StepOptions options;
  options.dt = m->opt.timestep;
  Stepper<double> stepper(model, options);
  for (int trial = 0; trial < states; ++trial) {
    SCOPED_TRACE("state " + std::to_string(trial));
    const State s = random_state(model, m, rng);
    const ControlSetting u = random_controls(loaded, m, rng);
    Eigen::Map<Eigen::VectorXd>(d->qpos, m->nq) = s.q_mj;
    Eigen::Map<Eigen::VectorXd>(d->qvel, m->nv) = s.v_mj;
    Eigen::Map<Eigen::VectorXd>(d->ctrl, m->nu) = u.ctrl_mj;
    // Joint-space passive forces without the fluid's (ours: passive_forces;
    // the fluid is body drag, in the accelerations below).
    const double density = m->opt.density, viscosity = m->opt.viscosity;
    m->opt.density = m->opt.viscosity = 0;
    mj_forward(m, d);
    const Eigen::VectorXd passive_mj = Eigen::Map<const Eigen::VectorXd>(d->qfrc_passive, m->nv);
    m->opt.density = density;
    m->opt.viscosity = viscosity;
    mj_forward(m, d);
    Eigen::MatrixXd M_mj(m->nv, m->nv);
    mj_fullM(m, M_mj.data(), d->qM);  // symmetric: row- or column-major alike
    const Eigen::VectorXd bias_mj = Eigen::Map<const Eigen::VectorXd>(d->qfrc_bias, m->nv);
    const Eigen::VectorXd qacc_mj = Eigen::Map<const Eigen::VectorXd>(d->qacc, m->nv);

    crba(model, data, s.q);
    EXPECT_TRUE(close(data.M, s.T.transpose() * M_mj * s.T, 1e-9)) << "mass matrix";
    data.clear_external_forces();
    nonlinear_effects(model, data, s.q, s.v);
    EXPECT_TRUE(close(data.bias, s.T.transpose() * (bias_mj + M_mj * s.c), 1e-9, 1e-12)) << "bias forces";
    passive_forces(model, data, s.q, s.v);
    EXPECT_TRUE(close(data.tau_passive, s.T.transpose() * passive_mj, 1e-9, 1e-12)) << "passive forces";
    stepper.forward_dynamics(s.q, s.v, u.control, 0);
    EXPECT_TRUE(close(s.T * stepper.data().qdd + s.c, qacc_mj, 1e-9, 1e-12)) << "accelerations";

    // Every named site on a body is a frame of ours at MuJoCo's site pose.
    forward_kinematics(model, data, s.q);
    for (int k = 0; k < m->nsite; ++k) {
      const char* site = mj_id2name(m, mjOBJ_SITE, k);
      if (!site || m->site_bodyid[k] == 0) continue;
      const int f = model.frame_index(site);
      ASSERT_GE(f, 0) << "MuJoCo site '" << site << "' is not a frame of ours";
      const Transform<double> X = frame_transform_world(model, data, f);
      EXPECT_TRUE(close(X.r, Eigen::Map<const Eigen::Vector3d>(d->site_xpos + 3 * k), 1e-9)) << site << " position";
      const Eigen::Matrix3d R_mj = Eigen::Map<const Eigen::Matrix<double, 3, 3, Eigen::RowMajor>>(d->site_xmat + 9 * k);
      EXPECT_TRUE(close(Eigen::Matrix3d(X.E.transpose()), R_mj, 1e-9)) << site << " orientation";
    }

    // Masses, world COMs and world inertias of every MuJoCo body.
    forward_kinematics(model, data, s.q);
    for (int b = 1; b < m->nbody; ++b) {
      const std::string name = mj_id2name(m, mjOBJ_BODY, b) ? mj_id2name(m, mjOBJ_BODY, b) : "";
      const int i = model.body_index(name);
      ASSERT_GE(i, 0) << "MuJoCo body '" << name << "' not in our model";
      const Inertia<double>& I = model.bodies[i].inertia;
      EXPECT_NEAR(I.mass, m->body_mass[b], 1e-12 * std::max(1.0, m->body_mass[b])) << name;
      if (m->body_mass[b] == 0) continue;
      const Eigen::Matrix3d R = data.X_world[i].E.transpose();
      const Eigen::Vector3d com = data.X_world[i].r + R * I.com();
      EXPECT_TRUE(close(com, Eigen::Map<const Eigen::Vector3d>(d->xipos + 3 * b), 1e-9)) << name << " COM";
      const Eigen::Matrix3d Ri = Eigen::Map<const Eigen::Matrix<double, 3, 3, Eigen::RowMajor>>(d->ximat + 9 * b);
      const Eigen::Matrix3d I_mj = Ri * Eigen::Map<const Eigen::Vector3d>(m->body_inertia + 3 * b).asDiagonal() * Ri.transpose();
      EXPECT_TRUE(close(R * I.inertia_about_com() * R.transpose(), I_mj, 1e-9)) << name << " inertia";
    }
  }

  // 1000 passive steps of RK4 at MuJoCo's step from a random state.
  const State s = random_state(model, m, rng);
  Eigen::Map<Eigen::VectorXd>(d->qpos, m->nq) = s.q_mj;
  Eigen::Map<Eigen::VectorXd>(d->qvel, m->nv) = s.v_mj;
  Eigen::Map<Eigen::VectorXd>(d->ctrl, m->nu).setZero();
  m->opt.integrator = mjINT_RK4;
  m->opt.disableflags |= mjDSBL_CONTACT;
  options.integrator = Integrator::kRK4;
  Stepper<double> rk4(model, options);
  Eigen::VectorXd q = s.q, v = s.v;
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(model.nv);
  double worst = 0;
  for (int k = 0; k < 1000; ++k) {
    mj_step(m, d);
    rk4.step(q, v, zero, k * options.dt);
    Eigen::VectorXd q_ours = to_mujoco_q(model, q);
    const Eigen::VectorXd q_mj = Eigen::Map<const Eigen::VectorXd>(d->qpos, m->nq);
    // q and -q are the same rotation.
    for (const Joint<double>& j : model.joints) {
      const int o = j.type == JointType::kFree ? 3 : j.type == JointType::kSpherical ? 0 : -1;
      if (o >= 0 && q_ours.segment<4>(j.idx_q + o).dot(q_mj.segment<4>(j.idx_q + o)) < 0)
        q_ours.segment<4>(j.idx_q + o) *= -1;
    }
    worst = std::max(worst, (q_ours - q_mj).cwiseAbs().maxCoeff());
  }
  EXPECT_LT(worst, 1e-6) << "largest difference of a position coordinate over 1000 RK4 steps of " << options.dt << " s";
  std::cout << "[ mjcf ] " << path << ": 1000 RK4 steps, largest position difference " << worst << "\n";
}

#endif  // NEURALSIM_HAVE_MUJOCO

class MjcfOracle : public testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    NEURALSIM_SKIP_WITHOUT_ORACLE(kHaveMujoco, "MuJoCo (libmujoco-dev) was not found when the tests were configured");
  }
};

#ifdef NEURALSIM_HAVE_MUJOCO
TEST_F(MjcfOracle, JointKindsArmatureDampingSprings) { check_against_mujoco(fixture("joints.xml")); }
TEST_F(MjcfOracle, OrientationForms) { check_against_mujoco(fixture("orientations.xml")); }
TEST_F(MjcfOracle, FreeFloatingBaseInertiaFromGeoms) { check_against_mujoco(fixture("floating.xml")); }
TEST_F(MjcfOracle, DefaultsIncludesChildclassMotors) { check_against_mujoco(fixture("defaults.xml")); }
// The inertia-box fluid model as body drag: MuJoCo's accelerations and 1000
// RK4 steps with the fluid forces in every body axis.
TEST_F(MjcfOracle, InertiaBoxFluidAsBodyDrag) {
  check_against_mujoco(fixture("fluid.xml"));
  // Not vacuous: the fluid changes MuJoCo's accelerations well above the tolerance.
  Oracle o(fixture("fluid.xml"));
  ASSERT_NE(o.m, nullptr);
  for (int k = 0; k < o.m->nv; ++k) o.d->qvel[k] = 1.0;
  mj_forward(o.m, o.d);
  const Eigen::VectorXd with_fluid = Eigen::Map<const Eigen::VectorXd>(o.d->qacc, o.m->nv);
  o.m->opt.density = o.m->opt.viscosity = 0;
  mj_forward(o.m, o.d);
  EXPECT_GT((with_fluid - Eigen::Map<const Eigen::VectorXd>(o.d->qacc, o.m->nv)).cwiseAbs().maxCoeff(), 1.0);
}

TEST_F(MjcfOracle, Laikago) {
  NEURALSIM_SKIP_WITHOUT_SHARED("models/laikago/laikago_floating_mujoco.xml");
  check_against_mujoco(testing::shared_path("models/laikago/laikago_floating_mujoco.xml"));
}

// The swimmer includes DeepMind Control's common/ files (rendering assets
// only), which ../shared does not ship: minimal ones are written beside a copy.
TEST_F(MjcfOracle, Swimmer) {
  NEURALSIM_SKIP_WITHOUT_SHARED("models/swimmer05/model.xml");
  const std::string model = write("model.xml", testing::read_text(testing::shared_path("models/swimmer05/model.xml")));
  write("common/visual.xml", "<mujoco><visual><headlight ambient=\".4 .4 .4\"/></visual></mujoco>");
  write("common/skybox.xml",
        "<mujoco><asset><texture name=\"skybox\" type=\"skybox\" builtin=\"gradient\" rgb1=\".4 .6 .8\" rgb2=\"0 0 0\" "
        "width=\"64\" height=\"64\"/></asset></mujoco>");
  write("common/materials.xml",
        "<mujoco><asset><material name=\"self\" rgba=\".7 .5 .3 1\"/><material name=\"effector\" rgba=\".7 .4 .2 1\"/>"
        "<material name=\"eye\" rgba=\"0 .2 1 1\"/><material name=\"grid\" rgba=\".1 .2 .3 1\"/>"
        "<material name=\"target\" rgba=\".6 .3 .3 1\"/></asset></mujoco>");
  check_against_mujoco(model);
  // Sites and sensors are listed in one warning, each with its line.
  std::vector<std::string> warnings;
  load_mjcf_model(model, {}, &warnings);
  int listing = 0;
  for (const std::string& w : warnings)
    if (w.find("no counterpart here") != std::string::npos) {
      ++listing;
      testing::expect_contains(w, {"model.xml:", "<velocimeter name=\"head_vel\">", "<framepos name=\"nose_pos\">"});
      EXPECT_EQ(w.find("<site"), std::string::npos) << w;  // a site on a body is a frame
    }
  EXPECT_EQ(listing, 1);
  // ... and refused under strict, naming the first one.
  MjcfOptions strict;
  strict.strict = true;
  testing::expect_contains(testing::thrown_message([&] { load_mjcf_model(model, strict); }),
                           {"model.xml:", "refused (strict"});
}
#endif

// ---- the mapping, checked without the oracle ----

TEST(MjcfModel, FrameConventionsAndRefFoldedIntoOrigin) {
  // A hinge with ref = 90° about z at pos (0.1, 0, 0): at q = qpos = 90° the
  // body is in the pose the file writes, so a point at body x = 1 sits at
  // (1, 0, 0) + body pos.
  const MjcfModel m = parse_mjcf_model(R"(<mujoco><worldbody><body name="b" pos="0 0 1">
      <joint name="h" axis="0 0 1" pos="0.1 0 0" ref="90"/><inertial pos="1 0 0" mass="1" diaginertia="1 1 1"/>
      </body></worldbody></mujoco>)", "inline.xml");
  ASSERT_EQ(m.model.nq, 1);
  Data<double> data(m.model);
  Eigen::VectorXd q(1);
  q << kPi() / 2;
  forward_kinematics(m.model, data, q);
  const Eigen::Vector3d com = data.X_world[0].r + data.X_world[0].E.transpose() * m.model.bodies[0].inertia.com();
  EXPECT_TRUE(close(com, Eigen::Vector3d(1, 0, 1), 1e-12));
  // At q = 0 the body has turned by -90° about the axis through (0.1, 0, 1).
  q << 0;
  forward_kinematics(m.model, data, q);
  const Eigen::Vector3d com0 = data.X_world[0].r + data.X_world[0].E.transpose() * m.model.bodies[0].inertia.com();
  EXPECT_TRUE(close(com0, Eigen::Vector3d(0.1, -0.9, 1), 1e-12));
}

TEST(MjcfModel, OptionsBecomeSimDefaults) {
  const MjcfModel m = parse_mjcf_model(R"(<mujoco><option timestep="0.004" gravity="0 0 -3" integrator="RK4">
      <flag contact="disable"/></option><worldbody/></mujoco>)", "inline.xml");
  EXPECT_EQ(m.sim.timestep, 0.004);
  EXPECT_EQ(m.sim.integrator, "RK4");
  EXPECT_TRUE(m.sim.contact_disabled);
  EXPECT_EQ(m.model.gravity, Eigen::Vector3d(0, 0, -3));
  const MjcfModel off = parse_mjcf_model(R"(<mujoco><option><flag gravity="disable"/></option><worldbody/></mujoco>)", "x.xml");
  EXPECT_EQ(off.model.gravity, Eigen::Vector3d::Zero());
}

TEST(MjcfModel, ContactShapes) {
  const MjcfModel m = parse_mjcf_model(R"(<mujoco><worldbody><geom name="floor" type="plane" size="1 1 .1"/>
      <body name="b"><freejoint/><geom name="s" size="0.1"/><geom name="c" type="capsule" fromto="0 0 0 0 0 1" size="0.05"/>
      <geom name="bx" type="box" size="1 2 3" contype="0" conaffinity="0"/></body></worldbody></mujoco>)", "inline.xml");
  ASSERT_EQ(m.model.geometries.size(), 4u);
  EXPECT_EQ(m.model.geometries[0].type, Geometry::Type::kPlane);
  EXPECT_EQ(m.model.geometries[0].body, -1);
  EXPECT_EQ(m.model.geometries[1].type, Geometry::Type::kSphere);
  EXPECT_EQ(m.model.geometries[1].size[0], 0.1);
  EXPECT_EQ(m.model.geometries[2].type, Geometry::Type::kCapsule);
  EXPECT_NEAR(m.model.geometries[2].size[1], 0.5, 1e-15);  // half-length
  EXPECT_TRUE(close(m.model.geometries[2].placement.translation(), Eigen::Vector3d(0, 0, 0.5), 1e-15));
  EXPECT_FALSE(m.model.geometries[3].collision);
}

// ---- bad input ----

std::string error_of(const std::string& xml, const MjcfOptions& options = {}) {
  return testing::thrown_message([&] { parse_mjcf_model(xml, "bad.xml", options); });
}

TEST(MjcfModel, MalformedXmlNamesTheLine) {
  testing::expect_contains(error_of("<mujoco>\n<worldbody>\n<body>\n</worldbody>\n</mujoco>"), {"bad.xml:", "malformed XML"});
  const std::string e = error_of("<mujoco>\n<worldbody>\n<body name=\"a\">\n<joint type=\"hinge\" type=\"x\"/></body></worldbody></mujoco>");
  testing::expect_contains(e, {"bad.xml:4"});
}

TEST(MjcfModel, UnknownJointTypeNamesElementLineAndChoices) {
  testing::expect_contains(error_of("<mujoco>\n<worldbody>\n<body>\n<joint name=\"j\" type=\"planar\"/>\n</body></worldbody></mujoco>"),
                           {"bad.xml:4: <joint name=\"j\">", "type", "expected one of hinge, slide, ball, free", "got 'planar'"});
}

TEST(MjcfModel, ShellInertiaRefused) {
  testing::expect_contains(error_of("<mujoco><worldbody><body><joint/>\n<geom type=\"box\" size=\"1 1 1\" shellinertia=\"true\"/>"
                                    "</body></worldbody></mujoco>"),
                           {"bad.xml:2: <geom>", "shellinertia"});
}

TEST(MjcfModel, TendonsAndEqualitiesRefused) {
  testing::expect_contains(error_of("<mujoco><worldbody/>\n<tendon><fixed name=\"t\"/></tendon></mujoco>"),
                           {"bad.xml:2: <tendon>", "would change the dynamics"});
  testing::expect_contains(error_of("<mujoco><worldbody/>\n<equality><weld body1=\"a\"/></equality></mujoco>"),
                           {"bad.xml:2: <equality>"});
  testing::expect_contains(error_of("<mujoco><worldbody><body><joint name=\"j\"/><geom size=\"1\"/></body></worldbody>\n"
                                    "<actuator><position name=\"p\" joint=\"j\"/></actuator></mujoco>"),
                           {"bad.xml:2: <position name=\"p\">", "only <motor>"});
}

// What the inertia-box fluid model maps to, and what it cannot.
TEST(MjcfModel, FluidMapsToNamedBodyDragOrIsRefused) {
  // A uniform box 0.2 x 0.1 x 0.04 m of 2 kg: the equivalent box is itself.
  const MjcfModel m = parse_mjcf_model(R"(<mujoco><option density="1000" viscosity="0.001"/><worldbody>
      <body name="b"><joint type="slide"/><geom type="box" size="0.1 0.05 0.02" mass="2"/></body></worldbody></mujoco>)",
                                       "inline.xml");
  const BodyDrag<double>& drag = m.model.bodies[static_cast<size_t>(m.model.body_index("b"))].drag;
  ASSERT_TRUE(drag.enabled);
  const double pi = kPi(), d = (0.2 + 0.1 + 0.04) / 3;
  EXPECT_NEAR(drag.linear[0], 3 * pi * d * 0.001, 1e-15);
  EXPECT_NEAR(drag.linear[5], pi * d * d * d * 0.001, 1e-15);
  EXPECT_NEAR(drag.quadratic[0], 0.5 * 1000 * 0.1 * 0.04, 1e-12);  // ½ρ × the face across x
  EXPECT_NEAR(drag.quadratic[2], 0.5 * 1000 * 0.2 * 0.1, 1e-12);
  EXPECT_NEAR(drag.quadratic[3], 1000 * 0.2 * (std::pow(0.1, 4) + std::pow(0.04, 4)) / 64, 1e-15);
  // Refused: a moving medium, the ellipsoid model, a body whose principal axes are not its frame's, a negative density.
  testing::expect_contains(error_of("<mujoco>\n<option density=\"1.2\" wind=\"1 0 0\"/><worldbody/></mujoco>"),
                           {"bad.xml:2: <option>", "wind", "expected 0 0 0"});
  testing::expect_contains(error_of("<mujoco><option density=\"1.2\"/><worldbody><body><joint/>\n"
                                    "<geom type=\"box\" size=\"1 2 3\" fluidshape=\"ellipsoid\"/></body></worldbody></mujoco>"),
                           {"bad.xml:2: <geom>", "fluidshape=\"ellipsoid\"", "no counterpart"});
  testing::expect_contains(error_of("<mujoco><option viscosity=\"0.1\"/><worldbody>\n<body name=\"tilted\"><joint/>"
                                    "<geom type=\"box\" size=\"1 2 3\" euler=\"0 0 30\"/></body></worldbody></mujoco>"),
                           {"bad.xml:2: <body name=\"tilted\">", "principal axes", "off-diagonal"});
  testing::expect_contains(error_of("<mujoco>\n<option density=\"-1\"/><worldbody/></mujoco>"),
                           {"bad.xml:2: <option>", "density", ">= 0", "got -1"});
  // Without a fluid, fluidshape changes nothing and is accepted.
  EXPECT_NO_THROW(parse_mjcf_model(R"(<mujoco><worldbody><body><joint/>
      <geom type="box" size="1 2 3" fluidshape="ellipsoid"/></body></worldbody></mujoco>)", "ok.xml"));
}

TEST(MjcfModel, StrictRefusesWhatTheWarningLists) {
  // A site on the world has no counterpart (one on a body is a frame).
  const std::string xml = "<mujoco><worldbody><body><joint/><geom size=\"1\"/></body>\n<site name=\"s\"/></worldbody></mujoco>";
  std::vector<std::string> warnings;
  EXPECT_NO_THROW(parse_mjcf_model(xml, "w.xml", {}, &warnings));
  ASSERT_EQ(warnings.size(), 1u);
  testing::expect_contains(warnings[0], {"w.xml:2: <site name=\"s\">"});
  MjcfOptions strict;
  strict.strict = true;
  testing::expect_contains(error_of(xml, strict), {"bad.xml:2: <site name=\"s\">", "strict"});
}

TEST(MjcfModel, RangeWithoutLimitedRefusedAsMujocoDoes) {
  testing::expect_contains(error_of("<mujoco><worldbody><body><joint name=\"j\" range=\"-1 1\"/><geom size=\"1\"/></body>"
                                    "</worldbody></mujoco>"),
                           {"<joint name=\"j\">", "range", "limited"});
  const MjcfModel m = parse_mjcf_model("<mujoco><compiler autolimits=\"true\"/><worldbody><body><joint name=\"j\" "
                                       "range=\"-90 90\"/><geom size=\"1\"/></body></worldbody></mujoco>", "ok.xml");
  EXPECT_NEAR(m.model.joints[0].upper, kPi() / 2, 1e-15);
}

TEST(MjcfModel, MissingIncludeNamesTheIncludingLine) {
  testing::expect_contains(error_of("<mujoco>\n<include file=\"nowhere.xml\"/><worldbody/></mujoco>"),
                           {"bad.xml:2: <include>", "nowhere.xml", "does not exist"});
}

// ---- in a config ----

TEST(MjcfConfig, OptionsAreTheSimDefaultsAConfigOverrides) {
  const std::string model = "model: {mjcf: " + testing::source_path("configs/models/double_pendulum.xml") + "}\n";
  const Experiment from_file = load_experiment(Config::parse(model + "sim: {duration: 1}\n", "c.yaml"));
  EXPECT_EQ(from_file.step.dt, 0.01);  // <option timestep="0.01" integrator="RK4">
  EXPECT_EQ(from_file.step.integrator, Integrator::kRK4);
  EXPECT_EQ(from_file.model.nv, 2);
  const Experiment overridden =
      load_experiment(Config::parse(model + "sim: {dt: 0.001, integrator: semi_implicit_euler}\n", "c.yaml"));
  EXPECT_EQ(overridden.step.dt, 0.001);
  EXPECT_EQ(overridden.step.integrator, Integrator::kSemiImplicitEuler);
}

TEST(MjcfConfig, StrictKeyAndErrorsNameTheMjcfLine) {
  const std::string dir = testing::fresh_dir("mjcf_config_strict");
  testing::write_file(dir + "/m.xml", "<mujoco>\n<worldbody><body name=\"b\"><joint/><geom size=\"1\"/></body>\n"
                                      "<site name=\"s\"/></worldbody></mujoco>");
  const std::string model = "model: {mjcf: " + dir + "/m.xml";
  Experiment e = load_experiment(Config::parse(model + "}\nsim: {}\n", "c.yaml"));
  ASSERT_FALSE(e.warnings.empty());
  testing::expect_contains(e.warnings[0], {"m.xml:3: <site name=\"s\">"});
  testing::expect_contains(testing::thrown_message([&] {
                             load_experiment(Config::parse(model + ", strict: true}\nsim: {}\n", "c.yaml"));
                           }),
                           {"m.xml:3: <site name=\"s\">", "strict"});
  testing::expect_contains(testing::thrown_message([&] {
                             load_experiment(Config::parse(model + ", stricct: true}\nsim: {}\n", "c.yaml"));
                           }),
                           {"c.yaml", "stricct"});
}

}  // namespace mjcf_test
}  // namespace neuralsim
