#include "neuralsim/experiment/augment_config.hpp"

#include <yaml-cpp/yaml.h>

#include <limits>
#include <random>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/core/format.hpp"
#include "neuralsim/core/names.hpp"

namespace neuralsim {
namespace {

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

std::string joint_list(const Model<double>& model) {
  std::vector<std::string> n;
  for (const Joint<double>& j : model.joints)
    if (j.nv > 0) n.push_back(j.name);
  return join(n);
}

std::string link_list(const Model<double>& model) {
  std::vector<std::string> n;
  for (const Body<double>& b : model.bodies) n.push_back(b.name);
  return join(n);
}

std::string valid_sites(const Model<double>& model) {
  return "valid sites are joint.<joint>." + join(joint_site_quantity_names(), "|") + " (joints: " +
         joint_list(model) + "), link.<link>." + join(link_site_quantity_names(), "|") + " (links: " +
         link_list(model) + "), contact." + join(contact_site_quantity_names(), "|");
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// "joint.<j>.<q>", "link.<l>.<q>", "contact.<q>".
bool parse_site_string(const std::string& text, const Model<double>& model, AugmentSite& site) {
  auto split = [&](const std::string& prefix, const std::vector<std::string>& quantities, std::string& owner,
                   std::string& quantity) {
    if (text.compare(0, prefix.size(), prefix) != 0) return false;
    const std::string rest = text.substr(prefix.size());
    for (const std::string& q : quantities) {
      if (ends_with(rest, "." + q) && rest.size() > q.size() + 1) {
        owner = rest.substr(0, rest.size() - q.size() - 1);
        quantity = q;
        return true;
      }
    }
    return false;
  };
  std::string owner, quantity;
  if (split("joint.", joint_site_quantity_names(), owner, quantity)) {
    site.joint = model.joint_index(owner);
    site.quantity = *find_joint_site_quantity(quantity);
    return site.joint >= 0;
  }
  if (split("link.", link_site_quantity_names(), owner, quantity)) {
    site.body = model.body_index(owner);
    site.quantity = *find_link_site_quantity(quantity);
    return site.body >= 0;
  }
  const std::string cp = "contact.";
  if (text.compare(0, cp.size(), cp) == 0) {
    const auto q = find_contact_site_quantity(text.substr(cp.size()));
    if (!q) return false;
    site.quantity = *q;
    site.body = -1;
    return true;
  }
  return false;
}

}  // namespace

std::optional<AugmentSite> parse_augment_site(const std::string& text, const Model<double>& model) {
  AugmentSite site;
  if (!parse_site_string(text, model, site)) return std::nullopt;
  return site;
}

std::string valid_augment_sites(const Model<double>& model) { return valid_sites(model); }

std::string unknown_site_message(const std::string& text, const Model<double>& model) {
  std::vector<std::string> all;
  for (const Joint<double>& j : model.joints)
    if (j.nv > 0)
      for (const std::string& q : joint_site_quantity_names()) all.push_back("joint." + j.name + "." + q);
  for (const Body<double>& b : model.bodies)
    for (const std::string& q : link_site_quantity_names()) all.push_back("link." + b.name + "." + q);
  for (const std::string& q : contact_site_quantity_names()) all.push_back("contact." + q);
  const std::string best = closest_name(text, all, 3);
  return "unknown site '" + text + "'" + (best.empty() ? "" : " (did you mean '" + best + "'?)") + "; " +
         valid_sites(model);
}

AugmentSite read_augment_site(const Config& entry, const std::string& key, const Model<double>& model,
                              const ContactSettings* contact) {
  if (!entry.has(key)) entry.fail(key, "missing required key (" + valid_sites(model) + ")");
  AugmentSite site;
  if (!entry.is_map(key)) {
    const std::string text = entry.get<std::string>(key);
    if (!parse_site_string(text, model, site)) entry.fail(key, unknown_site_message(text, model));
  } else {
    const Config c = entry.at(key);
    c.check_known_keys({"joint", "link", "contact", "quantity", "frame", "drag"});
    const int owners = int(c.has("joint")) + int(c.has("link")) + int(c.has("contact"));
    if (owners != 1) c.fail("", "a site names exactly one of 'joint', 'link' or 'contact'; " + valid_sites(model));
    const std::string quantity = c.get<std::string>("quantity");
    if (c.has("joint")) {
      const std::string name = c.get<std::string>("joint");
      site.joint = model.joint_index(name);
      if (site.joint < 0 || model.joints[site.joint].nv == 0)
        c.fail("joint", "unknown joint '" + name + "' (joints with coordinates: " + joint_list(model) + ")");
      const auto q = find_joint_site_quantity(quantity);
      if (!q)
        c.fail("quantity", "unknown joint quantity '" + quantity + "' (valid: " + join(joint_site_quantity_names()) + ")");
      site.quantity = *q;
    } else if (c.has("link")) {
      const std::string name = c.get<std::string>("link");
      site.body = model.body_index(name);
      if (site.body < 0) c.fail("link", "unknown link '" + name + "' (links: " + link_list(model) + ")");
      const auto q = find_link_site_quantity(quantity);
      if (!q)
        c.fail("quantity", "unknown link quantity '" + quantity + "' (valid: " + join(link_site_quantity_names()) + ")");
      site.quantity = *q;
    } else {
      const std::string which = c.get<std::string>("contact");
      site.body = which == "all" ? -1 : model.body_index(which);
      if (which != "all" && site.body < 0)
        c.fail("contact", "expected 'all' or a link, got '" + which + "' (links: " + link_list(model) + ")");
      const auto q = find_contact_site_quantity(quantity);
      if (!q)
        c.fail("quantity",
               "unknown contact quantity '" + quantity + "' (valid: " + join(contact_site_quantity_names()) + ")");
      site.quantity = *q;
    }
    if (c.has("frame")) {
      if (!site_has_frame(site.quantity))
        c.fail("frame", std::string("'") + site_quantity_name(site.quantity) +
                            "' has no frame (frames apply to link force, torque, drag_force and drag_wrench)");
      site.frame = c.get_choice("frame", {"world", "body"}, "world") == "body" ? AugmentFrame::kBody
                                                                             : AugmentFrame::kWorld;
    }
    if (c.has("drag")) {
      if (!is_drag_site(site.quantity))
        c.fail("drag", "an analytical drag law belongs to drag_force, drag_coefficient and drag_wrench sites");
      const Config d = c.at("drag");
      d.check_known_keys({"linear", "normal", "quadratic"});
      const double inf = std::numeric_limits<double>::infinity();
      site.drag.linear = d.get_in_range("linear", 0.0, 0.0, inf);
      site.drag.normal = d.get_in_range("normal", 0.0, 0.0, inf);
      site.drag.quadratic = d.get_in_range("quadratic", 0.0, 0.0, inf);
    }
  }
  check_contact_site(site, entry, key, contact);
  return site;
}

void check_contact_site(const AugmentSite& site, const Config& entry, const std::string& key,
                        const ContactSettings* contact) {
  if (!is_contact_site(site.quantity)) return;
  if (contact == nullptr)
    entry.fail(key, "contact sites need the experiment's `contact:` section (with a force-level model)");
  if (contact->model == ContactModelType::kImpulse)
    entry.fail(key,
               "contact sites need a force-level contact model (hunt_crossley or penalty), the experiment uses "
               "impulse");
}

nn::Init read_network_init(const Config& entry) {
  const std::string s =
      entry.get_choice("init", {"xavier_uniform", "xavier_normal", "he_uniform", "he_normal"}, "xavier_uniform");
  return s == "xavier_normal" ? nn::Init::kXavierNormal
         : s == "he_uniform"  ? nn::Init::kHeUniform
         : s == "he_normal"   ? nn::Init::kHeNormal
                              : nn::Init::kXavierUniform;
}

namespace {

// "[0.1, 0.2]" with every digit needed to tell the numbers apart.
std::string scale_text(const Eigen::VectorXd& v) {
  std::string out = "[";
  for (Eigen::Index i = 0; i < v.size(); ++i) out += (i ? ", " : "") + format_number(v[i]);
  return out + "]";
}

Eigen::VectorXd read_sized_vector(const Config& entry, const std::string& key, int n, bool broadcast) {
  Eigen::VectorXd v;
  if (broadcast && !entry.is_list(key)) {
    v = Eigen::VectorXd::Constant(n, entry.get<double>(key));
  } else {
    v = entry.get<Eigen::VectorXd>(key);  // a list is never broadcast: [0.1] for 3 outputs is a mistake
  }
  if (v.size() != n)
    entry.fail(key, "expected " + std::string(broadcast ? "one number (without brackets) or " : "") +
                        std::to_string(n) + " numbers (one per network " +
                        (key == "output_scale" ? "output" : "input") + "), got a list of " + std::to_string(v.size()));
  return v;
}

}  // namespace

std::vector<std::string> augment_network_input_names(const AugmentBlueprint& bp) {
  std::vector<std::string> names;
  for (const AugmentInput& in : bp.inputs) {
    if (in.size == 1) {
      names.push_back(in.name);
    } else {
      for (int k = 0; k < in.size; ++k) names.push_back(in.name + "[" + std::to_string(k) + "]");
    }
  }
  return names;
}

namespace augment_config_detail {

// The augment entry's key whose value differs from the trained network of
// the file ("" when the shapes agree): what a replay config changed.
std::string changed_key(const AugmentBlueprint& bp, const NamedNetwork& file) {
  const nn::Mlp &want = bp.network, &got = file.network;
  if (got.input_dim() != want.input_dim() ||
      (!file.input_names.empty() && file.input_names != augment_network_input_names(bp)))
    return "inputs";
  if (got.num_layers() != want.num_layers()) return "hidden";
  for (nn::Index l = 0; l + 1 < want.num_layers(); ++l)
    if (got.layer_output_dim(l) != want.layer_output_dim(l)) return "hidden";
  for (nn::Index l = 0; l + 1 < want.num_layers(); ++l)
    if (got.activation(l) != want.activation(l)) return "activation";
  if (got.activation(want.num_layers() - 1) != want.activation(want.num_layers() - 1)) return "output_activation";
  return "";
}

void check_trained_shape(const AugmentBlueprint& bp, const NamedNetwork& file, const std::string& path) {
  NetworkExpectations expect;
  expect.inputs = bp.network.input_dim();
  expect.outputs = bp.network.output_dim();
  expect.input_names = augment_network_input_names(bp);
  check_network(file, expect, path);
  const nn::Mlp& want = bp.network;
  const nn::Mlp& got = file.network;
  const std::string object = path + ":/networks/" + bp.name;
  if (got.num_layers() != want.num_layers())
    throw DataError(object + ": expected " + std::to_string(want.num_layers()) + " layers (" + want.describe() +
                    "), got " + std::to_string(got.num_layers()) + " (" + got.describe() + ")");
  for (nn::Index l = 0; l < want.num_layers(); ++l) {
    const std::string layer = object + "/layer" + std::to_string(l);
    if (got.layer_output_dim(l) != want.layer_output_dim(l) || got.layer_input_dim(l) != want.layer_input_dim(l))
      throw DataError(layer + "/weight: expected shape (" + std::to_string(want.layer_output_dim(l)) + ", " +
                      std::to_string(want.layer_input_dim(l)) + "), got (" + std::to_string(got.layer_output_dim(l)) +
                      ", " + std::to_string(got.layer_input_dim(l)) + ")");
    if (got.activation(l) != want.activation(l))
      throw DataError(layer + ": attribute activation: expected " + nn::activation_name(want.activation(l)) +
                      ", got " + nn::activation_name(got.activation(l)));
  }
}

}  // namespace augment_config_detail

void load_augment_weights(AugmentBlueprint& bp, const std::string& path, const Config* entry) {
  using namespace augment_config_detail;
  NamedNetwork file = read_network(path, bp.name);
  try {
    check_trained_shape(bp, file, path);
  } catch (const DataError& e) {
    // A trained network is replayed as trained: name the config key that
    // asks for another shape (the file is what was trained).
    const std::string key = entry ? changed_key(bp, file) : "";
    if (key.empty()) throw;
    throw DataError(std::string(e.what()) + " (a trained network is replayed as trained: key '" +
                    (entry->prefix().empty() ? "" : entry->prefix() + ".") + key + "' at " + entry->where(key) +
                    " differs from the file)");
  }
  const nn::Mlp& got = file.network;
  // A trained network is replayed as trained: an output scale in the config
  // that differs from the file's would silently change the model (#38).
  if (entry && entry->has("output_scale")) {
    const Eigen::VectorXd scale = read_sized_vector(*entry, "output_scale", got.output_dim(), true);
    if (scale != got.output_scale())
      entry->fail("output_scale", "the trained network in " + path + " has output scale " +
                                      scale_text(got.output_scale()) + ", the config asks for " + scale_text(scale) +
                                      ": a trained model is replayed as trained (remove the key, or retrain)");
  }
  bp.network = std::move(file.network);
  bp.normalize_from_data = false;
  if (file.zero_init_outputs) bp.zero_init_outputs = *file.zero_init_outputs;
}

void load_augment_weights(std::vector<AugmentBlueprint>& blueprints, const std::string& path, const Config* root) {
  std::vector<Config> entries;
  if (root && root->has("augment") && root->is_list("augment")) entries = root->list("augment");
  for (std::size_t i = 0; i < blueprints.size(); ++i)
    load_augment_weights(blueprints[i], path, i < entries.size() ? &entries[i] : nullptr);
}

void write_augment_weights(const std::string& path, const std::vector<AugmentBlueprint>& blueprints) {
  std::vector<NamedNetwork> nets;
  for (const AugmentBlueprint& bp : blueprints)
    nets.push_back({bp.name, bp.network, augment_network_input_names(bp), {}, bp.zero_init_outputs});
  write_networks(path, nets, {"hybrid", std::nullopt});
}

AugmentBlueprint read_augment_blueprint(const Config& entry, const Model<double>& model,
                                        const ContactSettings* contact, int index) {
  entry.check_known_keys({"name", "site", "mode", "inputs", "hidden", "activation", "output_activation", "init",
                          "seed", "output_scale", "input_mean", "input_std", "weights", "zero_init_outputs"});
  AugmentBlueprint bp;
  bp.name = entry.get<std::string>("name");
  if (!is_plain_name(bp.name))
    entry.fail("name", "expected a non-empty name without '/' (it names the network in weight files)");
  bp.site = read_augment_site(entry, "site", model, contact);
  const std::string mode = entry.get_choice("mode", augment_mode_names(), "residual");
  bp.mode = mode == "scale" ? AugmentMode::kScale : mode == "replace" ? AugmentMode::kReplace : AugmentMode::kResidual;
  {
    const std::string problem = site_problem(bp.site, bp.mode, model);
    if (!problem.empty()) entry.fail(entry.has("mode") && bp.mode == AugmentMode::kScale ? "mode" : "site", problem);
  }

  // Inputs.
  if (!entry.has("inputs")) entry.fail("inputs", "missing required key: a list of input names");
  if (!entry.is_list("inputs")) entry.fail("inputs", "expected a list of input names");
  const bool contact_site = is_contact_site(bp.site.quantity);
  const std::vector<Config> inputs = entry.list("inputs");
  if (inputs.empty()) entry.fail("inputs", "expected at least one input");
  for (const Config& item : inputs) {
    const std::string name = item.get<std::string>("");
    const auto in = find_augment_input(name, model, contact_site);
    if (!in) item.fail("", unknown_input_message(name, model, contact_site));
    for (const AugmentInput& prev : bp.inputs)
      if (prev.name == name) item.fail("", "input '" + name + "' is listed twice");
    bp.inputs.push_back(*in);
  }
  const int n_in = total_input_size(bp.inputs);
  const int n_out = site_output_dim(bp.site, model);

  // Architecture.
  std::vector<nn::Index> hidden = {16, 16};
  if (entry.has("hidden")) {
    if (!entry.is_list("hidden")) entry.fail("hidden", "expected a list of layer widths, e.g. [16, 16]");
    hidden.clear();
    for (const Config& w : entry.list("hidden")) {
      const long long width = w.get<long long>("");
      if (width < 1 || width > 4096) w.fail("", "a layer width must be in [1, 4096], got " + std::to_string(width));
      hidden.push_back(static_cast<nn::Index>(width));
    }
  }
  const nn::Activation act = nn::parse_activation(entry.get_choice("activation", nn::activation_names(), "tanh"));
  const nn::Activation out_act =
      nn::parse_activation(entry.get_choice("output_activation", nn::activation_names(), "identity"));
  const nn::Init init = read_network_init(entry);
  const long long seed = entry.get_int_in_range("seed", index, 0, std::numeric_limits<long long>::max());
  bp.network = nn::Mlp(n_in, hidden, n_out, act, out_act);
  std::mt19937_64 engine(static_cast<std::uint64_t>(seed));
  bp.network.initialize(init, engine);
  // The output layer at zero by default where y = 0 is the analytical model
  // (residual a + y, scale a (1 + y)) and the output activation keeps 0 at
  // 0: the hybrid then starts exactly at the analytical model, and training
  // can only improve on it (zero-initialized residual branches: Goyal et al.
  // 2017, "Fixup", Zhang et al. 2019).
  const bool zero_keeps_model = bp.mode != AugmentMode::kReplace && nn::activate<double>(out_act, 0.0) == 0.0;
  bp.zero_init_outputs = entry.get_or<bool>("zero_init_outputs", zero_keeps_model);
  if (bp.zero_init_outputs) {
    const nn::Index last = bp.network.num_layers() - 1;
    const std::vector<double> zeros(static_cast<size_t>(bp.network.layer_output_dim(last) * (bp.network.layer_input_dim(last) + 1)), 0.0);
    bp.network.set_layer(last, zeros.data(), zeros.data());
  }

  if (entry.has("weights")) {
    for (const char* key : {"input_mean", "input_std"})
      if (entry.has(key))
        entry.fail(key, "the input normalization comes from the weights file '" + entry.get<std::string>("weights") +
                            "'; remove it here");
    load_augment_weights(bp, entry.path("weights"), &entry);
  } else if (entry.has("input_mean") || entry.has("input_std")) {
    const Eigen::VectorXd mean =
        entry.has("input_mean") ? read_sized_vector(entry, "input_mean", n_in, false) : Eigen::VectorXd::Zero(n_in);
    const Eigen::VectorXd std =
        entry.has("input_std") ? read_sized_vector(entry, "input_std", n_in, false) : Eigen::VectorXd::Ones(n_in);
    for (int i = 0; i < n_in; ++i)
      if (!(std[i] > 0)) entry.fail("input_std", "every entry must be > 0, entry " + std::to_string(i) + " is " +
                                                     std::to_string(std[i]));
    bp.network.set_input_normalization(mean, std);
  } else {
    bp.normalize_from_data = true;
  }
  if (entry.has("output_scale") && !entry.has("weights")) {
    const Eigen::VectorXd scale = read_sized_vector(entry, "output_scale", n_out, true);
    bp.network.set_output_scaling(scale, bp.network.output_offset());
  }
  check_blueprint(bp, model);  // consistent by construction; a failure here is a bug
  return bp;
}

std::vector<AugmentBlueprint> read_augment_section(const Config& root, const Model<double>& model,
                                                   const ContactSettings* contact) {
  std::vector<AugmentBlueprint> out;
  if (!root.has("augment")) return out;
  if (!root.is_list("augment")) root.fail("augment", "expected a list of augmentation blueprints");
  const std::vector<Config> entries = root.list("augment");
  for (std::size_t i = 0; i < entries.size(); ++i) {
    AugmentBlueprint bp = read_augment_blueprint(entries[i], model, contact, static_cast<int>(i));
    for (const AugmentBlueprint& prev : out)
      if (prev.name == bp.name) entries[i].fail("name", "augmentation '" + bp.name + "' is declared twice");
    out.push_back(std::move(bp));
  }
  return out;
}

std::string augment_section_yaml(const std::vector<AugmentBlueprint>& blueprints, const Model<double>& model,
                                 const std::string& comment) {
  YAML::Emitter out;
  out.SetDoublePrecision(17);  // round trip
  if (!comment.empty()) out << YAML::Comment(comment) << YAML::Newline;
  out << YAML::BeginMap << YAML::Key << "augment" << YAML::Value;
  if (blueprints.empty()) out << YAML::Flow;
  out << YAML::BeginSeq;
  for (const AugmentBlueprint& bp : blueprints) {
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << bp.name;
    const AugmentSite& site = bp.site;
    out << YAML::Key << "site" << YAML::Value << YAML::Flow << YAML::BeginMap;
    if (is_joint_site(site.quantity)) {
      out << YAML::Key << "joint" << YAML::Value << model.joints[site.joint].name;
    } else if (is_link_site(site.quantity)) {
      out << YAML::Key << "link" << YAML::Value << model.bodies[site.body].name;
    } else {
      out << YAML::Key << "contact" << YAML::Value << (site.body < 0 ? std::string("all") : model.bodies[site.body].name);
    }
    out << YAML::Key << "quantity" << YAML::Value << site_quantity_name(site.quantity);
    if (site_has_frame(site.quantity))
      out << YAML::Key << "frame" << YAML::Value << (site.frame == AugmentFrame::kBody ? "body" : "world");
    if (is_drag_site(site.quantity))
      out << YAML::Key << "drag" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "linear"
          << YAML::Value << site.drag.linear << YAML::Key << "normal" << YAML::Value << site.drag.normal
          << YAML::Key << "quadratic" << YAML::Value << site.drag.quadratic << YAML::EndMap;
    out << YAML::EndMap;
    out << YAML::Key << "mode" << YAML::Value << augment_mode_name(bp.mode);
    out << YAML::Key << "inputs" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (const AugmentInput& in : bp.inputs) out << in.name;
    out << YAML::EndSeq;
    out << YAML::Key << "hidden" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (nn::Index l = 0; l + 1 < bp.network.num_layers(); ++l) out << bp.network.layer_output_dim(l);
    out << YAML::EndSeq;
    if (bp.network.num_layers() > 1)
      out << YAML::Key << "activation" << YAML::Value << nn::activation_name(bp.network.activation(0));
    const auto put = [&](const char* key, const Eigen::VectorXd& v, double identity) {
      if ((v.array() == identity).all()) return;
      out << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginSeq;
      for (Eigen::Index i = 0; i < v.size(); ++i) out << v[i];
      out << YAML::EndSeq;
    };
    put("input_mean", bp.network.input_mean(), 0.0);
    put("input_std", bp.network.input_std(), 1.0);
    put("output_scale", bp.network.output_scale(), 1.0);
    out << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace neuralsim
