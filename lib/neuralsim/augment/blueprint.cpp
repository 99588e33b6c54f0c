#include "neuralsim/augment/blueprint.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/core/names.hpp"
#include "neuralsim/core/splitmix.hpp"

namespace neuralsim {
namespace {

struct QuantityName {
  SiteQuantity quantity;
  const char* name;
};

const QuantityName kJointQuantities[] = {{SiteQuantity::kJointTorque, "torque"},
                                         {SiteQuantity::kJointDamping, "damping"},
                                         {SiteQuantity::kJointFriction, "friction"},
                                         {SiteQuantity::kJointSpringStiffness, "spring.stiffness"},
                                         {SiteQuantity::kJointTorqueOffset, "torque_offset"}};
const QuantityName kLinkQuantities[] = {{SiteQuantity::kLinkForce, "force"},
                                        {SiteQuantity::kLinkTorque, "torque"},
                                        {SiteQuantity::kDragForce, "drag_force"},
                                        {SiteQuantity::kDragCoefficient, "drag_coefficient"},
                                        {SiteQuantity::kDragWrench, "drag_wrench"}};
const QuantityName kContactQuantities[] = {{SiteQuantity::kContactNormalForce, "normal_force"},
                                           {SiteQuantity::kContactFrictionForce, "friction_force"},
                                           {SiteQuantity::kContactFrictionCoefficient, "friction_coefficient"}};

template <std::size_t N>
std::vector<std::string> names_of(const QuantityName (&table)[N]) {
  std::vector<std::string> out;
  for (const auto& q : table) out.push_back(q.name);
  return out;
}

template <std::size_t N>
std::optional<SiteQuantity> find_in(const QuantityName (&table)[N], const std::string& name) {
  for (const auto& q : table)
    if (name == q.name) return q.quantity;
  return std::nullopt;
}

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Link inputs: the quantity, whether it takes a frame suffix, its size.
struct LinkInputName {
  InputKind kind;
  const char* name;
  bool framed;
  int size;
};
const LinkInputName kLinkInputs[] = {{InputKind::kLinkPosition, "position", false, 3},
                                     {InputKind::kLinkOrientation, "orientation", false, 9},
                                     {InputKind::kLinkLinearVelocity, "linear_velocity", true, 3},
                                     {InputKind::kLinkAngularVelocity, "angular_velocity", true, 3},
                                     {InputKind::kLinkAngleOfAttack, "angle_of_attack", false, 1},
                                     {InputKind::kLinkSpeed, "speed", false, 1}};

struct ContactInputName {
  InputKind kind;
  const char* name;
  int size;
};
const ContactInputName kContactInputs[] = {{InputKind::kContactNormal, "contact.normal", 3},
                                           {InputKind::kContactDepth, "contact.depth", 1},
                                           {InputKind::kContactDepthRate, "contact.depth_rate", 1},
                                           {InputKind::kContactSlidingVelocity, "contact.sliding_velocity", 3},
                                           {InputKind::kContactNormalForce, "contact.normal_force", 1}};

}  // namespace

const std::vector<std::string>& augment_mode_names() {
  static const std::vector<std::string> names = {"residual", "scale", "replace"};
  return names;
}

const char* augment_mode_name(AugmentMode mode) {
  switch (mode) {
    case AugmentMode::kResidual: return "residual";
    case AugmentMode::kScale: return "scale";
    case AugmentMode::kReplace: return "replace";
  }
  return "?";
}

const std::vector<std::string>& joint_site_quantity_names() {
  static const std::vector<std::string> names = names_of(kJointQuantities);
  return names;
}
const std::vector<std::string>& link_site_quantity_names() {
  static const std::vector<std::string> names = names_of(kLinkQuantities);
  return names;
}
const std::vector<std::string>& contact_site_quantity_names() {
  static const std::vector<std::string> names = names_of(kContactQuantities);
  return names;
}

const char* site_quantity_name(SiteQuantity q) {
  for (const auto& t : kJointQuantities)
    if (t.quantity == q) return t.name;
  for (const auto& t : kLinkQuantities)
    if (t.quantity == q) return t.name;
  for (const auto& t : kContactQuantities)
    if (t.quantity == q) return t.name;
  return "?";
}

std::optional<SiteQuantity> find_joint_site_quantity(const std::string& name) { return find_in(kJointQuantities, name); }
std::optional<SiteQuantity> find_link_site_quantity(const std::string& name) { return find_in(kLinkQuantities, name); }
std::optional<SiteQuantity> find_contact_site_quantity(const std::string& name) {
  return find_in(kContactQuantities, name);
}

bool is_joint_site(SiteQuantity q) {
  return q == SiteQuantity::kJointTorque || q == SiteQuantity::kJointDamping || q == SiteQuantity::kJointFriction ||
         q == SiteQuantity::kJointSpringStiffness || q == SiteQuantity::kJointTorqueOffset;
}
bool is_link_site(SiteQuantity q) {
  return q == SiteQuantity::kLinkForce || q == SiteQuantity::kLinkTorque || is_drag_site(q);
}
bool is_drag_site(SiteQuantity q) {
  return q == SiteQuantity::kDragForce || q == SiteQuantity::kDragCoefficient || q == SiteQuantity::kDragWrench;
}
bool is_contact_site(SiteQuantity q) {
  return q == SiteQuantity::kContactNormalForce || q == SiteQuantity::kContactFrictionForce ||
         q == SiteQuantity::kContactFrictionCoefficient;
}
bool site_has_frame(SiteQuantity q) {
  return q == SiteQuantity::kLinkForce || q == SiteQuantity::kLinkTorque || q == SiteQuantity::kDragForce ||
         q == SiteQuantity::kDragWrench;
}

std::string describe_site(const AugmentSite& site, const Model<double>& model) {
  const std::string q = site_quantity_name(site.quantity);
  if (is_joint_site(site.quantity)) {
    const bool ok = site.joint >= 0 && site.joint < model.num_bodies();
    return "joint." + (ok ? model.joints[site.joint].name : std::string("?")) + "." + q;
  }
  if (is_link_site(site.quantity)) {
    const bool ok = site.body >= 0 && site.body < model.num_bodies();
    std::string s = "link." + (ok ? model.bodies[site.body].name : std::string("?")) + "." + q;
    if (site_has_frame(site.quantity)) s += site.frame == AugmentFrame::kBody ? " (body)" : " (world)";
    return s;
  }
  std::string s = "contact." + q;
  if (site.body >= 0 && site.body < model.num_bodies()) s += " (contacts of " + model.bodies[site.body].name + ")";
  return s;
}

int site_output_dim(const AugmentSite& site, const Model<double>& model) {
  switch (site.quantity) {
    case SiteQuantity::kJointTorque:
      return site.joint >= 0 && site.joint < model.num_bodies() ? model.joints[site.joint].nv : 0;
    case SiteQuantity::kJointDamping:
    case SiteQuantity::kJointFriction:
    case SiteQuantity::kJointSpringStiffness:
    case SiteQuantity::kJointTorqueOffset:
    case SiteQuantity::kDragCoefficient:
    case SiteQuantity::kContactNormalForce:
    case SiteQuantity::kContactFrictionCoefficient:
      return 1;
    case SiteQuantity::kLinkForce:
    case SiteQuantity::kLinkTorque:
    case SiteQuantity::kDragForce:
      return 3;
    case SiteQuantity::kDragWrench:
      return 6;
    case SiteQuantity::kContactFrictionForce:
      return 2;
  }
  return 0;
}

std::string site_problem(const AugmentSite& site, AugmentMode mode, const Model<double>& model) {
  const int n = model.num_bodies();
  if (is_joint_site(site.quantity)) {
    if (site.joint < 0 || site.joint >= n) return "joint index out of range";
    const Joint<double>& j = model.joints[site.joint];
    if (j.nv == 0) return "joint '" + j.name + "' is fixed: it has no coordinates to augment";
    if (site.quantity == SiteQuantity::kJointSpringStiffness && j.nq != 1)
      return "joint '" + j.name + "': springs act on 1-coordinate joints only";
    return "";
  }
  if (is_link_site(site.quantity)) {
    if (site.body < 0 || site.body >= n) return "link index out of range";
    if (mode == AugmentMode::kScale && site.quantity == SiteQuantity::kDragWrench)
      return "mode 'scale' needs an analytical value, and the couple of link.drag_wrench has none (it is 0): use "
             "residual or replace (or drag_force to scale the force)";
    if (mode == AugmentMode::kScale &&
        (site.quantity == SiteQuantity::kLinkForce || site.quantity == SiteQuantity::kLinkTorque))
      return std::string("mode 'scale' needs an analytical value, and link.") + site_quantity_name(site.quantity) +
             " has none (it is 0): use residual or replace";
    const DragLaw& d = site.drag;
    for (double c : {d.linear, d.normal, d.quadratic})
      if (!std::isfinite(c) || c < 0) return "drag coefficients must be finite and >= 0";
    return "";
  }
  if (site.body < -1 || site.body >= n) return "link index out of range";
  return "";
}

std::optional<AugmentInput> find_augment_input(const std::string& name, const Model<double>& model,
                                               bool contact_site) {
  AugmentInput in;
  in.name = name;
  if (name == "time") {
    in.kind = InputKind::kTime;
    in.size = 1;
    return in;
  }
  if (name.compare(0, 6, "noise.") == 0) {
    const std::string k = name.substr(6);
    if (k.empty() || k.size() > 2 || k.find_first_not_of("0123456789") != std::string::npos ||
        (k.size() == 2 && k[0] == '0'))
      return std::nullopt;
    in.kind = InputKind::kNoise;
    in.index = std::stoi(k);
    in.size = 1;
    return in;
  }
  for (const auto& c : kContactInputs) {
    if (name == c.name) {
      if (!contact_site) return std::nullopt;
      in.kind = c.kind;
      in.size = c.size;
      return in;
    }
  }
  const std::string jp = "joint.", lp = "link.";
  if (name.compare(0, jp.size(), jp) == 0) {
    const std::string rest = name.substr(jp.size());
    struct {
      const char* suffix;
      InputKind kind;
    } const kinds[] = {{".qd", InputKind::kJointQd}, {".q", InputKind::kJointQ}, {".u", InputKind::kJointU}};
    for (const auto& k : kinds) {
      if (!ends_with(rest, k.suffix)) continue;
      const std::string joint = rest.substr(0, rest.size() - std::string(k.suffix).size());
      const int j = model.joint_index(joint);
      if (j < 0 || model.joints[j].nv == 0) return std::nullopt;
      in.kind = k.kind;
      in.index = j;
      in.size = k.kind == InputKind::kJointQ ? model.joints[j].nq : model.joints[j].nv;
      return in;
    }
    return std::nullopt;
  }
  if (name.compare(0, lp.size(), lp) == 0) {
    const std::string rest = name.substr(lp.size());
    for (const auto& li : kLinkInputs) {
      for (int f = 0; f < (li.framed ? 3 : 1); ++f) {
        const std::string suffix = std::string(".") + li.name + (f == 1 ? ".world" : f == 2 ? ".body" : "");
        if (!ends_with(rest, suffix)) continue;
        const int b = model.body_index(rest.substr(0, rest.size() - suffix.size()));
        if (b < 0) continue;
        in.kind = li.kind;
        in.index = b;
        in.frame = f == 2 ? AugmentFrame::kBody : AugmentFrame::kWorld;
        in.size = li.size;
        return in;
      }
    }
  }
  return std::nullopt;
}

std::vector<std::string> augment_input_names(const Model<double>& model, bool contact_site) {
  std::vector<std::string> out = {"time", "noise.0"};
  for (const Joint<double>& j : model.joints) {
    if (j.nv == 0) continue;
    for (const char* s : {".q", ".qd", ".u"}) out.push_back("joint." + j.name + s);
  }
  for (const Body<double>& b : model.bodies) {
    for (const auto& li : kLinkInputs) {
      const std::string base = "link." + b.name + "." + li.name;
      out.push_back(base);
      if (li.framed) {
        out.push_back(base + ".world");
        out.push_back(base + ".body");
      }
    }
  }
  if (contact_site)
    for (const auto& c : kContactInputs) out.push_back(c.name);
  return out;
}

std::string unknown_input_message(const std::string& name, const Model<double>& model, bool contact_site) {
  std::string msg = "unknown input '" + name + "'";
  const std::vector<std::string> all = augment_input_names(model, contact_site);
  const std::string best = closest_name(name, all, 3);
  if (!best.empty()) msg += " (did you mean '" + best + "'?)";
  if (!contact_site && name.compare(0, 8, "contact.") == 0)
    msg += " (contact.* inputs exist only at contact sites)";
  std::vector<std::string> joints, links;
  for (const Joint<double>& j : model.joints)
    if (j.nv > 0) joints.push_back(j.name);
  for (const Body<double>& b : model.bodies) links.push_back(b.name);
  msg += "; valid inputs: time, noise.<0..99>, joint.<joint>.q|qd|u (joints: " + join(joints) +
         "), link.<link>.position|orientation|angle_of_attack|speed, "
         "link.<link>.linear_velocity|angular_velocity[.world|.body] (links: " +
         join(links) + ")";
  if (contact_site) {
    std::vector<std::string> c;
    for (const auto& ci : kContactInputs) c.push_back(ci.name);
    msg += ", " + join(c);
  }
  return msg;
}

std::uint64_t noise_hash(std::uint64_t h, double value) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return splitmix64(h ^ bits);
}

double noise_input_value(std::uint64_t h, int k) {
  const std::uint64_t r = splitmix64(h ^ splitmix64(static_cast<std::uint64_t>(k) + 0x9e3779b97f4a7c15ull));
  const double u = static_cast<double>(r >> 11) * 0x1.0p-53;  // [0, 1)
  return std::sqrt(3.0) * (2.0 * u - 1.0);
}

int total_input_size(const std::vector<AugmentInput>& inputs) {
  int n = 0;
  for (const auto& in : inputs) n += in.size;
  return n;
}

void check_blueprint(const AugmentBlueprint& bp, const Model<double>& model) {
  const std::string who = "augmentation '" + bp.name + "'";
  const std::string problem = site_problem(bp.site, bp.mode, model);
  if (!problem.empty()) throw InvalidArgument(who + ": " + problem);
  const bool contact = is_contact_site(bp.site.quantity);
  if (bp.inputs.empty()) throw InvalidArgument(who + ": no inputs");
  for (const AugmentInput& in : bp.inputs) {
    const auto resolved = find_augment_input(in.name, model, contact);
    if (!resolved || resolved->kind != in.kind || resolved->index != in.index || resolved->frame != in.frame ||
        resolved->size != in.size)
      throw InvalidArgument(who + ": " + unknown_input_message(in.name, model, contact));
  }
  if (bp.network.num_layers() == 0) throw InvalidArgument(who + ": the network has no layers");
  const int n_in = total_input_size(bp.inputs), n_out = site_output_dim(bp.site, model);
  if (bp.network.input_dim() != n_in || bp.network.output_dim() != n_out)
    throw InvalidArgument(who + ": the network maps " + std::to_string(bp.network.input_dim()) + " -> " +
                          std::to_string(bp.network.output_dim()) + ", the site needs " + std::to_string(n_in) +
                          " -> " + std::to_string(n_out) + " (" + bp.network.describe() + ")");
}

}  // namespace neuralsim
