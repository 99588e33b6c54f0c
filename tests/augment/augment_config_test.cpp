// The `augment:` config section (experiment/augment_config): blueprints
// resolved against the model, weight files validated against them, and
// every bad input a one-line error naming the file and the key (ConfigError,
// with line and column) or the file and the dataset (DataError).
#include <gtest/gtest.h>
#include <H5Cpp.h>

#include <cmath>
#include <regex>
#include <string>
#include <vector>

#include "augment/augment_support.hpp"
#include "neuralsim/experiment/augment_config.hpp"
#include "neuralsim/experiment/experiment.hpp"
#include "support/files.hpp"

namespace neuralsim {
namespace {

const char* kSwimmerModel = R"(model:
  generator: swimmer
  links: 3
  length: 0.1
  mass: 0.1
  damping: 0.001
sim: {dt: 0.002}
)";

const char* kBoxModel = R"(model:
  name: box
  bodies:
    - name: box
      joint: {name: box_free, type: free}
      mass: 1.0
      inertia: [0.004167, 0.004167, 0.006667]
      geometry:
        - {name: box_shape, type: box, size: [0.2, 0.2, 0.1]}
sim: {dt: 0.001}
contact:
  model: hunt_crossley
  parameters: {stiffness: 1.0e6, damping: 3.0e5, friction: 0.5}
)";

class AugmentConfig : public testing::TempDirTest {
 protected:
  // Writes config.yaml = model + `body` and reads the experiment and its blueprints.
  std::vector<AugmentBlueprint> read(const std::string& model, const std::string& body,
                                     const std::string& file = "config.yaml") {
    const std::string p = write(file, model + body);
    const Config cfg = Config::load(p);
    experiment_ = load_experiment(cfg);
    return read_augment_section(cfg, experiment_.model, experiment_.contact ? &*experiment_.contact : nullptr);
  }
  // The message of the error `body` raises, checked to start with
  // "<config path>:<line>:<column>: key '<key>'".
  template <class E>
  std::string error(const std::string& model, const std::string& body, const std::string& key) {
    try {
      read(model, body);
    } catch (const E& e) {
      const std::string msg = e.what();
      const std::string prefix = path("config.yaml") + ":";
      EXPECT_EQ(msg.rfind(prefix, 0), 0u) << msg;
      EXPECT_TRUE(std::regex_search(msg, std::regex("^[^ ]+:[0-9]+:[0-9]+: (unknown )?key '" + std::regex_replace(key, std::regex("\\."), "\\.") + "'")))
          << "expected file:line:column and key '" << key << "' in: " << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line: " << msg;
      return msg;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "unexpected error type: " << e.what();
      return "";
    }
    ADD_FAILURE() << "no error for: " << body;
    return "";
  }

  Experiment experiment_;
};

TEST_F(AugmentConfig, ReadsBlueprintsOfEverySiteFamily) {
  const std::vector<AugmentBlueprint> bps = read(kSwimmerModel, R"(augment:
  - {name: drag, site: {link: segment0, quantity: drag_force, frame: world, drag: {linear: 0.1, normal: 0.4}},
     mode: replace, inputs: [link.segment0.linear_velocity, link.segment0.angle_of_attack], hidden: [16, 16],
     activation: tanh, init: xavier_uniform, output_scale: 0.1}
  - name: damping
    site: joint.joint1.damping
    inputs: [joint.joint1.qd, time]
    hidden: []
    seed: 7
    output_scale: 1.0e-5   # the segments' inertia is ~1e-4 kg·m²
  - name: push
    site: {link: segment2, quantity: force, frame: body}
    mode: residual
    inputs: [link.segment2.linear_velocity.body, link.segment2.orientation, joint.joint2.u]
    hidden: [8]
    activation: relu
    init: he_normal
    output_scale: [1, 2, 3]
    input_mean: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    input_std: [1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 5]
)");
  ASSERT_EQ(bps.size(), 3u);
  const Model<double>& m = experiment_.model;
  EXPECT_EQ(bps[0].name, "drag");
  EXPECT_EQ(bps[0].site.quantity, SiteQuantity::kDragForce);
  EXPECT_EQ(bps[0].site.body, m.body_index("segment0"));
  EXPECT_EQ(bps[0].site.drag.linear, 0.1);
  EXPECT_EQ(bps[0].site.drag.normal, 0.4);
  EXPECT_EQ(bps[0].mode, AugmentMode::kReplace);
  EXPECT_EQ(bps[0].network.describe(), "4 -> 16 tanh -> 16 tanh -> 3 identity");
  EXPECT_EQ(bps[0].network.output_scale(), Eigen::Vector3d::Constant(0.1));
  EXPECT_EQ(bps[1].site.quantity, SiteQuantity::kJointDamping);
  EXPECT_EQ(bps[1].site.joint, m.joint_index("joint1"));
  EXPECT_EQ(bps[1].mode, AugmentMode::kResidual);
  EXPECT_EQ(bps[1].network.describe(), "2 -> 1 identity");
  EXPECT_EQ(bps[1].inputs[1].kind, InputKind::kTime);
  EXPECT_EQ(bps[2].site.frame, AugmentFrame::kBody);
  EXPECT_EQ(bps[2].inputs[0].frame, AugmentFrame::kBody);
  EXPECT_EQ(bps[2].inputs[1].size, 9);
  EXPECT_EQ(bps[2].network.describe(), "13 -> 8 relu -> 3 identity");
  EXPECT_EQ(bps[2].network.input_std()[12], 5.0);
  EXPECT_EQ(bps[2].network.output_scale()[2], 3.0);
  // Seeds: the default is the entry index, so equal shapes differ; the same seed reproduces.
  const std::vector<AugmentBlueprint> again = read(kSwimmerModel, R"(augment:
  - {name: a, site: joint.joint1.torque, inputs: [joint.joint1.qd]}
  - {name: b, site: joint.joint2.torque, inputs: [joint.joint2.qd]}
  - {name: c, site: joint.joint2.torque, inputs: [joint.joint2.qd], seed: 1}
)");
  std::vector<double> wa(again[0].network.num_parameters()), wb(wa.size()), wc(wa.size());
  again[0].network.get_parameters(wa.data());
  again[1].network.get_parameters(wb.data());
  again[2].network.get_parameters(wc.data());
  EXPECT_NE(wa, wb);
  EXPECT_EQ(wb, wc);
  // All of them run.
  Stepper<double> stepper(experiment_.model, experiment_.step);
  auto aug = install_augmentation<double>(bps, experiment_.model, stepper);
  Eigen::VectorXd q = experiment_.model.neutral_configuration(), qd = Eigen::VectorXd::Constant(experiment_.model.nv, 0.1),
                  u = Eigen::VectorXd::Zero(experiment_.model.nv);
  for (int k = 0; k < 10; ++k) stepper.step(q, qd, u, k * 0.002);
  EXPECT_TRUE(q.allFinite() && qd.allFinite());
  EXPECT_EQ(aug->num_networks(), 3);
}

TEST_F(AugmentConfig, ContactSitesNeedForceLevelContact) {
  const std::vector<AugmentBlueprint> bps = read(kBoxModel, R"(augment:
  - name: friction
    site: {contact: box, quantity: friction_force}
    inputs: [contact.sliding_velocity, contact.normal, contact.depth, contact.normal_force, link.box.linear_velocity]
  - {name: mu, site: contact.friction_coefficient, mode: scale, inputs: [contact.sliding_velocity]}
)");
  ASSERT_EQ(bps.size(), 2u);
  EXPECT_EQ(bps[0].site.quantity, SiteQuantity::kContactFrictionForce);
  EXPECT_EQ(bps[0].site.body, 0);
  EXPECT_EQ(bps[0].network.output_dim(), 2);
  EXPECT_EQ(bps[0].network.input_dim(), 3 + 3 + 1 + 1 + 3);
  EXPECT_EQ(bps[1].site.body, -1);
  EXPECT_EQ(bps[1].mode, AugmentMode::kScale);

  const std::string no_contact = std::string(kSwimmerModel);
  std::string msg = error<ConfigError>(no_contact, R"(augment:
  - {name: n, site: contact.normal_force, inputs: [contact.depth]}
)",
                                       "augment.0.site");
  EXPECT_NE(msg.find("contact sites need the experiment's `contact:` section"), std::string::npos) << msg;
  msg = error<ConfigError>(std::regex_replace(kBoxModel, std::regex("hunt_crossley"), "impulse"), R"(augment:
  - {name: n, site: contact.normal_force, inputs: [contact.depth]}
)",
                           "augment.0.site");
  EXPECT_NE(msg.find("force-level contact model"), std::string::npos) << msg;
}

TEST_F(AugmentConfig, BadInputIsAConfigErrorWithFileLineColumnAndKey) {
  struct Case {
    const char* body;
    const char* key;
    std::vector<const char*> contains;
  };
  const std::vector<Case> cases = {
      {"augment:\n  - {name: a, site: joint.nope.torque, inputs: [time]}\n", "augment.0.site",
       {"unknown site 'joint.nope.torque'", "valid sites are joint.<joint>.torque|damping|friction", "joint1",
        "contact.normal_force|friction_force|friction_coefficient"}},
      {"augment:\n  - {name: a, site: link.segment0.lift, inputs: [time]}\n", "augment.0.site",
       {"unknown site 'link.segment0.lift'", "link.<link>.force|torque|drag_force|drag_coefficient"}},
      {"augment:\n  - {name: a, site: {link: segment9, quantity: force}, inputs: [time]}\n", "augment.0.site.link",
       {"unknown link 'segment9'", "segment0"}},
      {"augment:\n  - {name: a, site: {joint: joint1, quantity: stiffness}, inputs: [time]}\n",
       "augment.0.site.quantity", {"unknown joint quantity 'stiffness'", "spring.stiffness"}},
      {"augment:\n  - {name: a, site: {joint: joint1, link: segment0, quantity: torque}, inputs: [time]}\n",
       "augment.0.site", {"exactly one of 'joint', 'link' or 'contact'"}},
      {"augment:\n  - {name: a, site: {joint: joint1, quantity: torque, frame: body}, inputs: [time]}\n",
       "augment.0.site.frame", {"has no frame"}},
      {"augment:\n  - {name: a, site: {link: segment0, quantity: force, frame: left}, inputs: [time]}\n",
       "augment.0.site.frame", {"one of world, body", "left"}},
      {"augment:\n  - {name: a, site: {link: segment0, quantity: force, drag: {linear: 1}}, inputs: [time]}\n",
       "augment.0.site.drag", {"drag_force, drag_coefficient and drag_wrench"}},
      {"augment:\n  - {name: a, site: {link: segment0, quantity: drag_force, drag: {linear: -1}}, inputs: [time]}\n",
       "augment.0.site.drag.linear", {"out of range"}},
      {"augment:\n  - {name: a, site: joint.joint1.torque, inputs: [joint.joint1.qdd]}\n", "augment.0.inputs.0",
       {"unknown input 'joint.joint1.qdd'", "did you mean 'joint.joint1.qd'?", "valid inputs: time, noise.<0..99>, joint.<joint>.q|qd|u",
        "link.<link>.linear_velocity|angular_velocity[.world|.body]", "segment2"}},
      {"augment:\n  - {name: a, site: joint.joint1.torque, inputs: [time, contact.depth]}\n", "augment.0.inputs.1",
       {"unknown input 'contact.depth'", "only at contact sites"}},
      {"augment:\n  - {name: a, site: joint.joint1.torque, inputs: [time, time]}\n", "augment.0.inputs.1",
       {"listed twice"}},
      {"augment:\n  - {name: a, site: joint.joint1.torque, inputs: []}\n", "augment.0.inputs", {"at least one input"}},
      {"augment:\n  - {name: a, site: joint.joint1.torque}\n", "augment.0.inputs", {"missing required key"}},
      {"augment:\n  - {name: a, site: joint.joint1.torque, mode: add, inputs: [time]}\n", "augment.0.mode",
       {"one of residual, scale, replace", "add"}},
      {"augment:\n  - {name: a, site: joint.joint1.torque, activation: swish, inputs: [time]}\n",
       "augment.0.activation", {"one of identity, tanh, relu, elu, softplus, sigmoid, sin", "swish"}},
      {"augment:\n  - {name: a, site: joint.joint1.torque, output_activation: gelu, inputs: [time]}\n",
       "augment.0.output_activation", {"gelu"}},
      {"augment:\n  - {name: a, site: joint.joint1.torque, init: orthogonal, inputs: [time]}\n", "augment.0.init",
       {"xavier_uniform", "orthogonal"}},
      {"augment:\n  - {name: a, site: joint.joint1.torque, hidden: [16, 0], inputs: [time]}\n", "augment.0.hidden.1",
       {"[1, 4096]"}},
      {"augment:\n  - {name: a, site: joint.joint1.torque, output_scale: [1, 2], inputs: [time]}\n",
       "augment.0.output_scale", {"one number (without brackets) or 1 numbers", "got a list of 2"}},
      // A one-element list is not broadcast to a site's 3 outputs (a number is).
      {"augment:\n  - {name: a, site: link.segment0.force, output_scale: [0.1], inputs: [time]}\n",
       "augment.0.output_scale", {"or 3 numbers (one per network output)", "got a list of 1"}},
      {"augment:\n  - {name: a, site: joint.joint1.torque, input_std: [0], inputs: [time]}\n", "augment.0.input_std",
       {"must be > 0"}},
      {"augment:\n  - {name: a, site: link.segment0.force, mode: scale, inputs: [time]}\n", "augment.0.mode",
       {"needs an analytical value"}},
      {"augment:\n  - {name: a, site: {link: segment0, quantity: drag_wrench, drag: {linear: 1}}, mode: scale, "
       "inputs: [time]}\n",
       "augment.0.mode", {"couple of link.drag_wrench has none"}},
      {"augment:\n  - {name: a/b, site: joint.joint1.torque, inputs: [time]}\n", "augment.0.name", {"without '/'"}},
      {"augment:\n  - {name: a, site: joint.joint1.torque, inputs: [time]}\n  - {name: a, site: joint.joint2.torque, "
       "inputs: [time]}\n",
       "augment.1.name", {"declared twice"}},
      {"augment:\n  - {name: a, site: joint.joint1.torque, inputs: [time], hiden: [4]}\n", "augment.0.hiden",
       {"did you mean 'hidden'"}},
      {"augment: {name: a}\n", "augment", {"expected a list"}},
  };
  for (const Case& c : cases) {
    const std::string msg = error<ConfigError>(kSwimmerModel, c.body, c.key);
    for (const char* part : c.contains) EXPECT_NE(msg.find(part), std::string::npos) << "'" << part << "' in: " << msg;
  }
}

// ---------------------------------------------------------------------------
// Weight files.

const char* kTwoNets = R"(augment:
  - {name: drag, site: {link: segment0, quantity: drag_force}, inputs: [link.segment0.linear_velocity, link.segment0.speed],
     hidden: [5, 4], seed: 3}
  - {name: damp, site: joint.joint1.damping, inputs: [joint.joint1.qd], hidden: [3], activation: sigmoid}
)";

TEST_F(AugmentConfig, WeightFilesRoundTripAndTheirOutputScaleIsNotOverridden) {
  std::vector<AugmentBlueprint> bps = read(kSwimmerModel, kTwoNets);
  // "Trained" weights: different from the seeded ones.
  for (AugmentBlueprint& bp : bps) {
    std::vector<double> w(bp.network.num_parameters());
    for (size_t i = 0; i < w.size(); ++i) w[i] = std::sin(1.0 + static_cast<double>(i));
    bp.network.set_parameters(w.data());
    bp.network.set_input_normalization(Eigen::VectorXd::Constant(bp.network.input_dim(), 0.5),
                                       Eigen::VectorXd::Constant(bp.network.input_dim(), 2.0));
  }
  write_augment_weights(path("trained.h5"), bps);
  const std::vector<AugmentBlueprint> loaded = read(kSwimmerModel, R"(augment:
  - {name: drag, site: {link: segment0, quantity: drag_force}, inputs: [link.segment0.linear_velocity, link.segment0.speed],
     hidden: [5, 4], weights: trained.h5}
  - {name: damp, site: joint.joint1.damping, inputs: [joint.joint1.qd], hidden: [3], activation: sigmoid,
     weights: trained.h5, output_scale: 1}
)");
  ASSERT_EQ(loaded.size(), 2u);
  for (size_t k = 0; k < 2; ++k) {
    std::vector<double> a(bps[k].network.num_parameters()), b(a.size());
    bps[k].network.get_parameters(a.data());
    loaded[k].network.get_parameters(b.data());
    EXPECT_EQ(a, b) << bps[k].name;
    EXPECT_EQ(loaded[k].network.input_mean(), bps[k].network.input_mean());
  }
  EXPECT_EQ(loaded[0].network.output_scale(), bps[0].network.output_scale()) << "the file's";
  EXPECT_EQ(loaded[1].network.output_scale(), Eigen::VectorXd::Ones(1)) << "the file's, which the config repeats";
  // A trained model is replayed as trained (#38): another output scale in
  // the config (it used to replace the file's silently) is refused.
  const std::string scale_msg = error<ConfigError>(kSwimmerModel, R"(augment:
  - {name: drag, site: {link: segment0, quantity: drag_force}, inputs: [link.segment0.linear_velocity, link.segment0.speed],
     hidden: [5, 4], weights: trained.h5, output_scale: 0}
)",
                                                   "augment.0.output_scale");
  EXPECT_NE(scale_msg.find("replayed as trained"), std::string::npos) << scale_msg;
  // The file's names of the inputs (x[k] for vectors).
  EXPECT_EQ(network_names(path("trained.h5")), (std::vector<std::string>{"drag", "damp"}));
  EXPECT_EQ(read_network(path("trained.h5"), "drag").input_names,
            (std::vector<std::string>{"link.segment0.linear_velocity[0]", "link.segment0.linear_velocity[1]",
                                      "link.segment0.linear_velocity[2]", "link.segment0.speed"}));
  // Normalization comes from the file: giving it too is refused.
  const std::string msg = error<ConfigError>(kSwimmerModel, R"(augment:
  - {name: damp, site: joint.joint1.damping, inputs: [joint.joint1.qd], hidden: [3], activation: sigmoid,
     weights: trained.h5, input_std: [1]}
)",
                                             "augment.0.input_std");
  EXPECT_NE(msg.find("comes from the weights file"), std::string::npos) << msg;
}

void poke(const std::string& file, const std::string& dataset, hsize_t flat_index, double value) {
  H5::H5File f(file, H5F_ACC_RDWR);
  H5::DataSet ds = f.openDataSet(dataset);
  const hssize_t n = ds.getSpace().getSimpleExtentNpoints();
  std::vector<double> v(static_cast<size_t>(n));
  ds.read(v.data(), H5::PredType::NATIVE_DOUBLE);
  v[flat_index] = value;
  ds.write(v.data(), H5::PredType::NATIVE_DOUBLE);
}

TEST_F(AugmentConfig, BadWeightFilesAreDataErrorsNamingFileAndDataset) {
  const std::vector<AugmentBlueprint> bps = read(kSwimmerModel, kTwoNets);
  const std::string good = path("good.h5");
  write_augment_weights(good, bps);
  auto load = [&](const std::string& file, const std::string& entry) -> std::string {
    try {
      read(kSwimmerModel, "augment:\n  - " + entry + "\n");
    } catch (const DataError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(file + ":", 0), 0u) << e.what();
      return e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not a DataError: " << e.what();
      return "";
    }
    ADD_FAILURE() << "no error for " << entry;
    return "";
  };
  const std::string damp = "{name: damp, site: joint.joint1.damping, inputs: [joint.joint1.qd], activation: sigmoid, ";
  // Different hidden widths / depth / activation / input count / input names.
  std::string msg = load(good, damp + "hidden: [4], weights: good.h5}");
  EXPECT_NE(msg.find(good + ":/networks/damp/layer0/weight: expected shape (4, 1), got (3, 1)"), std::string::npos)
      << msg;
  msg = load(good, damp + "hidden: [3, 3], weights: good.h5}");
  EXPECT_NE(msg.find(good + ":/networks/damp: expected 3 layers"), std::string::npos) << msg;
  msg = load(good, "{name: damp, site: joint.joint1.damping, inputs: [joint.joint1.qd], hidden: [3], weights: good.h5}");
  EXPECT_NE(msg.find(good + ":/networks/damp/layer0: attribute activation: expected tanh, got sigmoid"),
            std::string::npos)
      << msg;
  msg = load(good, "{name: damp, site: joint.joint1.damping, inputs: [joint.joint1.qd, time], hidden: [3], "
                   "activation: sigmoid, weights: good.h5}");
  EXPECT_NE(msg.find(good + ":/networks/damp: expected 2 inputs, got 1"), std::string::npos) << msg;
  msg = load(good, "{name: damp, site: joint.joint1.damping, inputs: [joint.joint2.qd], hidden: [3], "
                   "activation: sigmoid, weights: good.h5}");
  EXPECT_NE(msg.find(good + ":/networks/damp/input_names: expected [joint.joint2.qd], got [joint.joint1.qd]"),
            std::string::npos)
      << msg;
  EXPECT_NO_THROW(read(kSwimmerModel, "augment:\n  - {name: drag, site: {link: segment0, quantity: force}, inputs: "
                                      "[link.segment0.linear_velocity, link.segment0.speed], hidden: [5, 4], "
                                      "weights: good.h5}\n"))
      << "the same shape at another site is accepted";
  msg = load(good, "{name: lift, site: {link: segment0, quantity: force}, inputs: [time], weights: good.h5}");
  EXPECT_NE(msg.find("lift"), std::string::npos) << msg;
  EXPECT_NE(msg.find("drag"), std::string::npos) << "lists the networks of the file: " << msg;
  // NaN weights.
  const std::string nan = path("nan.h5");
  write_augment_weights(nan, bps);
  poke(nan, "/networks/damp/layer1/weight", 2, std::nan(""));
  msg = load(nan, damp + "hidden: [3], weights: nan.h5}");
  EXPECT_NE(msg.find(nan + ":/networks/damp/layer1/weight: expected finite values, got nan"), std::string::npos) << msg;
  // A missing file.
  msg = load(path("missing.h5"), damp + "hidden: [3], weights: missing.h5}");
  EXPECT_FALSE(msg.empty());
}

TEST_F(AugmentConfig, ZeroOutputScaleFromTheConfigLeavesTheRolloutBitIdentical) {
  const std::vector<AugmentBlueprint> bps = read(kSwimmerModel, R"(augment:
  - {name: drag0, site: {link: segment0, quantity: drag_force, frame: body}, inputs: [link.segment0.linear_velocity.body, link.segment0.angle_of_attack], output_scale: 0}
  - {name: drag1, site: {link: segment1, quantity: drag_force}, inputs: [link.segment1.speed], output_scale: 0}
  - {name: tau2, site: joint.joint2.torque, inputs: [joint.joint2.q, joint.joint2.u], output_scale: 0}
)");
  auto run = [&](bool augmented) {
    Stepper<double> stepper(experiment_.model, experiment_.step);
    if (augmented) install_augmentation<double>(bps, experiment_.model, stepper);
    const Model<double>& m = experiment_.model;
    Eigen::VectorXd q = m.neutral_configuration(), qd = Eigen::VectorXd::Constant(m.nv, 0.2), u = Eigen::VectorXd::Zero(m.nv);
    std::vector<double> out;
    for (int k = 0; k < 200; ++k) {
      u[m.nv - 1] = 0.001 * std::sin(0.01 * k);
      stepper.step(q, qd, u, k * 0.002);
      out.insert(out.end(), q.data(), q.data() + q.size());
      out.insert(out.end(), qd.data(), qd.data() + qd.size());
    }
    return out;
  };
  EXPECT_TRUE(testing::bit_identical(run(false), run(true)));
}

// A drag wrench site: the drag law's force and a couple, 6 network outputs,
// framed, written back as it was read.
TEST_F(AugmentConfig, ReadsADragWrenchSite) {
  const std::vector<AugmentBlueprint> bps = read(kSwimmerModel, R"(augment:
  - {name: wrench, site: {link: segment1, quantity: drag_wrench, frame: body, drag: {linear: 0.1, quadratic: 0.3}},
     inputs: [link.segment1.linear_velocity.body, link.segment1.angular_velocity.body], hidden: [4]}
)");
  ASSERT_EQ(bps.size(), 1u);
  EXPECT_EQ(bps[0].site.quantity, SiteQuantity::kDragWrench);
  EXPECT_EQ(bps[0].site.frame, AugmentFrame::kBody);
  EXPECT_EQ(bps[0].site.drag.quadratic, 0.3);
  EXPECT_EQ(bps[0].network.output_dim(), 6);
  EXPECT_EQ(describe_site(bps[0].site, experiment_.model), "link.segment1.drag_wrench (body)");
}

}  // namespace
}  // namespace neuralsim
