// URDF loading: the shipped robots load with the masses, joints and shapes
// their files state (read here independently of the loader, with regexes over
// the file text), merging fixed joints does not change the dynamics, and
// ABA/CRBA/RNEA agree on every URDF model.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <Eigen/Dense>

#include "neuralsim/dynamics/aba.hpp"
#include "neuralsim/dynamics/crba.hpp"
#include "neuralsim/dynamics/rnea.hpp"
#include "neuralsim/core/errors.hpp"
#include "neuralsim/io/urdf_model.hpp"
#include "support/algorithms_agree.hpp"
#include "support/test_models.hpp"
#include "support/files.hpp"

namespace neuralsim {
namespace {

std::string model_path(const std::string& rel) { return testing::shared_path("models/" + rel); }

using testing::read_text;

// Sum of every <mass value="..."/> in the file.
double file_mass_sum(const std::string& text) {
  const std::regex re(R"re(<mass\s+value\s*=\s*"([^"]+)")re");
  double sum = 0;
  for (std::sregex_iterator it(text.begin(), text.end(), re), end; it != end; ++it) sum += std::stod((*it)[1]);
  return sum;
}

// Number of joints whose type is not "fixed" (all are 1-DoF in these files).
int file_moving_joints(const std::string& text) {
  const std::regex re(R"re(<joint\s+name="[^"]*"\s+type="([a-z]+)")re");
  int n = 0;
  for (std::sregex_iterator it(text.begin(), text.end(), re), end; it != end; ++it) {
    const std::string type = (*it)[1];
    EXPECT_TRUE(type == "fixed" || type == "revolute" || type == "continuous" || type == "prismatic") << type;
    n += type != "fixed";
  }
  return n;
}

// The text of <joint name="name" ...> ... </joint>.
std::string file_joint_block(const std::string& text, const std::string& name) {
  const size_t begin = text.find("<joint name=\"" + name + "\"");
  const size_t end = text.find("</joint>", begin);
  EXPECT_NE(begin, std::string::npos) << name;
  return text.substr(begin, end - begin);
}

Eigen::Vector3d file_attr_vec3(const std::string& block, const std::string& element, const std::string& attr) {
  const std::regex re("<" + element + "[^>]*\\s" + attr + "=\"([^\"]+)\"");
  std::smatch m;
  EXPECT_TRUE(std::regex_search(block, m, re)) << element << " " << attr;
  std::istringstream in(m[1].str());
  Eigen::Vector3d v;
  in >> v[0] >> v[1] >> v[2];
  return v;
}

int count_occurrences(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

using testing::expect_algorithms_agree;

TEST(UrdfModel, PandaMassJointsAndOrigins) {
  NEURALSIM_SKIP_WITHOUT_SHARED("models");
  const std::string path = model_path("franka_panda/panda.urdf");
  const std::string text = read_text(path);
  const Model<double> m = load_urdf_model(path);
  EXPECT_EQ(m.name, "panda");
  EXPECT_NEAR(m.total_mass(), file_mass_sum(text), 1e-12);
  EXPECT_NEAR(m.total_mass(), 17.96, 1e-12);  // 2.9 + 2.7 + 2.73 + 2.04 + 2.08 + 3 + 1.3 + .2 + .81 + 2·0.1
  // 7 revolute arm joints + 2 prismatic fingers.
  EXPECT_EQ(m.nv, file_moving_joints(text));
  EXPECT_EQ(m.nv, 9);
  EXPECT_EQ(m.nq, 9);
  // link0..7 and the fingers; link8, hand and grasptarget are merged frames.
  EXPECT_EQ(m.num_bodies(), 10);
  EXPECT_EQ(m.joints[0].type, JointType::kFixed);
  for (const char* f : {"panda_link8", "panda_hand", "panda_grasptarget"}) EXPECT_GE(m.frame_index(f), 0) << f;

  const int j4 = m.joint_index("panda_joint4");
  ASSERT_GE(j4, 0);
  const std::string block = file_joint_block(text, "panda_joint4");
  const Eigen::Vector3d xyz = file_attr_vec3(block, "origin", "xyz"), rpy = file_attr_vec3(block, "origin", "rpy");
  EXPECT_EQ(m.joints[j4].type, JointType::kRevolute);
  EXPECT_LT((m.joints[j4].axis - file_attr_vec3(block, "axis", "xyz")).norm(), 1e-15);
  EXPECT_LT((m.joints[j4].origin.r - xyz).norm(), 1e-15);
  EXPECT_LT((m.joints[j4].origin.E - rpy_rotation<double>(rpy[0], rpy[1], rpy[2]).transpose()).norm(), 1e-12);
  EXPECT_EQ(m.joints[j4].parent, m.body_index("panda_link3"));
  EXPECT_DOUBLE_EQ(m.joints[j4].lower, -3.1416);  // <limit effort="87" lower="-3.1416" upper="0.0" ...>
  EXPECT_DOUBLE_EQ(m.joints[j4].upper, 0.0);
  EXPECT_DOUBLE_EQ(m.joints[j4].effort, 87);
}

// The fingers hang below link8 (z 0.107) and the hand (yaw -π/4) at z 0.0584,
// so merging composes both fixed origins into the finger joint's origin.
TEST(UrdfModel, PandaMergedOriginsCompose) {
  NEURALSIM_SKIP_WITHOUT_SHARED("models");
  const Model<double> m = load_urdf_model(model_path("franka_panda/panda.urdf"));
  const int finger = m.joint_index("panda_finger_joint1");
  ASSERT_GE(finger, 0);
  EXPECT_EQ(m.joints[finger].parent, m.body_index("panda_link7"));
  EXPECT_LT((m.joints[finger].origin.r - Eigen::Vector3d(0, 0, 0.107 + 0.0584)).norm(), 1e-12);
  const Eigen::Matrix3d hand_yaw = rpy_rotation<double>(0, 0, -0.785398163397);
  EXPECT_LT((m.joints[finger].origin.E - hand_yaw.transpose()).norm(), 1e-12);
  const Frame<double>& tip = m.frames[m.frame_index("panda_grasptarget")];
  EXPECT_EQ(tip.body, m.body_index("panda_link7"));
  EXPECT_LT((tip.placement.r - Eigen::Vector3d(0, 0, 0.107 + 0.105)).norm(), 1e-12);
}

TEST(UrdfModel, LaikagoFloatingBase) {
  NEURALSIM_SKIP_WITHOUT_SHARED("models");
  const std::string path = model_path("laikago/laikago_toes_zup.urdf");
  const std::string text = read_text(path);
  UrdfOptions opt;
  opt.floating_base = true;
  std::vector<std::string> warning_list;
  const Model<double> m = load_urdf_model(path, opt, &warning_list);
  EXPECT_EQ(m.nq, 7 + 12);
  EXPECT_EQ(m.nv, 6 + 12);
  EXPECT_EQ(m.nv - 6, file_moving_joints(text));
  EXPECT_EQ(m.joints[0].type, JointType::kFree);
  EXPECT_EQ(m.joints[0].name, "floating_base");
  EXPECT_EQ(m.bodies[0].name, "chassis");
  EXPECT_NEAR(m.total_mass(), file_mass_sum(text), 1e-12);
  EXPECT_NEAR(m.total_mass(), 25.567, 1e-12);
  EXPECT_EQ(m.num_bodies(), 13);

  int toe_spheres = 0;
  for (const char* leg : {"FR", "FL", "RR", "RL"}) {
    const int f = m.frame_index(std::string("toe") + leg);
    ASSERT_GE(f, 0) << leg;
    const int lower_leg = m.body_index(std::string(leg) + "_lower_leg");
    EXPECT_EQ(m.frames[f].body, lower_leg);
    EXPECT_LT((m.frames[f].placement.r - Eigen::Vector3d(0, -0.25, -0.022)).norm(), 1e-15);
    for (const Geometry& g : m.geometries) {
      if (g.body != lower_leg || !g.collision || g.type != Geometry::Type::kSphere) continue;
      EXPECT_DOUBLE_EQ(g.size[0], 0.03);
      EXPECT_LT((g.placement.translation() - Eigen::Vector3d(0, -0.25, -0.022)).norm(), 1e-15);
      ++toe_spheres;
    }
  }
  EXPECT_EQ(toe_spheres, 4);

  // Meshes are absent from shared/: kept as entries, warned about once each.
  int meshes = 0;
  for (const Geometry& g : m.geometries) meshes += g.type == Geometry::Type::kMesh;
  EXPECT_EQ(meshes, 26);  // chassis: 2; each of 12 leg links: 1 visual + 1 collision
  std::string warnings;
  for (const std::string& w : warning_list) warnings += w + "\n";
  EXPECT_EQ(count_occurrences(warnings, "mesh file 'lower_leg3.obj'"), 1) << warnings;  // used by all 4 legs
  EXPECT_EQ(count_occurrences(warnings, "mesh file 'chassis_zup.obj'"), 1) << warnings;
  EXPECT_NE(warnings.find("(looked for '"), std::string::npos) << warnings;
  EXPECT_NE(warnings.find("') does not exist; skipped"), std::string::npos) << warnings;
}

TEST(UrdfModel, LaikagoFixedBase) {
  NEURALSIM_SKIP_WITHOUT_SHARED("models");
  const Model<double> m = load_urdf_model(model_path("laikago/laikago_toes_zup.urdf"));
  EXPECT_EQ(m.joints[0].type, JointType::kFixed);
  EXPECT_EQ(m.nq, 12);
  EXPECT_EQ(m.nv, 12);
}

// Merging moves inertia between bodies but must not change the physics.
TEST(UrdfModel, LaikagoMergingKeepsDynamics) {
  NEURALSIM_SKIP_WITHOUT_SHARED("models");
  const std::string path = model_path("laikago/laikago_toes_zup.urdf");
  UrdfOptions opt;
  opt.floating_base = true;
  const Model<double> merged = load_urdf_model(path, opt);
  opt.merge_fixed_joints = false;
  const Model<double> full = load_urdf_model(path, opt);
  EXPECT_EQ(full.num_bodies(), 17);
  EXPECT_TRUE(full.frames.empty());
  ASSERT_EQ(full.nq, merged.nq);
  ASSERT_EQ(full.nv, merged.nv);
  EXPECT_EQ(full.velocity_names(), merged.velocity_names());
  EXPECT_NEAR(full.total_mass(), merged.total_mass(), 1e-12);

  std::mt19937 rng(3);
  Data<double> d_merged(merged), d_full(full);
  Eigen::VectorXd q, qd;
  for (int t = 0; t < 5; ++t) {
    testing::random_state(merged, rng, q, qd);
    const Eigen::VectorXd tau = Eigen::VectorXd::Random(merged.nv);
    aba(merged, d_merged, q, qd, tau);
    aba(full, d_full, q, qd, tau);
    EXPECT_LT((d_merged.qdd - d_full.qdd).norm() / (1.0 + d_full.qdd.norm()), 1e-9);
  }
}

TEST(UrdfModel, KeepFixedLinks) {
  NEURALSIM_SKIP_WITHOUT_SHARED("models");
  UrdfOptions opt;
  opt.keep_fixed_links = {"toeFL"};
  const Model<double> m = load_urdf_model(model_path("laikago/laikago_toes_zup.urdf"), opt);
  EXPECT_EQ(m.num_bodies(), 14);
  const int toe = m.body_index("toeFL");
  ASSERT_GE(toe, 0);
  EXPECT_EQ(m.joints[toe].type, JointType::kFixed);
  EXPECT_EQ(m.frame_index("toeFL"), -1);
  EXPECT_GE(m.frame_index("toeFR"), 0);
}

TEST(UrdfModel, SwimmerWithWorldRootAndCapsules) {
  NEURALSIM_SKIP_WITHOUT_SHARED("models");
  const Model<double> m = load_urdf_model(model_path("swimmer05/swimmer05.urdf"));
  EXPECT_EQ(m.name, "swimmer05");
  EXPECT_EQ(m.body_index("world"), -1);
  EXPECT_EQ(m.joints[0].parent, -1);
  EXPECT_EQ(m.bodies[0].name, "xslide");
  EXPECT_EQ(m.nv, 7);  // x and y slides, 5 hinges
  EXPECT_EQ(m.joints[0].type, JointType::kPrismatic);
  EXPECT_DOUBLE_EQ(m.joints[0].lower, -1000);  // <limit lower="-1000" upper="1000"/>, no effort
  EXPECT_DOUBLE_EQ(m.joints[0].effort, 1e30);
  int capsules = 0;
  for (const Geometry& g : m.geometries) {
    if (g.type != Geometry::Type::kCapsule) continue;
    EXPECT_FALSE(g.collision);
    EXPECT_DOUBLE_EQ(g.size[0], 0.01);
    EXPECT_DOUBLE_EQ(g.size[1], 0.05);
    ++capsules;
  }
  EXPECT_EQ(capsules, 5);
}

TEST(UrdfModel, CartpoleAndPendulum) {
  NEURALSIM_SKIP_WITHOUT_SHARED("models");
  const Model<double> cart = load_urdf_model(model_path("cartpole.urdf"));
  EXPECT_EQ(cart.bodies[0].name, "slideBar");  // massless root, fixed to the world
  EXPECT_EQ(cart.joints[0].type, JointType::kFixed);
  EXPECT_EQ(cart.nv, 2);
  EXPECT_NEAR(cart.total_mass(), 1.1, 1e-12);
  const int slider = cart.joint_index("slider_to_cart");
  EXPECT_DOUBLE_EQ(cart.joints[slider].upper, 15);

  const std::string path = model_path("pendulum5.urdf");
  const Model<double> pend = load_urdf_model(path);
  EXPECT_EQ(pend.num_bodies(), 5);
  EXPECT_EQ(pend.nv, 5);
  EXPECT_EQ(pend.joints[0].parent, -1);
  EXPECT_NEAR(pend.total_mass(), file_mass_sum(read_text(path)), 1e-12);
  EXPECT_DOUBLE_EQ(pend.joints[0].dynamics.damping, 1.0);  // <dynamics damping="1.0" friction="1.0"/>
  EXPECT_DOUBLE_EQ(pend.joints[0].dynamics.coulomb_friction, 1.0);
  EXPECT_LE(pend.joints[0].lower, -1e29);  // continuous: unbounded
}

TEST(UrdfModel, AlgorithmsAgreeOnEveryUrdf) {
  NEURALSIM_SKIP_WITHOUT_SHARED("models");
  UrdfOptions floating;
  floating.floating_base = true;
  UrdfOptions unmerged;
  unmerged.merge_fixed_joints = false;
  expect_algorithms_agree(load_urdf_model(model_path("franka_panda/panda.urdf")));
  expect_algorithms_agree(load_urdf_model(model_path("franka_panda/panda.urdf"), unmerged));
  expect_algorithms_agree(load_urdf_model(model_path("laikago/laikago_toes_zup.urdf"), floating));
  expect_algorithms_agree(load_urdf_model(model_path("laikago/laikago_toes_zup.urdf")));
  expect_algorithms_agree(load_urdf_model(model_path("swimmer05/swimmer05.urdf")));
  expect_algorithms_agree(load_urdf_model(model_path("cartpole.urdf")));
  expect_algorithms_agree(load_urdf_model(model_path("pendulum5.urdf")));
  expect_algorithms_agree(load_urdf_model(model_path("sphere8cube.urdf"), floating));
}

// <inertial><origin rpy> rotates the tensor: a yaw of 90° swaps ixx and iyy.
TEST(UrdfModel, InertialRotation) {
  const std::string xml = R"(<robot name="r"><link name="base">
      <inertial><origin xyz="0.1 0 0" rpy="0 0 1.5707963267948966"/><mass value="2"/>
      <inertia ixx="1" ixy="0" ixz="0" iyy="2" iyz="0" izz="3"/></inertial></link></robot>)";
  const Model<double> m = build_urdf_model(xml, "inline.urdf");
  EXPECT_NEAR(m.bodies[0].inertia.mass, 2.0, 1e-15);
  EXPECT_LT((m.bodies[0].inertia.com() - Eigen::Vector3d(0.1, 0, 0)).norm(), 1e-15);
  EXPECT_LT((m.bodies[0].inertia.inertia_about_com() - Eigen::Vector3d(2, 1, 3).asDiagonal().toDenseMatrix()).norm(),
            1e-12);
}

void expect_model_error_naming(const std::string& xml, const std::string& source, const std::string& part) {
  try {
    build_urdf_model(xml, source);
    ADD_FAILURE() << "no ModelError for " << xml;
  } catch (const ModelError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind(source, 0), 0u) << msg;
    EXPECT_NE(msg.find(part), std::string::npos) << msg;
  }
}

TEST(UrdfModel, MalformedInputNamesTheSource) {
  expect_model_error_naming("<robot name='x'><link name='a'></robot>", "broken.urdf", "XML");
  expect_model_error_naming("<robot name='x'><link name='a'/><joint name='j' type='revolute'>"
                            "<parent link='a'/><child link='missing'/><axis xyz='0 0 1'/>"
                            "<limit effort='1' velocity='1' lower='0' upper='1'/></joint></robot>",
                            "dangling.urdf", "invalid URDF");
  expect_model_error_naming("<robot name='x'><link name='a'/><link name='b'/><joint name='p' type='planar'>"
                            "<parent link='a'/><child link='b'/></joint></robot>",
                            "planar.urdf", "planar");
  expect_model_error_naming("<model/>", "notrobot.urdf", "<robot>");
  EXPECT_THROW(load_urdf_model("/nonexistent/robot.urdf"), ModelError);
}

// Joints as {name, parent, child}, each link they name with a unit inertial.
std::string chain_urdf(const std::vector<std::array<const char*, 3>>& joints) {
  std::set<std::string> links;
  for (const auto& j : joints) links.insert({j[1], j[2]});
  links.erase("world");
  std::string x = "<robot name='r'><link name='world'/>";
  for (const std::string& l : links)
    x += "<link name='" + l +
         "'><inertial><mass value='1'/><inertia ixx='1' iyy='1' izz='1' ixy='0' ixz='0' iyz='0'/></inertial></link>";
  for (const auto& j : joints)
    x += std::string("<joint name='") + j[0] + "' type='continuous'><parent link='" + j[1] + "'/><child link='" + j[2] +
         "'/><axis xyz='0 0 1'/></joint>";
  return x + "</robot>";
}

// urdfdom neither detects a cycle nor a second parent (the traversal then
// visited a link twice: "duplicate body name"): the loader names them.
TEST(UrdfModel, JointsThatDoNotFormATreeAreNamed) {
  expect_model_error_naming(chain_urdf({{"j0", "world", "a"}, {"j1", "a", "b"}, {"j2", "b", "a"}}), "cycle.urdf",
                            "joints 'j1' (a -> b), 'j2' (b -> a) form a kinematic cycle through links a, b");
  // Detached from the root: urdfdom would have dropped c and d silently.
  expect_model_error_naming(chain_urdf({{"j0", "world", "a"}, {"j1", "c", "d"}, {"j2", "d", "c"}}), "island.urdf",
                            "'j1' (c -> d), 'j2' (d -> c) form a kinematic cycle through links c, d");
  expect_model_error_naming(chain_urdf({{"j0", "world", "a"}, {"j1", "a", "a"}}), "self.urdf",
                            "joints 'j1' (a -> a) form a kinematic cycle through links a");
  expect_model_error_naming(chain_urdf({{"j0", "world", "a"}, {"j1", "world", "b"}, {"j2", "a", "c"}, {"j3", "b", "c"}}),
                            "closed.urdf", "link 'c' is the child of two joints, 'j2' (a -> c) and 'j3' (b -> c)");
  // A tree whose joints are listed out of order is a tree.
  EXPECT_EQ(build_urdf_model(chain_urdf({{"j2", "b", "c"}, {"j0", "world", "a"}, {"j1", "a", "b"}}), "tree.urdf").nv, 3);
}

// A mesh path that is not a regular file is named in the warning (meshes
// are never opened, so a FIFO cannot block the load).
TEST(UrdfModel, MeshFilesThatAreNotRegularFilesAreNamedInTheWarning) {
  const std::string dir = testing::fresh_dir("urdf_meshes");
  std::filesystem::create_directory(dir + "/mesh_dir.obj");
  ASSERT_EQ(::mkfifo((dir + "/mesh_fifo.obj").c_str(), 0600), 0);
  std::string xml = "<robot name='r'><link name='world'/><link name='a'><inertial><mass value='1'/>"
                    "<inertia ixx='1' iyy='1' izz='1' ixy='0' ixz='0' iyz='0'/></inertial>";
  for (const char* mesh : {"mesh_dir.obj", "mesh_fifo.obj", "mesh_gone.obj"})
    xml += std::string("<visual><geometry><mesh filename='") + mesh + "'/></geometry></visual>";
  xml += "</link><joint name='j' type='continuous'><parent link='world'/><child link='a'/><axis xyz='0 0 1'/></joint>"
         "</robot>";
  testing::write_file(dir + "/robot.urdf", xml);
  std::vector<std::string> warnings;
  load_urdf_model(dir + "/robot.urdf", {}, &warnings);
  std::string all;
  for (const std::string& w : warnings) all += w + "\n";
  EXPECT_NE(all.find("mesh file 'mesh_dir.obj' (looked for '" + dir + "/mesh_dir.obj') is a directory"),
            std::string::npos) << all;
  EXPECT_NE(all.find("'mesh_fifo.obj' (looked for '" + dir + "/mesh_fifo.obj') is a FIFO"), std::string::npos) << all;
  EXPECT_NE(all.find("'mesh_gone.obj' (looked for '" + dir + "/mesh_gone.obj') does not exist"), std::string::npos)
      << all;
  // A FIFO as the URDF file itself is refused without being opened.
  ASSERT_EQ(::mkfifo((dir + "/fifo.urdf").c_str(), 0600), 0);
  EXPECT_EQ(testing::thrown_message([&] { load_urdf_model(dir + "/fifo.urdf"); }),
            dir + "/fifo.urdf: URDF file is a FIFO (named pipe), expected a regular file");
}

}  // namespace
}  // namespace neuralsim
