// Scenes and rollouts shared by the augmentation tests: a damped double
// pendulum with springs and friction (joint sites), the planar 5-link
// swimmer (link force/torque and drag sites) and a box sliding on the ground
// with Hunt–Crossley contact (contact sites); blueprints built in code; one
// rollout templated on the scalar with optional augmentations.
#pragma once

#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "neuralsim/augment/augmented_dynamics.hpp"
#include "neuralsim/contact/contact_system.hpp"
#include "neuralsim/experiment/experiment.hpp"
#include "neuralsim/io/config.hpp"
#include "neuralsim/io/yaml_model.hpp"
#include "neuralsim/parameters/named_parameter.hpp"
#include "neuralsim/parameters/parameter_set.hpp"
#include "support/test_models.hpp"

namespace neuralsim::testing {

struct Scene {
  std::string name;
  Model<double> model;
  std::optional<ContactSettings> contact;
  StepOptions step;
  Eigen::VectorXd q0, qd0;
  Eigen::VectorXd amplitude, frequency, phase;  // controls u = A sin(2π f t + φ)
  // Analytical drags of the reference model (the law a drag site augments).
  std::vector<std::pair<int, DragLaw>> drags;

  // Control component i at time t.
  double control(int i, double t) const { return amplitude[i] * std::sin(2 * M_PI * frequency[i] * t + phase[i]); }
};

// The scene's controls at the step times, nv × T.
inline Eigen::MatrixXd scene_controls(const Scene& s, int T) {
  Eigen::MatrixXd u(s.model.nv, T);
  for (int k = 0; k < T; ++k)
    for (int i = 0; i < s.model.nv; ++i) u(i, k) = s.control(i, k * s.step.dt);
  return u;
}

// Named parameters at the scene's values (initial.qd.* at zero; inertials
// in log-Cholesky coordinates).
inline ParameterSet scene_parameters(const Model<double>& model, const std::optional<ContactSettings>& contact,
                                     const std::vector<std::string>& names) {
  std::vector<EstimatedParameter> ps;
  for (const std::string& n : names) {
    const auto target = resolve_named_parameter(n, model, contact.has_value());
    if (!target) throw InvalidArgument("test: unknown parameter " + n);
    EstimatedParameter p;
    p.target = *target;
    const Eigen::VectorXd qd0 = Eigen::VectorXd::Zero(model.nv);
    const ContactParameters<double> c = contact ? contact->parameters : ContactParameters<double>();
    p.initial = named_parameter_value(*target, model, &c, &qd0);
    if (p.kind() == ParameterKind::kLogCholesky) p.transformation = Transformation::kLogCholesky;
    ps.push_back(p);
  }
  return ParameterSet(ps);
}

// Richardson-extrapolated central difference of f at 0 (error O(h⁴)).
inline double richardson_central_difference(const std::function<double(double)>& f, double h) {
  const double d1 = (f(h) - f(-h)) / (2 * h);
  const double d2 = (f(h / 2) - f(-h / 2)) / h;
  return (4 * d2 - d1) / 3;
}

// Laikago standing on its four toes (configs/rollout_laikago_standing.yaml)
// `depth` into the ground, a small base velocity, sinusoidal joint torques.
inline Scene laikago_standing_scene(const std::string& contact_model, double depth) {
  const Experiment e = load_experiment(Config::load(source_path("configs/rollout_laikago_standing.yaml"),
                                                    {"contact.model=" + contact_model}));
  Scene s;
  s.name = "laikago";
  s.model = e.model;
  s.contact = e.contact;
  s.step = e.step;
  s.q0 = Eigen::VectorXd::Zero(19);
  s.q0 << 0, 0, 0.356162 - depth, 0, 0, 0, 1, 0, 0.67, -1.25, 0, 0.67, -1.25, 0, 0.67, -1.25, 0, 0.67, -1.25;
  s.qd0 = Eigen::VectorXd::Zero(18);
  s.qd0.head(6) << 0.02, -0.01, 0.0, 0.01, 0.005, -0.01;
  s.amplitude = Eigen::VectorXd::Zero(18);
  s.amplitude.tail(12).setConstant(0.5);
  s.frequency = Eigen::VectorXd::Constant(18, 3.0);
  s.phase = Eigen::VectorXd::LinSpaced(18, 0.0, 3.0);
  return s;
}

// Double pendulum (joint1, joint2 about y), damped, with Coulomb friction,
// springs and a torque offset, driven by sinusoidal torques.
inline Scene pendulum_scene() {
  Scene s;
  s.name = "double_pendulum";
  s.model = load_yaml_model(source_path("configs/models/double_pendulum.yaml"));
  for (Joint<double>& j : s.model.joints) {
    j.dynamics.damping = 0.3;
    j.dynamics.coulomb_friction = 0.2;
    j.dynamics.friction_velocity = 0.1;
    j.dynamics.spring_stiffness = 2.0;
    j.dynamics.spring_rest = 0.1;
    j.dynamics.torque_offset = 0.05;
  }
  s.step.dt = 1e-3;
  s.q0 = Eigen::Vector2d(0.6, -0.4);
  s.qd0 = Eigen::Vector2d(0.3, 0.5);
  s.amplitude = Eigen::Vector2d(2.0, 1.0);
  s.frequency = Eigen::Vector2d(0.7, 1.3);
  s.phase = Eigen::Vector2d(0.0, 1.0);
  return s;
}

// The planar swimmer of configs/models/swimmer5.yaml, its joints driven by a
// travelling wave, its head already moving.
inline Scene swimmer_scene() {
  Scene s;
  s.name = "swimmer";
  s.model = load_yaml_model(source_path("configs/models/swimmer5.yaml"));
  s.step.dt = 2e-3;
  s.q0 = Eigen::VectorXd::Zero(7);
  s.q0 << 0.0, 0.0, 0.3, 0.2, -0.1, 0.15, -0.2;
  s.qd0 = Eigen::VectorXd::Zero(7);
  s.qd0 << 0.2, -0.1, 0.3, 0.5, -0.4, 0.2, 0.1;
  s.amplitude = Eigen::VectorXd::Zero(7);
  s.amplitude.tail(4).setConstant(0.002);
  s.frequency = Eigen::VectorXd::Constant(7, 1.0);
  s.phase = Eigen::VectorXd::Zero(7);
  s.phase.tail(4) << 0.0, 1.2, 2.4, 3.6;
  return s;
}

// A 1 kg box sliding at 1 m/s on the ground (Hunt–Crossley, regularized
// Coulomb friction), as configs/rollout_box_sliding.yaml.
inline Scene box_scene() {
  const Config cfg = Config::parse(R"(
model:
  name: box
  bodies:
    - name: box
      joint: {name: box_free, type: free}
      mass: 1.0
      inertia: [0.004167, 0.004167, 0.006667]
      geometry:
        - {name: box_shape, type: box, size: [0.2, 0.2, 0.1]}
sim: {integrator: semi_implicit_euler, dt: 0.001}
contact:
  model: hunt_crossley
  ground: {height: 0}
  parameters: {stiffness: 1.0e6, damping: 3.0e5, exponent: 1.5, friction: 0.5, friction_velocity: 0.01}
)",
                                   "box.yaml");
  const Experiment e = load_experiment(cfg);
  Scene s;
  s.name = "box";
  s.model = e.model;
  s.contact = e.contact;
  s.step = e.step;
  s.q0 = Eigen::VectorXd::Zero(7);
  s.q0 << 0, 0, 0.049818, 0, 0, 0, 1;
  s.qd0 = Eigen::VectorXd::Zero(6);
  s.qd0 << 0.0, 0.0, 0.3, 1.0, 0.2, 0.0;
  s.amplitude = Eigen::VectorXd::Zero(6);
  s.frequency = Eigen::VectorXd::Zero(6);
  s.phase = Eigen::VectorXd::Zero(6);
  return s;
}

// A blueprint with a freshly initialized network: Xavier weights from
// `seed`, small random biases (so the output is not zero at zero input),
// the given output scale.
inline AugmentBlueprint make_blueprint(const Model<double>& model, const std::string& name, const AugmentSite& site,
                                       AugmentMode mode, const std::vector<std::string>& inputs,
                                       const std::vector<nn::Index>& hidden, double output_scale, std::uint64_t seed,
                                       nn::Activation activation = nn::Activation::kTanh) {
  AugmentBlueprint bp;
  bp.name = name;
  bp.site = site;
  bp.mode = mode;
  const bool contact = is_contact_site(site.quantity);
  for (const std::string& n : inputs) {
    const auto in = find_augment_input(n, model, contact);
    if (!in) throw InvalidArgument(unknown_input_message(n, model, contact));
    bp.inputs.push_back(*in);
  }
  bp.network = nn::Mlp(total_input_size(bp.inputs), hidden, site_output_dim(site, model), activation);
  std::mt19937_64 rng(seed);
  bp.network.initialize(nn::Init::kXavierUniform, rng);
  std::vector<double> w(static_cast<std::size_t>(bp.network.num_parameters()));
  bp.network.get_parameters(w.data());
  for (nn::Index l = 0; l < bp.network.num_layers(); ++l)
    for (nn::Index i = 0; i < bp.network.layer_output_dim(l); ++i)
      w[bp.network.bias_offset(l) + i] = 0.2 * (nn::random::uniform01(rng) - 0.5);
  bp.network.set_parameters(w.data());
  bp.network.set_output_scaling(Eigen::VectorXd::Constant(bp.network.output_dim(), output_scale),
                                Eigen::VectorXd::Zero(bp.network.output_dim()));
  check_blueprint(bp, model);
  return bp;
}

inline AugmentSite joint_site(const Model<double>& m, const std::string& joint, SiteQuantity q) {
  AugmentSite s;
  s.quantity = q;
  s.joint = m.joint_index(joint);
  return s;
}
inline AugmentSite link_site(const Model<double>& m, const std::string& link, SiteQuantity q,
                             AugmentFrame frame = AugmentFrame::kWorld, DragLaw drag = {}) {
  AugmentSite s;
  s.quantity = q;
  s.body = m.body_index(link);
  s.frame = frame;
  s.drag = drag;
  return s;
}
inline AugmentSite contact_site(SiteQuantity q, int body = -1) {
  AugmentSite s;
  s.quantity = q;
  s.body = body;
  return s;
}

// One test case: a scene and the blueprints of one site kind.
// One residual drag network per segment of the swimmer (world-frame drag
// force from the segment's linear velocity and angle of attack), as the
// augmentation and rollout-gradient benchmarks use.
inline std::vector<AugmentBlueprint> swimmer_drag_blueprints(const Model<double>& model,
                                                             const std::vector<nn::Index>& hidden) {
  std::vector<AugmentBlueprint> bps;
  const DragLaw water{0.05, 0.5, 0.2};
  for (int i = 0; i < 5; ++i) {
    const std::string link = "segment" + std::to_string(i);
    bps.push_back(make_blueprint(model, "drag" + std::to_string(i),
                                 link_site(model, link, SiteQuantity::kDragForce, AugmentFrame::kWorld, water),
                                 AugmentMode::kResidual,
                                 {"link." + link + ".linear_velocity", "link." + link + ".angle_of_attack"}, hidden,
                                 0.01, 100 + i));
  }
  return bps;
}

struct SiteCase {
  std::string label;
  Scene scene;
  std::vector<AugmentBlueprint> blueprints;
};

// Every site kind (and both frames of the framed ones), each with networks
// whose output is of the order of the analytical quantity. `hidden` sets the
// network widths (small for the reverse-mode comparison).
inline std::vector<SiteCase> every_site_kind(const std::vector<nn::Index>& hidden, AugmentMode mode) {
  std::vector<SiteCase> cases;
  const Scene pend = pendulum_scene(), swim = swimmer_scene(), box = box_scene();
  const Model<double>& pm = pend.model;
  const Model<double>& sm = swim.model;
  const Model<double>& bm = box.model;
  auto add = [&](const std::string& label, const Scene& scene, std::vector<AugmentBlueprint> bps) {
    SiteCase c{label, scene, std::move(bps)};
    for (const AugmentBlueprint& bp : c.blueprints)
      if (is_drag_site(bp.site.quantity)) c.scene.drags.emplace_back(bp.site.body, bp.site.drag);
    cases.push_back(std::move(c));
  };
  const AugmentMode link_mode = mode == AugmentMode::kScale ? AugmentMode::kResidual : mode;  // scale refused there
  add("joint.torque", pend,
      {make_blueprint(pm, "torque2", joint_site(pm, "joint2", SiteQuantity::kJointTorque), mode,
                      {"joint.joint2.q", "joint.joint2.qd", "joint.joint2.u"}, hidden, 0.5, 1)});
  add("joint.damping", pend,
      {make_blueprint(pm, "damping1", joint_site(pm, "joint1", SiteQuantity::kJointDamping), mode, {"joint.joint1.qd"},
                      hidden, 0.3, 2)});
  add("joint.friction", pend,
      {make_blueprint(pm, "friction2", joint_site(pm, "joint2", SiteQuantity::kJointFriction), mode,
                      {"joint.joint2.qd", "joint.joint1.q"}, hidden, 0.2, 3)});
  add("joint.spring.stiffness", pend,
      {make_blueprint(pm, "spring1", joint_site(pm, "joint1", SiteQuantity::kJointSpringStiffness), mode,
                      {"joint.joint1.q"}, hidden, 1.0, 4)});
  add("joint.torque_offset", pend,
      {make_blueprint(pm, "offset2", joint_site(pm, "joint2", SiteQuantity::kJointTorqueOffset), mode,
                      {"time", "joint.joint2.q"}, hidden, 0.1, 5)});
  add("link.force (world)", swim,
      {make_blueprint(sm, "force0", link_site(sm, "segment0", SiteQuantity::kLinkForce), link_mode,
                      {"link.segment0.linear_velocity", "link.segment0.angle_of_attack"}, hidden, 0.02, 6)});
  add("link.force (body)", swim,
      {make_blueprint(sm, "force2", link_site(sm, "segment2", SiteQuantity::kLinkForce, AugmentFrame::kBody),
                      link_mode, {"link.segment2.linear_velocity.body", "link.segment2.speed"}, hidden, 0.02, 7)});
  add("link.torque (body)", swim,
      {make_blueprint(sm, "torque1", link_site(sm, "segment1", SiteQuantity::kLinkTorque, AugmentFrame::kBody),
                      link_mode, {"link.segment1.angular_velocity.body", "link.segment1.orientation"}, hidden, 0.002,
                      8)});
  add("link.torque (world)", swim,
      {make_blueprint(sm, "torque3", link_site(sm, "segment3", SiteQuantity::kLinkTorque), link_mode,
                      {"link.segment3.angular_velocity", "link.segment3.position"}, hidden, 0.002, 9)});
  const DragLaw water{0.05, 0.5, 0.2};
  add("link.drag_force (world)", swim,
      {make_blueprint(sm, "drag0", link_site(sm, "segment0", SiteQuantity::kDragForce, AugmentFrame::kWorld, water),
                      mode, {"link.segment0.linear_velocity", "link.segment0.angle_of_attack"}, hidden, 0.02, 10),
       make_blueprint(sm, "drag4", link_site(sm, "segment4", SiteQuantity::kDragForce, AugmentFrame::kWorld, water),
                      mode, {"link.segment4.speed", "link.segment4.angle_of_attack"}, hidden, 0.02, 11)});
  add("link.drag_force (body)", swim,
      {make_blueprint(sm, "drag2", link_site(sm, "segment2", SiteQuantity::kDragForce, AugmentFrame::kBody, water),
                      mode, {"link.segment2.linear_velocity.body", "link.segment2.angle_of_attack"}, hidden, 0.02,
                      12)});
  // A force and a couple (the couple's analytical value is 0: scale refused, as link.torque).
  add("link.drag_wrench (body)", swim,
      {make_blueprint(sm, "dragw3", link_site(sm, "segment3", SiteQuantity::kDragWrench, AugmentFrame::kBody, water),
                      link_mode, {"link.segment3.linear_velocity.body", "link.segment3.angular_velocity.body"}, hidden,
                      0.02, 16)});
  add("link.drag_wrench (world)", swim,
      {make_blueprint(sm, "dragw1", link_site(sm, "segment1", SiteQuantity::kDragWrench, AugmentFrame::kWorld, water),
                      link_mode, {"link.segment1.speed", "link.segment1.angle_of_attack"}, hidden, 0.02, 17)});
  add("link.drag_coefficient", swim,
      {make_blueprint(sm, "dragc1", link_site(sm, "segment1", SiteQuantity::kDragCoefficient, AugmentFrame::kWorld,
                                              water),
                      mode, {"link.segment1.speed", "link.segment1.angle_of_attack"}, hidden, 0.05, 13)});
  add("contact.normal_force", box,
      {make_blueprint(bm, "normal", contact_site(SiteQuantity::kContactNormalForce), mode,
                      {"contact.depth", "contact.depth_rate"}, hidden, 0.5, 14)});
  add("contact.friction_force", box,
      {make_blueprint(bm, "friction", contact_site(SiteQuantity::kContactFrictionForce, 0), mode,
                      {"contact.sliding_velocity", "contact.normal_force"}, hidden, 0.2, 15)});
  add("contact.friction_coefficient", box,
      {make_blueprint(bm, "mu", contact_site(SiteQuantity::kContactFrictionCoefficient), mode,
                      {"contact.sliding_velocity", "link.box.linear_velocity", "contact.normal"}, hidden, 0.1, 16)});
  return cases;
}

// A simulation of a scene in scalar S: the reference model (contact and the
// analytical drags as plain hooks) or, with blueprints, the augmented one
// (the drags then come from the drag sites).
template <class S>
class Sim {
 public:
  Sim(const Scene& scene, const std::vector<AugmentBlueprint>* blueprints)
      : scene_(scene), model_(scene.model.cast<S>()), stepper_(model_, scene.step) {
    if (scene.contact) contact_ = install_contact<S>(*scene.contact, scene.model, stepper_);
    if (blueprints) {
      aug_ = install_augmentation<S>(*blueprints, scene.model, stepper_, contact_.get());
    } else {
      for (const auto& [body, law] : scene.drags) {
        const Eigen::Vector3d axis = link_axis(scene.model, body);
        const int b = body;
        const DragLaw l = law;
        stepper_.hooks().push_back([b, axis, l](const Model<S>& m, Data<S>& d, const VecX<S>&, const VecX<S>&,
                                                double) { apply_drag(m, d, b, axis, l); });
      }
    }
    q_ = scene.q0.cast<S>();
    qd_ = scene.qd0.cast<S>();
    u_ = VecX<S>::Zero(scene.model.nv);
  }
  Sim(const Sim&) = delete;
  Sim& operator=(const Sim&) = delete;

  void step() {
    const double t = k_ * scene_.step.dt;
    for (int i = 0; i < u_.size(); ++i) u_[i] = S(scene_.control(i, t));
    stepper_.step(q_, qd_, u_, t);
    ++k_;
  }
  // Steps, appending the state values after each step to `out` (if given).
  void run(int steps, std::vector<double>* out = nullptr) {
    for (int s = 0; s < steps; ++s) {
      step();
      if (out) {
        for (int i = 0; i < q_.size(); ++i) out->push_back(to_double(q_[i]));
        for (int i = 0; i < qd_.size(); ++i) out->push_back(to_double(qd_[i]));
      }
    }
  }
  VecX<S>& q() { return q_; }
  VecX<S>& qd() { return qd_; }
  Stepper<S>& stepper() { return stepper_; }
  AugmentedDynamics<S>* augmented() { return aug_.get(); }
  ContactSystem<S>* contact() { return contact_.get(); }

 private:
  const Scene& scene_;
  Model<S> model_;
  Stepper<S> stepper_;
  std::shared_ptr<ContactSystem<S>> contact_;
  std::shared_ptr<AugmentedDynamics<S>> aug_;
  VecX<S> q_, qd_, u_;
  long long k_ = 0;
};

inline bool bit_identical(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

// A fixed random linear functional of the final state, L = c·q + d·q̇.
template <class S>
S final_state_loss(const VecX<S>& q, const VecX<S>& qd) {
  std::mt19937_64 rng(42);
  S L = S(0.0);
  for (int i = 0; i < q.size(); ++i) L += (nn::random::uniform01(rng) - 0.3) * q[i];
  for (int i = 0; i < qd.size(); ++i) L += (nn::random::uniform01(rng) - 0.3) * qd[i];
  return L;
}

}  // namespace neuralsim::testing
