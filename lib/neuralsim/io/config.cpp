#include "neuralsim/io/config.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <sstream>
#include <utility>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/core/names.hpp"
#include "neuralsim/io/input_file.hpp"

namespace neuralsim {

namespace fs = std::filesystem;

// Shared by a Config and all sub-configs taken from it, so a sub-config can
// still say which file it came from and which keys were overridden.
struct Config::Document {
  std::string file;
  YAML::Node root;
  std::vector<std::string> overridden;  // full dotted key paths set by --set
  // with_entries_of: a top-level key whose value lives elsewhere in the
  // document, and that place's key path.
  std::vector<std::pair<std::string, std::string>> moved;
};

namespace {

std::vector<std::string> split_key(const std::string& key) {
  std::vector<std::string> parts;
  if (key.empty()) return parts;
  std::string::size_type start = 0;
  while (true) {
    const auto dot = key.find('.', start);
    parts.push_back(key.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (parts.back().empty()) throw ConfigError("invalid key path '" + key + "' (empty component)");
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return parts;
}

std::string join_key(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  return a + "." + b;
}

// A path segment used as a list index: digits only, so "01x" is no index.
bool parse_index(const std::string& s, std::size_t& index) {
  const auto is_digit = [](unsigned char c) { return std::isdigit(c) != 0; };
  if (s.empty() || s.size() > 9 || !std::all_of(s.begin(), s.end(), is_digit)) return false;
  index = static_cast<std::size_t>(std::stoul(s));
  return true;
}

// YAML 1.2 core booleans plus the YAML 1.1 words yaml-cpp also accepts,
// because configs written for other tools use them.
bool parse_bool(const std::string& s, bool& value) {
  static const char* const kTrue[] = {"true", "True", "TRUE", "yes", "Yes",
                                      "YES",  "on",   "On",   "ON"};
  static const char* const kFalse[] = {"false", "False", "FALSE", "no", "No",
                                       "NO",    "off",   "Off",   "OFF"};
  for (const char* t : kTrue)
    if (s == t) return value = true, true;
  for (const char* f : kFalse)
    if (s == f) return value = false, true;
  return false;
}

bool parse_integer(const std::string& s, long long& value) {
  // strtoll alone would accept leading blanks and hex via base 0; be strict.
  if (s.empty() || s.find_first_not_of("+-0123456789") != std::string::npos) return false;
  errno = 0;
  char* end = nullptr;
  value = std::strtoll(s.c_str(), &end, 10);
  return errno == 0 && end == s.c_str() + s.size();
}

bool parse_double(const std::string& s, double& value) {
  // YAML spellings of the special values; strtod's "inf"/"nan" are not YAML.
  static const std::map<std::string, double> kSpecial = {
      {".inf", HUGE_VAL},  {".Inf", HUGE_VAL},  {".INF", HUGE_VAL},  {"+.inf", HUGE_VAL},
      {"-.inf", -HUGE_VAL}, {"-.Inf", -HUGE_VAL}, {"-.INF", -HUGE_VAL},
      {".nan", std::numeric_limits<double>::quiet_NaN()},
      {".NaN", std::numeric_limits<double>::quiet_NaN()},
      {".NAN", std::numeric_limits<double>::quiet_NaN()}};
  if (auto it = kSpecial.find(s); it != kSpecial.end()) return value = it->second, true;
  if (s.empty() || s.find_first_not_of("+-.0123456789eE") != std::string::npos) return false;
  errno = 0;
  char* end = nullptr;
  value = std::strtod(s.c_str(), &end);
  return errno != ERANGE && end == s.c_str() + s.size();
}

// What a node holds, for "expected X, got Y" messages.
std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: return "a map";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Scalar: {
      std::string s = node.Scalar();
      if (s.size() > 40) s = s.substr(0, 37) + "...";
      return "'" + s + "'";  // escaped with the whole message (Error)
    }
    default: return "nothing (empty value)";
  }
}

// Child of `parent` by map key or list index; an undefined node when absent.
// Only const access is used: yaml-cpp's non-const operator[] inserts keys.
YAML::Node child(const YAML::Node& parent, const std::string& segment) {
  std::size_t index = 0;
  if (parent.IsMap()) {
    const YAML::Node& cparent = parent;
    YAML::Node c = cparent[segment];
    if (c.IsDefined()) return c;
  } else if (parent.IsSequence() && parse_index(segment, index) && index < parent.size()) {
    const YAML::Node& cparent = parent;
    return cparent[index];
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

std::string join_list(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string format_short(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

std::string mark_suffix(const YAML::Mark& mark) {
  return ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

std::string read_config_file(const std::string& path) {
  // Bounded, and a FIFO or a device (/dev/zero) is refused before it is opened.
  return read_input_file(path, "config file", InputError::kConfig, Config::kMaxConfigBytes);
}

// yaml-cpp keeps both entries of a repeated key; the later one would be
// silently ignored by lookups, so treat it as the mistake it usually is.
void check_duplicate_keys(const YAML::Node& node, const std::string& prefix, const std::string& file,
                          long long& budget) {
  // Every visit counts: aliases share nodes, so a small document can expand
  // exponentially (a "billion laughs" bomb); the budget bounds the work.
  if (--budget < 0)
    throw ConfigError(file + ": the YAML document expands to more than " + std::to_string(Config::kMaxConfigNodes) +
                      " nodes (anchors and aliases nested too deep?)");
  if (node.IsSequence()) {
    for (std::size_t i = 0; i < node.size(); ++i)
      check_duplicate_keys(node[i], join_key(prefix, std::to_string(i)), file, budget);
    return;
  }
  if (!node.IsMap()) return;
  std::map<std::string, int> seen_line;
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string key = it->first.IsScalar() ? it->first.Scalar() : YAML::Dump(it->first);
    const int line = it->first.Mark().line + 1;
    auto [pos, inserted] = seen_line.emplace(key, line);
    if (!inserted)
      throw ConfigError(file + mark_suffix(it->first.Mark()) + ": duplicate key '" + join_key(prefix, key) +
                        "' (first defined at line " + std::to_string(pos->second) + ")");
    check_duplicate_keys(it->second, join_key(prefix, key), file, budget);
  }
}

struct Override {
  std::string text;  // as given, for messages
  std::vector<std::string> path;
  YAML::Node value;
};

Override parse_override(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw ConfigError("invalid --set '" + text + "': expected KEY=VALUE, e.g. sim.dt=0.002");
  Override o;
  o.text = text;
  try {
    o.path = split_key(text.substr(0, eq));
  } catch (const ConfigError&) {
    throw ConfigError("invalid --set '" + text + "': empty component in key path");
  }
  try {
    // An empty value parses to null, which reads as "unset" (defaults apply).
    o.value = YAML::Load(text.substr(eq + 1));
  } catch (const YAML::Exception& e) {
    throw ConfigError("invalid --set '" + text + "': value is not valid YAML: " + e.msg);
  }
  return o;
}

// Walks/creates the path of `o` below `root` and assigns the value.
void apply_override(YAML::Node root, const Override& o) {
  YAML::Node cur(root);  // shares identity with root; moved along with reset()
  for (std::size_t i = 0; i < o.path.size(); ++i) {
    const std::string& seg = o.path[i];
    const bool last = i + 1 == o.path.size();
    const std::string so_far = [&] {
      std::string k;
      for (std::size_t j = 0; j < i; ++j) k = join_key(k, o.path[j]);
      return k;
    }();
    if (cur.IsSequence()) {
      std::size_t index = 0;
      if (!parse_index(seg, index))
        throw ConfigError("invalid --set '" + o.text + "': '" + so_far +
                          "' is a list, so '" + seg + "' must be an index");
      if (index > cur.size())
        throw ConfigError("invalid --set '" + o.text + "': index " + seg + " is out of range ('" +
                          so_far + "' has " + std::to_string(cur.size()) + " elements)");
      // index == size appends, so lists can be extended from the command line.
      if (index == cur.size()) cur.push_back(last ? o.value : YAML::Node(YAML::NodeType::Map));
      else if (last) cur[index] = o.value;
      if (last) return;
      YAML::Node next = cur[index];
      cur.reset(next);
    } else if (cur.IsMap() || cur.IsNull()) {
      if (last) {
        cur[seg] = o.value;
        return;
      }
      const YAML::Node& ccur = cur;
      if (!ccur[seg].IsDefined() || ccur[seg].IsNull()) cur[seg] = YAML::Node(YAML::NodeType::Map);
      YAML::Node next = cur[seg];
      cur.reset(next);
    } else {
      throw ConfigError("invalid --set '" + o.text + "': '" + so_far +
                        "' is a scalar, not a map or list");
    }
  }
  // An empty path cannot happen: parse_override rejects "=value".
}

nlohmann::json scalar_to_json(const YAML::Node& node) {
  const std::string& s = node.Scalar();
  // Only plain (unquoted, untagged) scalars are typed; "123" stays a string.
  if (node.Tag() != "?") return s;
  bool b = false;
  long long i = 0;
  double d = 0;
  if (parse_bool(s, b)) return b;
  if (parse_integer(s, i)) return i;
  // JSON has no inf/nan, so those keep their YAML spelling.
  if (parse_double(s, d)) return std::isfinite(d) ? nlohmann::json(d) : nlohmann::json(s);
  if (s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  return s;
}

nlohmann::json node_to_json(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      nlohmann::json obj = nlohmann::json::object();
      for (auto it = node.begin(); it != node.end(); ++it)
        obj[it->first.IsScalar() ? it->first.Scalar() : YAML::Dump(it->first)] =
            node_to_json(it->second);
      return obj;
    }
    case YAML::NodeType::Sequence: {
      nlohmann::json arr = nlohmann::json::array();
      for (const auto& e : node) arr.push_back(node_to_json(e));
      return arr;
    }
    case YAML::NodeType::Scalar: return scalar_to_json(node);
    default: return nullptr;
  }
}

}  // namespace

Config::Config(std::shared_ptr<const Document> doc, YAML::Node node, std::string prefix)
    : doc_(std::move(doc)), node_(std::move(node)), prefix_(std::move(prefix)) {}

Config Config::load(const std::string& path, const std::vector<std::string>& set_overrides) {
  return parse(read_config_file(path), path, set_overrides);
}

Config Config::parse(const std::string& yaml_text, const std::string& file,
                     const std::vector<std::string>& set_overrides) {
  auto doc = std::make_shared<Document>();
  doc->file = file;
  try {
    doc->root = YAML::Load(yaml_text);
  } catch (const YAML::ParserException& e) {
    throw ConfigError(file + mark_suffix(e.mark) + ": " + e.msg);
  } catch (const YAML::Exception& e) {
    throw ConfigError(file + ": " + e.msg);
  }
  if (doc->root.IsNull() || !doc->root.IsDefined()) doc->root = YAML::Node(YAML::NodeType::Map);
  if (!doc->root.IsMap())
    throw ConfigError(file + mark_suffix(doc->root.Mark()) +
                      ": the top level of a config must be a map of keys, got " +
                      describe(doc->root));
  long long budget = kMaxConfigNodes;
  check_duplicate_keys(doc->root, "", file, budget);
  for (const auto& text : set_overrides) {
    const Override o = parse_override(text);
    apply_override(doc->root, o);
    std::string full;
    for (const auto& seg : o.path) full = join_key(full, seg);
    doc->overridden.push_back(full);
  }
  if (!set_overrides.empty()) {
    budget = kMaxConfigNodes;
    check_duplicate_keys(doc->root, "", file, budget);
  }
  YAML::Node root = doc->root;
  return Config(std::move(doc), root, "");
}

const std::string& Config::file() const { return doc_->file; }

std::string Config::full_key(const std::string& key) const {
  if (prefix_.empty() && !doc_->moved.empty()) {
    const std::string first = key.substr(0, key.find('.'));
    for (const auto& [top, path] : doc_->moved)
      if (top == first) return path + key.substr(first.size());
  }
  return join_key(prefix_, key);
}

Config Config::with_entries_of(const Config& entry, const std::vector<std::string>& merged) const {
  if (!prefix_.empty() || entry.doc_ != doc_ || !entry.node_.IsMap())
    throw ConfigError(doc_->file + ": with_entries_of: expected the top level and a map of the same document");
  auto doc = std::make_shared<Document>(*doc_);
  YAML::Node root(YAML::NodeType::Map);
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    const std::string key = it->first.as<std::string>();
    const bool replaced = entry.node_[key].IsDefined();
    const bool merge = std::find(merged.begin(), merged.end(), key) != merged.end();
    if (!replaced) root[key] = it->second;
    else if (merge && it->second.IsMap() && entry.node_[key].IsMap()) {
      YAML::Node combined(YAML::NodeType::Map);
      for (auto m = it->second.begin(); m != it->second.end(); ++m) combined[m->first.as<std::string>()] = m->second;
      for (auto m = entry.node_[key].begin(); m != entry.node_[key].end(); ++m)
        combined[m->first.as<std::string>()] = m->second;
      root[key] = combined;
    }
  }
  for (auto it = entry.node_.begin(); it != entry.node_.end(); ++it) {
    const std::string key = it->first.as<std::string>();
    if (static_cast<const YAML::Node&>(root)[key].IsDefined()) continue;
    root[key] = it->second;
    doc->moved.emplace_back(key, join_key(entry.prefix_, key));
  }
  doc->root = root;
  return Config(std::move(doc), root, "");
}

bool Config::is_overridden(const std::string& full) const {
  for (const auto& o : doc_->overridden)
    if (full == o || (full.size() > o.size() && full.compare(0, o.size(), o) == 0 &&
                      full[o.size()] == '.'))
      return true;
  return false;
}

std::string Config::location(const std::string& full, const YAML::Mark& mark) const {
  // Nodes created by --set have no mark; replaced values carry a mark into
  // the override text, which is why overridden keys are tracked by path.
  if (is_overridden(full) || mark.is_null()) return doc_->file + " (set by --set)";
  return doc_->file + mark_suffix(mark);
}

std::string Config::where(const std::string& key) const {
  const std::string full = full_key(key);
  if (is_overridden(full)) return doc_->file + " (set by --set)";
  const YAML::Node node = find(key);
  if (!node.IsDefined()) return doc_->file;
  if (node.Mark().is_null()) return doc_->file + " (set by --set)";
  return doc_->file + ":" + std::to_string(node.Mark().line + 1);
}

std::string Config::named_by(const std::string& key) const {
  return "named by " + where(key) + ", key '" + full_key(key) + "'";
}

YAML::Node Config::find(const std::string& key) const {
  YAML::Node cur(node_);
  for (const auto& seg : split_key(key)) {
    YAML::Node next = child(cur, seg);
    if (!next.IsDefined()) return next;
    cur.reset(next);  // rebinds; plain assignment would overwrite the node
  }
  return cur;
}

YAML::Node Config::require(const std::string& key) const {
  YAML::Node node = find(key);
  if (!node.IsDefined())
    throw ConfigError(doc_->file + ": missing required key '" + full_key(key) + "'");
  if (node.IsNull())
    throw ConfigError(location(full_key(key), node.Mark()) + ": key '" + full_key(key) +
                      "' is empty, but a value is required");
  return node;
}

void Config::fail_type(const std::string& key, const YAML::Node& node,
                       const std::string& expected) const {
  const std::string full = full_key(key);
  throw ConfigError(location(full, node.Mark()) + ": key '" + full + "': expected " + expected +
                    ", got " + describe(node));
}

template <>
double Config::convert<double>(const std::string& key, const YAML::Node& node) const {
  double v = 0;
  if (!node.IsScalar() || !parse_double(node.Scalar(), v)) fail_type(key, node, "a number");
  if (!std::isfinite(v)) fail_type(key, node, "a finite number");
  return v;
}

template <>
long long Config::convert<long long>(const std::string& key, const YAML::Node& node) const {
  long long v = 0;
  if (!node.IsScalar() || !parse_integer(node.Scalar(), v)) fail_type(key, node, "an integer");
  return v;
}

template <>
int Config::convert<int>(const std::string& key, const YAML::Node& node) const {
  const long long v = convert<long long>(key, node);
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
    fail_type(key, node, "an integer that fits in 32 bits");
  return static_cast<int>(v);
}

template <>
bool Config::convert<bool>(const std::string& key, const YAML::Node& node) const {
  bool v = false;
  if (!node.IsScalar() || !parse_bool(node.Scalar(), v)) fail_type(key, node, "true or false");
  return v;
}

template <>
std::string Config::convert<std::string>(const std::string& key, const YAML::Node& node) const {
  if (!node.IsScalar()) fail_type(key, node, "a string");
  return node.Scalar();
}

template <>
std::vector<double> Config::convert<std::vector<double>>(const std::string& key,
                                                         const YAML::Node& node) const {
  if (!node.IsSequence()) fail_type(key, node, "a list of numbers");
  std::vector<double> out;
  for (std::size_t i = 0; i < node.size(); ++i)
    out.push_back(convert<double>(join_key(key, std::to_string(i)), node[i]));
  return out;
}

template <>
std::vector<std::string> Config::convert<std::vector<std::string>>(const std::string& key,
                                                                   const YAML::Node& node) const {
  if (!node.IsSequence()) fail_type(key, node, "a list of strings");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < node.size(); ++i)
    out.push_back(convert<std::string>(join_key(key, std::to_string(i)), node[i]));
  return out;
}

template <>
Eigen::VectorXd Config::convert<Eigen::VectorXd>(const std::string& key,
                                                 const YAML::Node& node) const {
  const std::vector<double> v = convert<std::vector<double>>(key, node);
  return Eigen::Map<const Eigen::VectorXd>(v.data(), static_cast<Eigen::Index>(v.size()));
}

template <class T>
T Config::get(const std::string& key) const {
  return convert<T>(key, require(key));
}

template <class T>
T Config::get_or(const std::string& key, const T& fallback) const {
  const YAML::Node node = find(key);
  if (!node.IsDefined() || node.IsNull()) return fallback;
  return convert<T>(key, node);
}

bool Config::has(const std::string& key) const {
  const YAML::Node node = find(key);
  return node.IsDefined() && !node.IsNull();
}

Config Config::at(const std::string& key) const {
  const YAML::Node node = require(key);
  if (!node.IsMap()) fail_type(key, node, "a map");
  return Config(doc_, node, full_key(key));
}

std::vector<Config> Config::list(const std::string& key) const {
  const YAML::Node node = require(key);
  if (!node.IsSequence()) fail_type(key, node, "a list");
  std::vector<Config> out;
  for (std::size_t i = 0; i < node.size(); ++i)
    out.push_back(Config(doc_, node[i], full_key(join_key(key, std::to_string(i)))));
  return out;
}

std::vector<std::string> Config::keys() const {
  if (!node_.IsMap()) fail_type("", node_, "a map");
  std::vector<std::string> out;
  for (auto it = node_.begin(); it != node_.end(); ++it) out.push_back(it->first.Scalar());
  return out;
}

double Config::get_limit(const std::string& key, double fallback) const {
  const YAML::Node node = find(key);
  if (!node.IsDefined() || node.IsNull()) return fallback;
  double v = 0;
  if (!node.IsScalar() || !parse_double(node.Scalar(), v) || std::isnan(v))
    fail_type(key, node, "a number or .inf");
  return v;
}

std::string Config::get_choice(const std::string& key, const std::vector<std::string>& choices,
                               const std::string& fallback) const {
  const std::string v = get_or<std::string>(key, fallback);
  if (std::find(choices.begin(), choices.end(), v) == choices.end()) fail_type(key, find(key), "one of " + join_list(choices));
  return v;
}

bool Config::is_map(const std::string& key) const { return find(key).IsMap(); }
bool Config::is_list(const std::string& key) const { return find(key).IsSequence(); }

std::vector<std::pair<std::string, Config>> Config::items() const {
  if (!node_.IsMap()) fail_type("", node_, "a map");
  std::vector<std::pair<std::string, Config>> out;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    const std::string key = it->first.Scalar();
    out.emplace_back(key, Config(doc_, it->second, full_key(key)));
  }
  return out;
}

void Config::fail(const std::string& key, const std::string& message) const {
  const std::string full = full_key(key);
  const YAML::Node node = find(key);
  const std::string where = node.IsDefined() ? location(full, node.Mark())
                            : is_overridden(full) ? doc_->file + " (set by --set)"
                                                  : location(prefix_, node_.Mark());
  throw ConfigError(where + ": key '" + full + "': " + message);
}

double Config::get_in_range(const std::string& key, double fallback, double lo, double hi) const {
  check_range(key, lo, hi);
  return get_or<double>(key, fallback);
}

long long Config::get_int_in_range(const std::string& key, long long fallback, long long lo, long long hi) const {
  const long long v = get_or<long long>(key, fallback);
  if (has(key) && (v < lo || v > hi))
    fail(key, std::to_string(v) + " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return v;
}

void Config::check_known_keys(const std::vector<std::string>& allowed) const {
  if (!node_.IsMap()) fail_type("", node_, "a map");
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    const std::string key = it->first.Scalar();
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    std::string hint;
    // Two edits catch a swapped pair of letters ("stpes") in all but tiny keys.
    for (const auto& a : allowed)
      if (edit_distance(key, a) <= (a.size() <= 3 ? 1u : 2u)) {
        hint = "; did you mean '" + a + "'?";
        break;
      }
    const std::string full = full_key(key);
    throw ConfigError(location(full, it->first.Mark()) + ": unknown key '" + full + "'" + hint +
                      " (allowed keys: " + join_list(allowed) + ")");
  }
}

void Config::check_range(const std::string& key, double lo, double hi) const {
  if (!has(key)) return;
  const double v = get_limit(key, 0.0);
  if (v >= lo && v <= hi) return;  // written so that NaN fails
  const std::string full = full_key(key);
  throw ConfigError(location(full, find(key).Mark()) + ": key '" + full + "': " +
                    format_short(v) + " is out of range [" + format_short(lo) + ", " +
                    format_short(hi) + "]");
}

void Config::check_one_of(const std::string& key, const std::vector<std::string>& choices) const {
  if (!has(key)) return;
  const std::string v = get<std::string>(key);
  if (std::find(choices.begin(), choices.end(), v) != choices.end()) return;
  fail_type(key, find(key), "one of " + join_list(choices));
}

std::string Config::path(const std::string& key) const {
  const std::string value = get<std::string>(key);
  if (value.empty()) fail_type(key, find(key), "a path");
  const fs::path p(value);
  if (p.is_absolute() || is_overridden(full_key(key))) return value;
  return (fs::path(doc_->file).parent_path() / p).lexically_normal().string();
}

nlohmann::json Config::to_json() const { return node_to_json(node_); }

template double Config::get<double>(const std::string&) const;
template int Config::get<int>(const std::string&) const;
template long long Config::get<long long>(const std::string&) const;
template bool Config::get<bool>(const std::string&) const;
template std::string Config::get<std::string>(const std::string&) const;
template std::vector<double> Config::get<std::vector<double>>(const std::string&) const;
template std::vector<std::string> Config::get<std::vector<std::string>>(const std::string&) const;
template Eigen::VectorXd Config::get<Eigen::VectorXd>(const std::string&) const;

template double Config::get_or<double>(const std::string&, const double&) const;
template int Config::get_or<int>(const std::string&, const int&) const;
template long long Config::get_or<long long>(const std::string&, const long long&) const;
template bool Config::get_or<bool>(const std::string&, const bool&) const;
template std::string Config::get_or<std::string>(const std::string&, const std::string&) const;
template std::vector<double> Config::get_or<std::vector<double>>(const std::string&,
                                                                 const std::vector<double>&) const;
template std::vector<std::string> Config::get_or<std::vector<std::string>>(
    const std::string&, const std::vector<std::string>&) const;
template Eigen::VectorXd Config::get_or<Eigen::VectorXd>(const std::string&,
                                                         const Eigen::VectorXd&) const;

}  // namespace neuralsim
