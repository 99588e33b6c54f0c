// Run configuration: a YAML file plus `--set key.path=value` overrides.
//
// Every app reads its parameters through Config so that a bad input always
// produces the same kind of message: the file, the dotted key path and the
// line, e.g.
//   config.yaml:12:7: key 'sim.dt': expected a number, got 'abc'
//   config.yaml: missing required key 'sim.dt'
//   config.yaml (set by --set): key 'sim.dt': expected a number, got 'abc'
// All errors are ConfigError (exit code 2).
//
// Input is hostile until checked: a config file is read up to
// kMaxConfigBytes, a document may expand (YAML aliases included) to at most
// kMaxConfigNodes nodes, and every number is finite unless the key is read
// with get_limit(), which also accepts ±.inf (bounds, budgets).
#pragma once

#include <Eigen/Core>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>
#include <yaml-cpp/yaml.h>

namespace neuralsim {

class Config {
 public:
  static constexpr long long kMaxConfigBytes = 16LL << 20;  // 16 MiB
  static constexpr long long kMaxConfigNodes = 1000000;

  // Parses the YAML file at `path` (its top level must be a map) and applies
  // overrides "a.b.c=value" in order. Values are parsed as YAML, so numbers,
  // lists ("[0.1,0.2]") and plain strings all work; numeric path segments
  // index into lists ("controls.0.amplitude=2"); missing map keys are created.
  static Config load(const std::string& path,
                     const std::vector<std::string>& set_overrides = {});

  // Same as load() but from text; `file` is only used in messages and for
  // relative path resolution. Useful for tests and embedded defaults.
  static Config parse(const std::string& yaml_text, const std::string& file,
                      const std::vector<std::string>& set_overrides = {});

  // Typed access by dotted key path (relative to this sub-config; "" is
  // this node itself). Supported T: double, int, long long, bool,
  // std::string, std::vector<double>, std::vector<std::string>,
  // Eigen::VectorXd. Numbers must be finite. An absent key or an empty
  // value (`dt:` / `dt: ~`) is "missing".
  template <class T>
  T get(const std::string& key) const;

  // Like get(), but returns `fallback` when the key is missing or empty.
  // A present value of the wrong type is still an error: a typo in a value
  // must not silently turn into the default.
  template <class T>
  T get_or(const std::string& key, const T& fallback) const;
  // So that get_or("name", "default") yields a std::string, not a char array.
  std::string get_or(const std::string& key, const char* fallback) const {
    return get_or<std::string>(key, std::string(fallback));
  }

  // A number that may also be ±.inf (a bound, a budget), never NaN.
  double get_limit(const std::string& key, double fallback) const;

  // A string that must be one of `choices` (e.g. an integrator name); the
  // error lists them and says where the value came from.
  std::string get_choice(const std::string& key, const std::vector<std::string>& choices,
                         const std::string& fallback) const;

  // True when the key exists and has a non-empty value.
  bool has(const std::string& key) const;
  bool is_map(const std::string& key) const;
  bool is_list(const std::string& key) const;

  // The entries of this map in file order, each value as a sub-config
  // (keys may contain dots: they are not split).
  std::vector<std::pair<std::string, Config>> items() const;

  // Throws ConfigError "<where>: key '<full key>': <message>", with the
  // file, line and column of the key's value (or "set by --set").
  [[noreturn]] void fail(const std::string& key, const std::string& message) const;

  // The map at `key` as a sub-config whose messages use the full key path.
  Config at(const std::string& key) const;

  // The elements of the list at `key`; element i has key path "key.i".
  std::vector<Config> list(const std::string& key) const;

  // Keys present in this map, in file order.
  std::vector<std::string> keys() const;

  // Rejects keys of this map that are not in `allowed` (typos), naming the
  // bad key, its line, a close match if any and the allowed keys.
  void check_known_keys(const std::vector<std::string>& allowed) const;

  // Rejects a numeric value outside [lo, hi] (NaN included). A missing key
  // is not checked (use get() to require it).
  void check_range(const std::string& key, double lo, double hi) const;
  // get_or with a range check, the usual way to read a bounded number.
  double get_in_range(const std::string& key, double fallback, double lo, double hi) const;
  long long get_int_in_range(const std::string& key, long long fallback, long long lo, long long hi) const;

  // Rejects a string value that is not one of `choices` (e.g. integrator).
  void check_one_of(const std::string& key, const std::vector<std::string>& choices) const;

  // A path value resolved relative to the config file's directory, so configs
  // can refer to their models and data wherever they are run from. Absolute
  // paths are returned unchanged; a value set by --set is taken relative to
  // the working directory, like any other command-line path.
  std::string path(const std::string& key) const;

  // The whole config (after overrides) as JSON: plain scalars that look like
  // booleans / integers / floats become JSON bools / numbers; quoted scalars
  // stay strings.
  nlohmann::json to_json() const;

  const std::string& file() const;
  // A view of this top-level config in which the entries of `entry` (a map
  // of the same document, e.g. one element of a `configurations:` list)
  // take the place of the top-level keys of the same name; the maps named
  // in `merged` (e.g. "params") are combined instead, the entry's values
  // winning. Messages about a replaced key name its place in the entry
  // ("configurations.1.data.train"); merged entries keep their own lines.
  Config with_entries_of(const Config& entry, const std::vector<std::string>& merged) const;

  // Full dotted key path of this sub-config ("" at the top level).
  const std::string& prefix() const { return prefix_; }
  // "FILE:LINE" of the key's value, "FILE (set by --set)" for an overridden
  // key, or "FILE" when the key does not exist.
  std::string where(const std::string& key) const;
  // "named by FILE:LINE, key 'a.b'": who named a file (for the messages of
  // the file's own reader, which knows nothing of this config).
  std::string named_by(const std::string& key) const;

 private:
  struct Document;
  Config(std::shared_ptr<const Document> doc, YAML::Node node, std::string prefix);

  // Node at a relative dotted path; an invalid (undefined) node if absent.
  YAML::Node find(const std::string& key) const;
  // Node at `key`, or ConfigError "missing required key".
  YAML::Node require(const std::string& key) const;
  std::string full_key(const std::string& key) const;
  bool is_overridden(const std::string& full) const;
  // "FILE:LINE:COL" (or "FILE (set by --set)") for a node at `full` key.
  std::string location(const std::string& full, const YAML::Mark& mark) const;
  [[noreturn]] void fail_type(const std::string& key, const YAML::Node& node,
                              const std::string& expected) const;

  template <class T>
  T convert(const std::string& key, const YAML::Node& node) const;

  std::shared_ptr<const Document> doc_;
  YAML::Node node_;
  std::string prefix_;
};

extern template double Config::get<double>(const std::string&) const;
extern template int Config::get<int>(const std::string&) const;
extern template long long Config::get<long long>(const std::string&) const;
extern template bool Config::get<bool>(const std::string&) const;
extern template std::string Config::get<std::string>(const std::string&) const;
extern template std::vector<double> Config::get<std::vector<double>>(const std::string&) const;
extern template std::vector<std::string> Config::get<std::vector<std::string>>(
    const std::string&) const;
extern template Eigen::VectorXd Config::get<Eigen::VectorXd>(const std::string&) const;

extern template double Config::get_or<double>(const std::string&, const double&) const;
extern template int Config::get_or<int>(const std::string&, const int&) const;
extern template long long Config::get_or<long long>(const std::string&, const long long&) const;
extern template bool Config::get_or<bool>(const std::string&, const bool&) const;
extern template std::string Config::get_or<std::string>(const std::string&,
                                                        const std::string&) const;
extern template std::vector<double> Config::get_or<std::vector<double>>(
    const std::string&, const std::vector<double>&) const;
extern template std::vector<std::string> Config::get_or<std::vector<std::string>>(
    const std::string&, const std::vector<std::string>&) const;
extern template Eigen::VectorXd Config::get_or<Eigen::VectorXd>(const std::string&,
                                                                const Eigen::VectorXd&) const;

}  // namespace neuralsim
