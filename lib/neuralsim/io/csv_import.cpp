#include "neuralsim/io/csv_import.hpp"

#include <glob.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "neuralsim/io/errors.hpp"
#include "neuralsim/io/hdf5_trajectory.hpp"

namespace neuralsim {
namespace {

namespace fs = std::filesystem;

constexpr const char* kRoot = "csv_import";
const std::set<std::string> kAllowedKeys = {
    "files",       "delimiter", "header", "comment", "time", "time_scale",  "time_offset", "model",
    "joint_names", "q_names",   "q",      "qd",      "tau",  "resample_dt", "segment"};

// ---------------------------------------------------------------- description

// The key path of a top-level key, as shown in error messages.
std::string key_of(const std::string& name) { return std::string(kRoot) + "." + name; }

// The description being parsed, named in error messages.
struct Ctx {
  std::string source;  // YAML file (or caller-supplied name)
};

[[noreturn]] void config_error(const Ctx& ctx, const YAML::Mark& mark, const std::string& key,
                               const std::string& what) {
  std::string where = ctx.source;
  if (!mark.is_null()) {
    where += ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
  }
  throw ConfigError(where + ": key '" + key + "': " + what);
}

template <class T>
T scalar_as(const YAML::Node& node, const Ctx& ctx, const std::string& key, const char* expected) {
  if (node.IsScalar()) {
    try {
      return node.as<T>();
    } catch (const YAML::Exception&) {
      // Reported below with the key and line.
    }
  }
  config_error(ctx, node.Mark(), key,
               std::string("expected ") + expected + ", got '" + YAML::Dump(node) + "'");
}

std::vector<std::string> string_list(const YAML::Node& node, const Ctx& ctx,
                                     const std::string& key) {
  if (node.IsScalar()) return {node.as<std::string>()};
  if (!node.IsSequence()) config_error(ctx, node.Mark(), key, "expected a list of strings");
  std::vector<std::string> out;
  for (size_t i = 0; i < node.size(); ++i) {
    out.push_back(
        scalar_as<std::string>(node[i], ctx, key + "[" + std::to_string(i) + "]", "a string"));
  }
  return out;
}

// A column given by header name or by 0-based index.
struct ColumnRef {
  std::string name;
  std::string key;
  YAML::Mark mark;
};

struct Term {
  ColumnRef column;
  double coeff = 1.0;
};

// One generalized coordinate: offset + sum(coeff * column).
struct Coordinate {
  std::vector<Term> terms;
  double offset = 0.0;
};

struct FilePattern {
  std::string pattern;
  std::string key;
};

struct ImportSpec {
  std::vector<FilePattern> files;
  char delimiter = ',';
  bool header = true;
  std::string comment = "#";
  ColumnRef time;
  double time_scale = 1.0;
  bool time_offset = true;
  std::string model;
  std::vector<std::string> joint_names;
  std::vector<std::string> q_names;
  std::vector<Coordinate> q, qd, tau;
  std::optional<double> resample_dt;
  double segment_start = -std::numeric_limits<double>::infinity();
  double segment_end = std::numeric_limits<double>::infinity();
};

ColumnRef column_ref(const YAML::Node& node, const Ctx& ctx, const std::string& key) {
  return {scalar_as<std::string>(node, ctx, key, "a column name or index"), key, node.Mark()};
}

Coordinate parse_coordinate(const YAML::Node& node, const Ctx& ctx, const std::string& key) {
  Coordinate c;
  if (node.IsScalar()) {  // shorthand: just a column
    c.terms.push_back({column_ref(node, ctx, key), 1.0});
    return c;
  }
  if (!node.IsMap()) {
    config_error(ctx, node.Mark(), key, "expected {terms: {column: coeff, ...}, offset: x}");
  }
  for (const auto& entry : node) {
    const std::string name = entry.first.as<std::string>();
    if (name != "terms" && name != "offset") {
      config_error(ctx, entry.first.Mark(), key + "." + name,
                   "unknown key (expected 'terms' and optional 'offset')");
    }
  }
  if (node["offset"])
    c.offset = scalar_as<double>(node["offset"], ctx, key + ".offset", "a number");
  const YAML::Node terms = node["terms"];
  if (!terms || !terms.IsMap() || terms.size() == 0) {
    config_error(ctx, terms ? terms.Mark() : node.Mark(), key + ".terms",
                 "expected a non-empty map {column: coefficient}");
  }
  for (const auto& entry : terms) {
    const std::string term_key = key + ".terms." + entry.first.as<std::string>();
    Term t{column_ref(entry.first, ctx, term_key), 1.0};
    t.coeff = scalar_as<double>(entry.second, ctx, term_key, "a number");
    c.terms.push_back(std::move(t));
  }
  return c;
}

std::vector<Coordinate> parse_coordinates(const YAML::Node& node, const Ctx& ctx,
                                          const std::string& key) {
  if (!node.IsSequence() || node.size() == 0) {
    config_error(ctx, node.Mark(), key, "expected a non-empty list of coordinates");
  }
  std::vector<Coordinate> out;
  for (size_t i = 0; i < node.size(); ++i) {
    out.push_back(parse_coordinate(node[i], ctx, key + "[" + std::to_string(i) + "]"));
  }
  return out;
}

YAML::Node required(const YAML::Node& root, const char* name, const Ctx& ctx) {
  const YAML::Node node = root[name];
  if (!node) config_error(ctx, root.Mark(), key_of(name), "required key missing");
  return node;
}

void check_keys(const YAML::Node& root, const Ctx& ctx) {
  for (const auto& entry : root) {
    const std::string name = entry.first.as<std::string>();
    if (kAllowedKeys.count(name)) continue;
    std::string allowed;
    for (const std::string& k : kAllowedKeys) allowed += (allowed.empty() ? "" : ", ") + k;
    config_error(ctx, entry.first.Mark(), key_of(name), "unknown key; allowed keys: " + allowed);
  }
}

void parse_files(const YAML::Node& node, const Ctx& ctx, ImportSpec& spec) {
  const std::string key = key_of("files");
  if (node.IsScalar()) {
    spec.files.push_back({node.as<std::string>(), key});
    return;
  }
  const std::vector<std::string> patterns = string_list(node, ctx, key);
  if (patterns.empty()) config_error(ctx, node.Mark(), key, "expected at least one file");
  for (size_t i = 0; i < patterns.size(); ++i) {
    spec.files.push_back({patterns[i], key + "[" + std::to_string(i) + "]"});
  }
}

// Sets `out` when `root` has the key; the default stays otherwise.
template <class T>
bool read_optional(const YAML::Node& root, const char* name, const Ctx& ctx, const char* expected,
                   T& out) {
  const YAML::Node node = root[name];
  if (!node) return false;
  out = scalar_as<T>(node, ctx, key_of(name), expected);
  return true;
}

void parse_segment(const YAML::Node& node, const Ctx& ctx, ImportSpec& spec) {
  if (!node.IsMap()) config_error(ctx, node.Mark(), key_of("segment"), "expected {start, end}");
  read_optional(node, "start", ctx, "a number", spec.segment_start);
  read_optional(node, "end", ctx, "a number", spec.segment_end);
  if (!(spec.segment_start < spec.segment_end)) {
    config_error(ctx, node.Mark(), key_of("segment"), "start must be before end");
  }
}

void parse_format(const YAML::Node& root, const Ctx& ctx, ImportSpec& spec) {
  std::string delimiter(1, spec.delimiter);
  if (read_optional(root, "delimiter", ctx, "a string", delimiter) && delimiter.size() != 1) {
    config_error(ctx, root["delimiter"].Mark(), key_of("delimiter"),
                 "expected a single character, got '" + delimiter + "'");
  }
  spec.delimiter = delimiter[0];
  read_optional(root, "header", ctx, "true or false", spec.header);
  read_optional(root, "comment", ctx, "a string", spec.comment);
  read_optional(root, "time_scale", ctx, "a number", spec.time_scale);
  read_optional(root, "time_offset", ctx, "true or false", spec.time_offset);
  double dt = 0.0;
  if (read_optional(root, "resample_dt", ctx, "a number", dt)) {
    if (!(dt > 0))
      config_error(ctx, root["resample_dt"].Mark(), key_of("resample_dt"), "must be positive");
    spec.resample_dt = dt;
  }
  if (root["segment"]) parse_segment(root["segment"], ctx, spec);
}

void check_counts(const YAML::Node& root, const Ctx& ctx, const ImportSpec& spec) {
  const std::string nv = std::to_string(spec.qd.size());
  if (spec.joint_names.size() != spec.qd.size()) {
    config_error(ctx, root["joint_names"].Mark(), key_of("joint_names"),
                 "expected one name per qd coordinate (nv=" + nv + "), got " +
                     std::to_string(spec.joint_names.size()));
  }
  if (!spec.tau.empty() && spec.tau.size() != spec.qd.size()) {
    config_error(ctx, root["tau"].Mark(), key_of("tau"),
                 "expected nv=" + nv + " coordinates, got " + std::to_string(spec.tau.size()));
  }
  if (!spec.q_names.empty() && spec.q_names.size() != spec.q.size()) {
    config_error(ctx, root["q_names"].Mark(), key_of("q_names"),
                 "expected nq=" + std::to_string(spec.q.size()) + " names, got " +
                     std::to_string(spec.q_names.size()));
  }
}

ImportSpec parse_spec(const YAML::Node& desc, const Ctx& ctx) {
  const YAML::Node root = desc.IsMap() && desc[kRoot] ? desc[kRoot] : desc;
  if (!root.IsMap()) config_error(ctx, root.Mark(), kRoot, "expected a map");
  check_keys(root, ctx);
  ImportSpec spec;
  parse_files(required(root, "files", ctx), ctx, spec);
  spec.time = column_ref(required(root, "time", ctx), ctx, key_of("time"));
  spec.model =
      scalar_as<std::string>(required(root, "model", ctx), ctx, key_of("model"), "a string");
  spec.joint_names = string_list(required(root, "joint_names", ctx), ctx, key_of("joint_names"));
  if (root["q_names"]) spec.q_names = string_list(root["q_names"], ctx, key_of("q_names"));
  spec.q = parse_coordinates(required(root, "q", ctx), ctx, key_of("q"));
  spec.qd = parse_coordinates(required(root, "qd", ctx), ctx, key_of("qd"));
  if (root["tau"]) spec.tau = parse_coordinates(root["tau"], ctx, key_of("tau"));
  parse_format(root, ctx, spec);
  check_counts(root, ctx, spec);
  return spec;
}

// ---------------------------------------------------------------- files

bool has_glob_chars(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

std::vector<std::string> expand_pattern(const FilePattern& file, const std::string& base_dir,
                                        const Ctx& ctx) {
  fs::path p(file.pattern);
  if (p.is_relative()) p = fs::path(base_dir) / p;
  const std::string resolved = p.lexically_normal().string();
  std::vector<std::string> matches;
  if (!has_glob_chars(resolved)) {
    if (fs::is_regular_file(resolved)) matches.push_back(resolved);
  } else {
    glob_t g{};
    if (::glob(resolved.c_str(), 0, nullptr, &g) == 0) {
      for (size_t i = 0; i < g.gl_pathc; ++i) matches.emplace_back(g.gl_pathv[i]);
    }
    ::globfree(&g);
    // Byte order, not the locale's collation, so runs are reproducible.
    std::sort(matches.begin(), matches.end());
  }
  if (matches.empty()) {
    throw DataError(ctx.source + ": " + file.key + ": '" + file.pattern + "' (resolved: '" +
                    resolved + "') matches no file");
  }
  return matches;
}

// ---------------------------------------------------------------- CSV reader

// Our dependencies include no CSV library, and logs are plain numeric tables,
// so this is a small reader of its own: one record per line, optional
// double-quoted fields ("" escapes a quote), no newlines inside fields,
// blank lines and comment lines skipped, CRLF tolerated.

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

std::vector<std::string> split_fields(const std::string& line, char delimiter) {
  std::vector<std::string> fields;
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == delimiter) {
      fields.push_back(trim(field));
      field.clear();
    } else {
      field += c;
    }
  }
  fields.push_back(trim(field));
  return fields;
}

// The numeric columns a description uses, read from one CSV file.
struct CsvColumns {
  std::vector<double> values;   // row-major, rows x columns.size()
  std::vector<size_t> lines;    // 1-based CSV line of each row
  std::vector<size_t> columns;  // CSV column index of each stored column
  size_t rows() const { return lines.size(); }
  double at(size_t row, size_t k) const { return values[row * columns.size() + k]; }
};

double parse_number(const std::string& field, const std::string& file, size_t line, size_t column,
                    const std::string& column_name) {
  const char* begin = field.data();
  const char* end = begin + field.size();
  if (begin != end && *begin == '+') ++begin;  // from_chars rejects a leading '+'
  double value = 0.0;
  // from_chars is locale-independent, unlike strtod.
  const auto result = std::from_chars(begin, end, value);
  if (field.empty() || result.ec != std::errc() || result.ptr != end || !std::isfinite(value)) {
    throw DataError(file + ":" + std::to_string(line) + ": column " + std::to_string(column) +
                    " ('" + column_name + "'): malformed number '" + field +
                    "' (expected a finite number)");
  }
  return value;
}

class CsvFile {
 public:
  CsvFile(const std::string& path, const ImportSpec& spec) : path_(path), spec_(spec) {
    std::ifstream in(path);
    if (!in) throw DataError(path + ": cannot open CSV file");
    std::string line;
    for (size_t n = 1; std::getline(in, line); ++n) {
      if (is_skipped(line)) continue;
      records_.push_back({n, split_fields(line, spec.delimiter)});
    }
    if (records_.empty()) throw DataError(path + ": CSV file has no records");
    width_ = records_.front().fields.size();
    if (spec.header) {
      names_ = records_.front().fields;
      records_.erase(records_.begin());
    }
  }

  // Index of a column given by header name or 0-based index.
  size_t resolve(const ColumnRef& ref, const Ctx& ctx) const {
    for (size_t i = 0; i < names_.size(); ++i) {
      if (names_[i] == ref.name) return i;
    }
    size_t index = 0;
    const char* end = ref.name.data() + ref.name.size();
    const auto r = std::from_chars(ref.name.data(), end, index);
    if (!ref.name.empty() && r.ec == std::errc() && r.ptr == end && index < width_) return index;
    config_error(
        ctx, ref.mark, ref.key,
        "unknown column '" + ref.name + "' in " + path_ + "; available columns: " + available());
  }

  CsvColumns read(const std::vector<size_t>& columns) const {
    CsvColumns out;
    out.columns = columns;
    out.values.reserve(records_.size() * columns.size());
    for (const Record& rec : records_) {
      if (rec.fields.size() != width_) {
        throw DataError(path_ + ":" + std::to_string(rec.line) + ": expected " +
                        std::to_string(width_) + " fields, got " +
                        std::to_string(rec.fields.size()));
      }
      for (size_t c : columns) {
        out.values.push_back(parse_number(rec.fields[c], path_, rec.line, c, column_name(c)));
      }
      out.lines.push_back(rec.line);
    }
    return out;
  }

 private:
  struct Record {
    size_t line;
    std::vector<std::string> fields;
  };

  bool is_skipped(const std::string& line) const {
    const std::string t = trim(line);
    return t.empty() || (!spec_.comment.empty() && t.rfind(spec_.comment, 0) == 0);
  }

  std::string column_name(size_t c) const {
    return c < names_.size() ? names_[c] : std::to_string(c);
  }

  std::string available() const {
    std::string out;
    for (size_t i = 0; i < width_; ++i) {
      out += (i ? ", " : "") + column_name(i);
      if (!names_.empty()) out += " (" + std::to_string(i) + ")";
    }
    return out;
  }

  std::string path_;
  const ImportSpec& spec_;
  std::vector<Record> records_;
  std::vector<std::string> names_;
  size_t width_ = 0;
};

// ---------------------------------------------------------------- mapping

// Maps each referenced column to its position in CsvColumns.
struct ColumnIndex {
  size_t time = 0;
  std::vector<std::vector<std::pair<size_t, double>>> q, qd, tau;  // (slot, coeff)
};

class ColumnCollector {
 public:
  size_t slot(size_t csv_column) {
    auto it = std::find(columns_.begin(), columns_.end(), csv_column);
    if (it != columns_.end()) return static_cast<size_t>(it - columns_.begin());
    columns_.push_back(csv_column);
    return columns_.size() - 1;
  }
  const std::vector<size_t>& columns() const { return columns_; }

 private:
  std::vector<size_t> columns_;
};

std::vector<std::vector<std::pair<size_t, double>>> resolve_coordinates(
    const std::vector<Coordinate>& coords, const CsvFile& csv, const Ctx& ctx,
    ColumnCollector& collector) {
  std::vector<std::vector<std::pair<size_t, double>>> out;
  for (const Coordinate& c : coords) {
    out.emplace_back();
    for (const Term& t : c.terms)
      out.back().emplace_back(collector.slot(csv.resolve(t.column, ctx)), t.coeff);
  }
  return out;
}

RowMatrixXd evaluate(const std::vector<Coordinate>& coords,
                     const std::vector<std::vector<std::pair<size_t, double>>>& slots,
                     const CsvColumns& data, const std::vector<size_t>& rows) {
  RowMatrixXd m(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(coords.size()));
  for (size_t r = 0; r < rows.size(); ++r) {
    for (size_t i = 0; i < coords.size(); ++i) {
      double v = coords[i].offset;
      for (const auto& [slot, coeff] : slots[i]) v += coeff * data.at(rows[r], slot);
      m(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(i)) = v;
    }
  }
  return m;
}

// Rows to keep: later duplicates of a time stamp are dropped (loggers repeat
// stamps when a sample is re-sent); going backwards in time is an error.
std::vector<size_t> monotonic_rows(const CsvColumns& data, size_t time_slot, double scale,
                                   const std::string& file) {
  std::vector<size_t> keep;
  size_t dropped = 0;
  size_t first_dropped_line = 0;
  for (size_t r = 0; r < data.rows(); ++r) {
    const double t = scale * data.at(r, time_slot);
    if (!keep.empty()) {
      const double prev = scale * data.at(keep.back(), time_slot);
      if (t == prev) {
        if (dropped++ == 0) first_dropped_line = data.lines[r];
        continue;
      }
      if (t < prev) {
        throw DataError(file + ":" + std::to_string(data.lines[r]) + ": time " + std::to_string(t) +
                        " is earlier than " + std::to_string(prev) + " on line " +
                        std::to_string(data.lines[keep.back()]) + " (time must increase)");
      }
    }
    keep.push_back(r);
  }
  if (dropped > 0) {
    spdlog::warn("{}: dropped {} row(s) with duplicate time stamps (first on line {})", file,
                 dropped, first_dropped_line);
  }
  return keep;
}

// Linear interpolation of every column onto t0, t0 + dt, ... <= t_end.
Trajectory resample(const Trajectory& in, double dt) {
  const double t0 = in.time[0];
  const double span = in.time[in.size() - 1] - t0;
  // The tolerance keeps the last sample when span is a multiple of dt up to
  // rounding.
  const Eigen::Index n = static_cast<Eigen::Index>(std::floor(span / dt + 1e-9)) + 1;
  Trajectory out;
  out.name = in.name;
  out.time.resize(n);
  out.q.resize(n, in.q.cols());
  out.qd.resize(n, in.qd.cols());
  if (in.has_tau()) out.tau.resize(n, in.tau.cols());
  Eigen::Index j = 0;
  for (Eigen::Index k = 0; k < n; ++k) {
    const double t = t0 + static_cast<double>(k) * dt;  // no accumulated drift
    while (j + 2 < in.size() && in.time[j + 1] <= t) ++j;
    const Eigen::Index j1 = std::min<Eigen::Index>(j + 1, in.size() - 1);
    const double h = in.time[j1] - in.time[j];
    const double w = h > 0 ? std::clamp((t - in.time[j]) / h, 0.0, 1.0) : 0.0;
    out.time[k] = t;
    out.q.row(k) = (1 - w) * in.q.row(j) + w * in.q.row(j1);
    out.qd.row(k) = (1 - w) * in.qd.row(j) + w * in.qd.row(j1);
    if (in.has_tau()) out.tau.row(k) = (1 - w) * in.tau.row(j) + w * in.tau.row(j1);
  }
  return out;
}

std::vector<size_t> in_segment(const Eigen::VectorXd& time, const ImportSpec& spec) {
  std::vector<size_t> rows;
  for (Eigen::Index i = 0; i < time.size(); ++i) {
    if (time[i] >= spec.segment_start && time[i] <= spec.segment_end) rows.push_back(i);
  }
  return rows;
}

Trajectory select_rows(const Trajectory& in, const std::vector<size_t>& rows) {
  Trajectory out;
  out.name = in.name;
  const Eigen::Index n = static_cast<Eigen::Index>(rows.size());
  out.time.resize(n);
  out.q.resize(n, in.q.cols());
  out.qd.resize(n, in.qd.cols());
  if (in.has_tau()) out.tau.resize(n, in.tau.cols());
  for (Eigen::Index k = 0; k < n; ++k) {
    const Eigen::Index r = static_cast<Eigen::Index>(rows[k]);
    out.time[k] = in.time[r];
    out.q.row(k) = in.q.row(r);
    out.qd.row(k) = in.qd.row(r);
    if (in.has_tau()) out.tau.row(k) = in.tau.row(r);
  }
  return out;
}

Trajectory load_trajectory(const std::string& path, const ImportSpec& spec, const Ctx& ctx) {
  const CsvFile csv(path, spec);
  ColumnCollector collector;
  ColumnIndex index;
  index.time = collector.slot(csv.resolve(spec.time, ctx));
  index.q = resolve_coordinates(spec.q, csv, ctx, collector);
  index.qd = resolve_coordinates(spec.qd, csv, ctx, collector);
  index.tau = resolve_coordinates(spec.tau, csv, ctx, collector);
  const CsvColumns data = csv.read(collector.columns());

  const std::vector<size_t> rows = monotonic_rows(data, index.time, spec.time_scale, path);
  Trajectory tr;
  tr.name = fs::path(path).stem().string();
  tr.time.resize(static_cast<Eigen::Index>(rows.size()));
  for (size_t r = 0; r < rows.size(); ++r) {
    tr.time[static_cast<Eigen::Index>(r)] = spec.time_scale * data.at(rows[r], index.time);
  }
  if (spec.time_offset && tr.size() > 0) tr.time.array() -= tr.time[0];
  tr.q = evaluate(spec.q, index.q, data, rows);
  tr.qd = evaluate(spec.qd, index.qd, data, rows);
  if (!spec.tau.empty()) tr.tau = evaluate(spec.tau, index.tau, data, rows);

  const std::vector<size_t> kept = in_segment(tr.time, spec);
  if (kept.empty()) {
    throw DataError(path + ": no samples in segment [" + std::to_string(spec.segment_start) + ", " +
                    std::to_string(spec.segment_end) + "] s");
  }
  if (kept.size() != static_cast<size_t>(tr.size())) tr = select_rows(tr, kept);
  if (spec.resample_dt) tr = resample(tr, *spec.resample_dt);
  return tr;
}

std::vector<std::string> expand_files(const ImportSpec& spec, const std::string& base_dir,
                                      const Ctx& ctx) {
  std::vector<std::string> files;
  for (const FilePattern& f : spec.files) {
    for (std::string& path : expand_pattern(f, base_dir, ctx)) files.push_back(std::move(path));
  }
  return files;
}

// File stems name the trajectories; clashing stems (same name in different
// folders) fall back to the writer's zero-padded indices.
void assign_names(std::vector<Trajectory>& trajectories) {
  std::set<std::string> seen;
  bool unique = true;
  for (const Trajectory& t : trajectories) unique = unique && seen.insert(t.name).second;
  if (unique) return;
  for (Trajectory& t : trajectories) t.name.clear();
}

TrajectoryMetadata make_metadata(const ImportSpec& spec, const YAML::Node& desc,
                                 const std::vector<std::string>& files, const Ctx& ctx) {
  TrajectoryMetadata meta;
  meta.model = spec.model;
  meta.joint_names = spec.joint_names;
  meta.q_names = !spec.q_names.empty()             ? spec.q_names
                 : spec.q.size() == spec.qd.size() ? spec.joint_names
                                                   : std::vector<std::string>{};
  meta.generator = "neuralsim csv-import";
#ifdef NEURALSIM_VERSION
  meta.generator += std::string(" ") + NEURALSIM_VERSION;
#endif
  // The whole description is kept so the mapping can be audited later.
  const nlohmann::json params = {
      {"source", ctx.source}, {"files", files}, {"description", YAML::Dump(desc)}};
  meta.parameters_json = params.dump();
  return meta;
}

}  // namespace

TrajectorySet import_csv(const YAML::Node& desc, const std::string& base_dir,
                         const std::string& source_name) {
  const Ctx ctx{source_name};
  const ImportSpec spec = parse_spec(desc, ctx);
  const std::vector<std::string> files = expand_files(spec, base_dir, ctx);
  TrajectorySet set;
  set.meta = make_metadata(spec, desc, files, ctx);
  for (const std::string& path : files)
    set.trajectories.push_back(load_trajectory(path, spec, ctx));
  assign_names(set.trajectories);

  TrajectoryExpectations expect;
  expect.nq = static_cast<int>(spec.q.size());
  expect.nv = static_cast<int>(spec.qd.size());
  expect.require_tau = !spec.tau.empty();
  validate_trajectories(set, expect, source_name);
  spdlog::info("{}: imported {} trajectories from CSV", source_name, set.trajectories.size());
  return set;
}

TrajectorySet import_csv(const std::string& yaml_path) {
  YAML::Node desc;
  try {
    desc = YAML::LoadFile(yaml_path);
  } catch (const YAML::BadFile&) {
    throw ConfigError(yaml_path + ": cannot open import description");
  } catch (const YAML::Exception& e) {
    throw ConfigError(yaml_path + ":" + std::to_string(e.mark.line + 1) + ":" +
                      std::to_string(e.mark.column + 1) + ": YAML syntax error: " + e.msg);
  }
  const std::string base_dir = fs::path(yaml_path).parent_path().string();
  return import_csv(desc, base_dir.empty() ? "." : base_dir, yaml_path);
}

}  // namespace neuralsim
