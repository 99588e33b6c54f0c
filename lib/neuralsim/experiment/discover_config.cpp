#include "neuralsim/experiment/discover_config.hpp"

#include <cmath>
#include <limits>
#include <optional>
#include <random>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/experiment/augment_config.hpp"

namespace neuralsim {
namespace discover_config_detail {

// Joints with coordinates, or every link: the names a '*' stands for.
std::vector<std::string> owners(const Model<double>& model, bool joints) {
  std::vector<std::string> out;
  if (joints) {
    for (const Joint<double>& j : model.joints)
      if (j.nv > 0) out.push_back(j.name);
  } else {
    for (const Body<double>& b : model.bodies) out.push_back(b.name);
  }
  return out;
}

// "joint.*.qd" → "joint.<j>.qd" for every joint (link.* likewise); other
// names as they are.
std::vector<std::string> expand_star(const std::string& text, const Model<double>& model) {
  const std::size_t star = text.find('*');
  if (star == std::string::npos) return {text};
  const bool joint = text.compare(0, 8, "joint.*.") == 0, link = text.compare(0, 7, "link.*.") == 0;
  if (!(joint || link) || text.find('*', star + 1) != std::string::npos) return {};
  std::vector<std::string> out;
  for (const std::string& o : owners(model, joint)) out.push_back(text.substr(0, star) + o + text.substr(star + 1));
  return out;
}

std::vector<std::string> expand_input(const std::string& text, const Model<double>& model) {
  if (text == "joint_states") {
    std::vector<std::string> out = expand_star("joint.*.q", model);
    for (const std::string& s : expand_star("joint.*.qd", model)) out.push_back(s);
    return out;
  }
  if (text == "joint_controls") return expand_star("joint.*.u", model);
  if (text == "link_motion") {
    std::vector<std::string> out;
    for (const char* q : {"linear_velocity", "angle_of_attack", "speed"})
      for (const std::string& s : expand_star(std::string("link.*.") + q, model)) out.push_back(s);
    return out;
  }
  return expand_star(text, model);
}

// The inputs of one site from a list of names (with shorthand); ConfigError
// at the item for an unknown name or one the site cannot see.
std::vector<AugmentInput> read_inputs(const std::vector<Config>& items, const AugmentSite& site,
                                      const std::string& site_text, const Model<double>& model) {
  const bool contact_site = is_contact_site(site.quantity);
  // '@': the site's own joint or link (in a tree, body i and its joint i).
  const int own = is_joint_site(site.quantity) ? site.joint : site.body;
  std::vector<AugmentInput> out;
  for (const Config& item : items) {
    std::string text = item.get<std::string>("");
    const std::size_t at = text.find('@');
    if (at != std::string::npos) {
      if (own < 0)
        item.fail("", "'" + text + "': '@' stands for the site's own joint or link, and site '" + site_text +
                          "' has none");
      const bool joint = text.compare(0, 8, "joint.@.") == 0;
      if (!(joint || text.compare(0, 7, "link.@.") == 0))
        item.fail("", "'" + text + "': '@' stands for a joint or link name (joint.@.qd, link.@.speed)");
      text = text.substr(0, at) + (joint ? model.joints[own].name : model.bodies[own].name) + text.substr(at + 1);
    }
    const std::vector<std::string> names = expand_input(text, model);
    if (names.empty())
      item.fail("", "'" + text + "': a '*' stands for a joint or link name, once (joint.*.qd, link.*.speed)");
    for (const std::string& name : names) {
      const auto in = find_augment_input(name, model, contact_site);
      if (!in) {
        if (!contact_site && find_augment_input(name, model, true))
          item.fail("", "input '" + name + "' cannot be seen at site '" + site_text +
                            "': contact.* inputs exist only at contact sites");
        item.fail("", unknown_input_message(name, model, contact_site));
      }
      if (in->kind == InputKind::kTime)
        item.fail("", "input 'time' is not offered: discover trains on windows that each start at t = 0");
      bool seen = false;
      for (const AugmentInput& prev : out) seen = seen || prev.name == name;
      if (!seen) out.push_back(*in);
    }
  }
  if (out.empty()) items.front().fail("", "no input for site '" + site_text + "'");
  return out;
}

// "joint.elbow.torque" → "joint_elbow_torque"; a body frame or a contact
// site's link is appended ("link_tail_drag_force_body").
std::string blueprint_name(const AugmentSite& site, const std::string& site_text, const Model<double>& model) {
  std::string n;
  for (char c : site_text.substr(0, site_text.find(" ("))) n += (c == '.' || c == ' ' || c == '/') ? '_' : c;
  if (site_has_frame(site.quantity) && site.frame == AugmentFrame::kBody) n += "_body";
  if (is_contact_site(site.quantity) && site.body >= 0) n += "_" + model.bodies[site.body].name;
  return n;
}

struct SiteEntry {
  AugmentSite site;
  std::string text;
  Config where;                // its list item
  std::string key;             // the site within it ("" or "site")
  std::vector<Config> inputs;  // empty: the section's inputs
};

std::vector<SiteEntry> read_sites(const Config& d, const Model<double>& model, const ContactSettings* contact) {
  if (!d.has("sites") || !d.is_list("sites"))
    d.fail("sites", "expected a list of candidate sites, e.g. [joint.*.torque]; " + valid_augment_sites(model));
  const std::vector<Config> items = d.list("sites");
  if (items.empty()) d.fail("sites", "the candidate set has no sites; " + valid_augment_sites(model));
  std::vector<SiteEntry> out;
  for (const Config& item : items) {
    std::vector<SiteEntry> here;
    std::vector<Config> own_inputs;
    std::optional<AugmentFrame> frame;
    if (item.is_map("")) {
      item.check_known_keys({"site", "inputs", "frame"});
      if (item.has("frame"))
        frame = item.get_choice("frame", {"world", "body"}, "world") == "body" ? AugmentFrame::kBody : AugmentFrame::kWorld;
      if (item.has("inputs")) {
        if (!item.is_list("inputs") || item.list("inputs").empty())
          item.fail("inputs", "expected a non-empty list of input names");
        own_inputs = item.list("inputs");
      }
    }
    const std::string key = item.is_map("") ? "site" : "";
    if (item.is_map("") && item.is_map("site")) {
      here.push_back({read_augment_site(item, "site", model, contact), "", item, key, own_inputs});
    } else {
      const std::string text = item.get<std::string>(key);
      const std::vector<std::string> names = expand_star(text, model);
      if (names.empty())
        item.fail(key, "'" + text + "': a '*' stands for a joint or link name, once (joint.*.torque)");
      for (const std::string& name : names) {
        const auto site = parse_augment_site(name, model);
        if (!site) item.fail(key, unknown_site_message(name, model));
        if (is_joint_site(site->quantity) && model.joints[site->joint].nv == 0) continue;
        check_contact_site(*site, item, key, contact);
        here.push_back({*site, "", item, key, own_inputs});
      }
    }
    for (SiteEntry& e : here) {
      if (frame) {
        if (!site_has_frame(e.site.quantity))
          item.fail("frame", "site '" + describe_site(e.site, model) +
                                 "' has no frame (frames apply to link force, torque and drag_force)");
        e.site.frame = *frame;
      }
      const std::string problem = site_problem(e.site, AugmentMode::kResidual, model);
      if (!problem.empty()) e.where.fail(e.key, problem);
      e.text = describe_site(e.site, model);
      for (const SiteEntry& prev : out)
        if (prev.text == e.text) e.where.fail(e.key, "site '" + e.text + "' is a candidate twice");
      out.push_back(e);
    }
  }
  return out;
}

std::vector<double> read_lambdas(const Config& p) {
  if (!p.is_list("lambdas")) p.fail("lambdas", "expected a list of penalties, decreasing, e.g. [1.0, 0.3, 0.1]");
  std::vector<double> out;
  for (const Config& item : p.list("lambdas")) {
    const double v = item.get<double>("");
    if (!std::isfinite(v) || !(v > 0)) item.fail("", "a penalty must be finite and > 0, got " + std::to_string(v));
    if (!out.empty() && !(v < out.back()))
      item.fail("", "the penalty path must be strictly decreasing: " + std::to_string(v) + " follows " +
                        std::to_string(out.back()));
    out.push_back(v);
  }
  if (out.size() < 2 || out.size() > 100) p.fail("lambdas", "expected 2 to 100 penalties, got " + std::to_string(out.size()));
  return out;
}

void read_penalty(const Config& d, DiscoverSpec& s) {
  if (!d.has("penalty")) return;
  const Config p = d.at("penalty");
  p.check_known_keys({"points", "ratio", "lambda_max", "lambdas", "upper_l2", "adaptive"});
  s.adaptive = p.get_in_range("adaptive", s.adaptive, 0.0, 4.0);
  const double inf = std::numeric_limits<double>::infinity();
  if (p.has("lambdas")) {
    for (const char* k : {"points", "ratio", "lambda_max"})
      if (p.has(k)) p.fail(k, "give either the path (lambdas) or how to make it (points, ratio, lambda_max)");
    s.lambdas = read_lambdas(p);
  }
  s.points = static_cast<int>(p.get_int_in_range("points", s.points, 2, 100));
  s.ratio = p.get_in_range("ratio", s.ratio, 1e-12, 1.0);
  if (!(s.ratio < 1.0)) p.fail("ratio", "expected a ratio in (0, 1): the path decreases");
  if (p.has("lambda_max") && p.get<std::string>("lambda_max") != "auto") {
    s.lambda_max = p.get<double>("lambda_max");
    if (!std::isfinite(s.lambda_max) || !(s.lambda_max > 0))
      p.fail("lambda_max", "expected 'auto' or a finite penalty > 0");
  }
  s.upper_l2 = p.get_in_range("upper_l2", s.upper_l2, 0.0, inf);
  if (!std::isfinite(s.upper_l2)) p.fail("upper_l2", "expected a finite weight decay >= 0");
}

void read_network(const Config& d, DiscoverSpec& s) {
  if (!d.has("network")) return;
  const Config n = d.at("network");
  n.check_known_keys({"hidden", "activation", "init", "seed", "output_scale"});
  s.output_scale = n.get_in_range("output_scale", 1.0, 1e-12, 1e12);
  if (n.has("hidden")) {
    if (!n.is_list("hidden") || n.list("hidden").empty())
      n.fail("hidden", "expected a non-empty list of layer widths, e.g. [8] (the input groups sit in the first layer)");
    s.hidden.clear();
    for (const Config& w : n.list("hidden")) {
      const long long width = w.get<long long>("");
      if (width < 1 || width > 1024) w.fail("", "a layer width must be in [1, 1024], got " + std::to_string(width));
      s.hidden.push_back(static_cast<nn::Index>(width));
    }
  }
  s.activation = nn::parse_activation(n.get_choice("activation", nn::activation_names(), "tanh"));
  s.init = read_network_init(n);
  s.network_seed =
      static_cast<std::uint64_t>(n.get_int_in_range("seed", 0, 0, std::numeric_limits<std::int64_t>::max()));
}

}  // namespace discover_config_detail

DiscoverSpec read_discover_section(const Config& root, const Model<double>& model, const ContactSettings* contact) {
  using namespace discover_config_detail;
  if (!root.has("discover") || !root.is_map("discover"))
    root.fail("discover", "missing required section: the candidate sites and inputs (docs/discover.md)");
  const Config d = root.at("discover");
  d.check_known_keys({"sites", "inputs", "network", "mode", "penalty", "epochs", "selection", "stability", "retrain"});
  DiscoverSpec s;
  read_network(d, s);
  read_penalty(d, s);
  const std::string mode = d.get_choice("mode", {"residual", "scale"}, "residual");
  const AugmentMode m =
      mode == "scale" ? AugmentMode::kScale : mode == "replace" ? AugmentMode::kReplace : AugmentMode::kResidual;
  s.refit_epochs = s.epochs_per_point;
  if (d.has("epochs")) {
    const Config e = d.at("epochs");
    e.check_known_keys({"dense", "per_point", "refit"});
    s.dense_epochs = static_cast<int>(e.get_int_in_range("dense", s.dense_epochs, 1, 1000000));
    s.epochs_per_point = static_cast<int>(e.get_int_in_range("per_point", s.epochs_per_point, 1, 1000000));
    s.refit_epochs = static_cast<int>(e.get_int_in_range("refit", s.epochs_per_point, 0, 1000000));
  }
  if (d.has("selection")) {
    const Config c = d.at("selection");
    c.check_known_keys({"rule", "tolerance", "min_improvement", "frequency"});
    const std::string rule = c.get_choice("rule", {"explained", "one_standard_error", "minimum"}, "explained");
    s.rule = rule == "minimum"              ? DiscoverSpec::Rule::kMinimum
             : rule == "one_standard_error" ? DiscoverSpec::Rule::kOneStandardError
                                            : DiscoverSpec::Rule::kExplained;
    s.tolerance = c.get_in_range("tolerance", s.rule == DiscoverSpec::Rule::kExplained ? 0.01 : 0.0, 0.0,
                                 s.rule == DiscoverSpec::Rule::kExplained ? 1.0 : 10.0);
    s.min_improvement = c.get_in_range("min_improvement", s.min_improvement, 0.0, 1.0);
    s.frequency = c.get_in_range("frequency", s.frequency, 0.0, 1.0);
  }
  if (d.has("stability")) {
    const Config c = d.at("stability");
    c.check_known_keys({"seeds", "bootstrap"});
    s.seeds = static_cast<int>(c.get_int_in_range("seeds", s.seeds, 1, 1000));
    s.bootstrap = static_cast<int>(c.get_int_in_range("bootstrap", s.bootstrap, 0, 1000));
  }
  if (d.has("retrain")) {
    const Config c = d.at("retrain");
    c.check_known_keys({"epochs"});
    s.retrain_epochs = static_cast<int>(c.get_int_in_range("epochs", 0, 0, 1000000));
  }

  const std::vector<SiteEntry> sites = read_sites(d, model, contact);
  std::vector<Config> common;
  if (d.has("inputs")) {
    if (!d.is_list("inputs") || d.list("inputs").empty())
      d.fail("inputs", "expected a non-empty list of candidate inputs, e.g. [joint_states, joint_controls]");
    common = d.list("inputs");
  }
  for (std::size_t i = 0; i < sites.size(); ++i) {
    const SiteEntry& e = sites[i];
    if (e.inputs.empty() && common.empty())
      e.where.fail(e.key, "site '" + e.text + "' has no inputs: give discover.inputs or the site's own inputs");
    const std::string problem = site_problem(e.site, m, model);
    if (!problem.empty()) d.fail("mode", "site '" + e.text + "': " + problem);
    AugmentBlueprint bp;
    bp.name = blueprint_name(e.site, e.text, model);
    bp.site = e.site;
    bp.mode = m;
    bp.inputs = read_inputs(e.inputs.empty() ? common : e.inputs, e.site, e.text, model);
    bp.network = nn::Mlp(total_input_size(bp.inputs), s.hidden, site_output_dim(bp.site, model), s.activation,
                         nn::Activation::kIdentity);
    std::mt19937_64 engine(s.network_seed + i);
    bp.network.initialize(s.init, engine);
    bp.network.set_output_scaling(Eigen::VectorXd::Constant(bp.network.output_dim(), s.output_scale),
                                  bp.network.output_offset());
    check_blueprint(bp, model);
    s.candidates.push_back(std::move(bp));
  }
  return s;
}

}  // namespace neuralsim
