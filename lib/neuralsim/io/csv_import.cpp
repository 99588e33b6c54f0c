#include "neuralsim/core/names.hpp"
#include "neuralsim/io/csv_import.hpp"

#include <glob.h>

#include <algorithm>
#include <map>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>

#include "neuralsim/core/derivative_filter.hpp"
#include "neuralsim/core/errors.hpp"
#include "neuralsim/core/format.hpp"
#include "neuralsim/io/derivative_config.hpp"
#include "neuralsim/io/hdf5_trajectory.hpp"
#include "neuralsim/io/input_file.hpp"
#include "neuralsim/io/work_size.hpp"

namespace neuralsim {
// Named, not anonymous: the io layer is compiled a few files per unit.
namespace csv_import_internal {

namespace fs = std::filesystem;

// ---------------------------------------------------------------- description

// A column given by header name or by 0-based index, with the config entry
// that named it (for messages).
struct ColumnRef {
  std::string name;
  Config where;
  std::string key;  // relative to `where`
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
  std::string pattern;  // resolved like every config path
  std::string key;      // full key path, for messages
};

// `qd: {derive: savitzky_golay, window: W, order: P}`: velocities that were
// not recorded, derived from the imported positions. central_difference is
// the same local fit on 3 samples with order 2 (the parabola through a sample
// and its two neighbours, whose slope is the central difference, on uneven
// stamps too).
struct DerivedVelocity {
  std::string method;
  int window = 31;
  int order = 3;
  std::string window_key;  // the key a too long window is reported at
};

// `split: {validation_fraction: f[, by: samples | files]}` or
// `split: {validation: [t_start, t_end][, train: [t_start, t_end]]}`.
struct ImportSplit {
  std::optional<double> fraction;
  bool by_files = false;          // the fraction of the files, not of each file's samples
  double start = 0.0, end = 0.0;  // seconds, inclusive
  std::optional<std::pair<double, double>> train;  // only these samples train (seconds, inclusive)
};

struct ImportSpec {
  std::string source;  // the description file, for messages
  std::vector<FilePattern> files;
  char delimiter = ',';
  bool header = true;
  std::string comment = "#";
  std::optional<ColumnRef> time;   // absent: the stamps come from a sample rate
  std::optional<double> sample_rate;  // Hz: time = t0 + k / sample_rate
  std::optional<double> sample_dt;    // s: time = t0 + k * dt
  double t0 = 0.0;
  double time_scale = 1.0;
  bool time_offset = true;
  std::string model;
  std::vector<std::string> joint_names;
  std::vector<std::string> q_names;
  std::vector<Coordinate> q, qd, tau;
  std::vector<Coordinate> tau_measured, current;  // sensor channels (docs/simid.md): missing cells allowed
  std::map<std::string, std::vector<Coordinate>> imus;  // sensor -> 6 coordinates (gyro xyz, accel xyz)
  // link or marker -> 7 coordinates (x y z qx qy qz qw) or 3 (x y z: a
  // tracked marker, whose quaternion columns are written NaN, missing)
  std::map<std::string, std::vector<Coordinate>> link_poses;
  std::optional<DerivedVelocity> derive_qd;  // instead of qd columns
  std::optional<ImportSplit> split;
  std::optional<double> resample_dt;
  std::optional<Config> owner;  // the csv_import section, for messages about its keys
  double segment_start = -std::numeric_limits<double>::infinity();
  double segment_end = std::numeric_limits<double>::infinity();
  size_t nv() const { return derive_qd ? q.size() : qd.size(); }
};

std::vector<std::string> string_or_list(const Config& c, const std::string& key) {
  if (c.is_list(key)) return c.get<std::vector<std::string>>(key);
  return {c.get<std::string>(key)};
}

Coordinate parse_coordinate(const Config& list_owner, const std::string& key) {
  Coordinate c;
  if (!list_owner.is_map(key)) {  // shorthand: just a column
    c.terms.push_back({{list_owner.get<std::string>(key), list_owner, key}, 1.0});
    return c;
  }
  const Config node = list_owner.at(key);
  if (node.has("value")) {
    // A channel that was not recorded (e.g. the unactuated root joint's
    // torque): the same number at every sample, no column.
    node.check_known_keys({"value"});
    c.offset = node.get<double>("value");
    if (!std::isfinite(c.offset))
      node.fail("value", "expected a finite number, got " + format_number(c.offset));
    return c;
  }
  node.check_known_keys({"terms", "offset"});
  c.offset = node.get_or<double>("offset", 0.0);
  if (!node.is_map("terms") || node.at("terms").items().empty())
    node.fail("terms", "expected a non-empty map {column: coefficient}");
  for (const auto& [column, value] : node.at("terms").items())
    c.terms.push_back({{column, value, ""}, value.get<double>("")});
  return c;
}

std::vector<Coordinate> parse_coordinates(const Config& root, const std::string& key) {
  const std::vector<Config> items = root.list(key);
  if (items.empty()) root.fail(key, "expected a non-empty list of coordinates");
  std::vector<Coordinate> out;
  for (size_t i = 0; i < items.size(); ++i) out.push_back(parse_coordinate(root, key + "." + std::to_string(i)));
  return out;
}

// The time stamps: a column (scaled, offset), or a sample rate. Both at once
// would leave two clocks to choose from, so that is refused.
void parse_time(const Config& root, ImportSpec& spec) {
  const bool rate = root.has("sample_rate"), step = root.has("dt");
  if (rate && step)
    root.fail("dt", "expected either sample_rate or dt, got both (sample_rate at " + root.where("sample_rate") + ")");
  if (!rate && !step) {
    spec.time = ColumnRef{root.get<std::string>("time"), root, "time"};
    if (root.has("t0")) root.fail("t0", "expected only with sample_rate or dt, got a time column (it has its own stamps)");
    spec.time_scale = root.get_or<double>("time_scale", 1.0);
    if (!(spec.time_scale > 0)) root.fail("time_scale", "must be > 0, got " + std::to_string(spec.time_scale));
    spec.time_offset = root.get_or<bool>("time_offset", true);
    return;
  }
  const std::string key = rate ? "sample_rate" : "dt";
  if (root.has("time"))
    root.fail(key, "expected either a time column or " + key + ", got both (time at " + root.where("time") + ")");
  for (const char* column_only : {"time_scale", "time_offset"})
    if (root.has(column_only)) root.fail(column_only, "expected only with a time column, got " + key);
  const double value = root.get<double>(key);  // finite, or a ConfigError
  if (!(value > 0))
    root.fail(key, "expected a number > 0 (" + std::string(rate ? "Hz" : "s") + "), got " + format_number(value));
  (rate ? spec.sample_rate : spec.sample_dt) = value;
  spec.t0 = root.get_or<double>("t0", 0.0);
}

// `qd: {derive: ...}`; the window and order as everywhere a config names a
// Savitzky–Golay fit (io/derivative_config.hpp).
DerivedVelocity parse_derived_velocity(const Config& v) {
  v.check_known_keys({"derive", "window", "order"});
  DerivedVelocity d;
  d.method = v.get<std::string>("derive");
  v.check_one_of("derive", {"savitzky_golay", "central_difference"});
  if (d.method == "central_difference") {
    for (const char* fixed : {"window", "order"})
      if (v.has(fixed))
        v.fail(fixed, "expected no window or order with central_difference (3 samples, order 2), got one: "
                      "savitzky_golay takes them");
    d.window = 3;
    d.order = 2;
    d.window_key = "derive";
    return d;
  }
  const SavitzkyGolayFit fit = read_savitzky_golay_fit(v);
  d.window = fit.window;
  d.order = fit.order;
  d.window_key = "window";
  return d;
}

// [t_start, t_end] in seconds at `key` of the split, t_start < t_end.
std::pair<double, double> parse_range(const Config& s, const std::string& key) {
  const std::vector<double> range = s.get<std::vector<double>>(key);
  if (range.size() != 2)
    s.fail(key, "expected [t_start, t_end] in seconds, got " + std::to_string(range.size()) + " numbers");
  if (!(range[0] < range[1]))
    s.fail(key, "expected t_start < t_end, got the empty range [" + format_number(range[0]) + ", " +
                    format_number(range[1]) + "]");
  return {range[0], range[1]};
}

std::string range_text(double a, double b) { return "[" + format_number(a) + ", " + format_number(b) + "] s"; }

ImportSplit parse_split(const Config& root) {
  if (!root.is_map("split"))
    root.fail("split", "expected {validation_fraction: f} or {validation: [t_start, t_end]}");
  const Config s = root.at("split");
  s.check_known_keys({"validation_fraction", "validation", "by", "train"});
  ImportSplit split;
  if (s.has("validation_fraction") && s.has("validation"))
    s.fail("validation", "expected either validation_fraction or validation, got both");
  if (s.has("validation_fraction")) {
    const double f = s.get<double>("validation_fraction");
    if (!(f > 0 && f < 1)) s.fail("validation_fraction", "expected a number in (0, 1), got " + format_number(f));
    split.fraction = f;
    if (s.has("train"))
      s.fail("train", "expected a training range only with a validation range [t_start, t_end], got it with "
                      "validation_fraction");
    const std::string by = s.get_or<std::string>("by", "samples");
    if (by != "samples" && by != "files")
      s.fail("by", "expected 'samples' (the last part of every file) or 'files' (the last files), got '" + by + "'");
    split.by_files = by == "files";
    return split;
  }
  if (!s.has("validation"))
    root.fail("split", "expected {validation_fraction: f} or {validation: [t_start, t_end]}, got neither key");
  if (s.has("by")) s.fail("by", "expected 'by' only with validation_fraction, got it with a validation range");
  std::tie(split.start, split.end) = parse_range(s, "validation");
  if (s.has("train")) {
    split.train = parse_range(s, "train");
    // Inclusive ends: ranges that touch share the sample at that time.
    if (std::max(split.train->first, split.start) <= std::min(split.train->second, split.end))
      s.fail("train", "expected a training range that shares no time with the validation range " +
                          range_text(split.start, split.end) + ", got " +
                          range_text(split.train->first, split.train->second) + ", which overlaps it");
  }
  return split;
}

// `key: {name: [coordinates]}` (imus, link_poses): each name a plain
// dataset name (<dataset>/<name>), with as many coordinates as one of `sizes`.
void parse_named_channels(const Config& root, const char* key, const char* what, const char* dataset,
                          std::initializer_list<size_t> sizes, const char* expected,
                          std::map<std::string, std::vector<Coordinate>>& out) {
  if (!root.has(key)) return;
  if (!root.is_map(key)) root.fail(key, std::string("expected a map of ") + what + " name -> " + expected);
  const Config named = root.at(key);
  for (const std::string& name : named.keys()) {
    if (!is_plain_name(name))
      named.fail(name, std::string("expected a ") + what + " name without '/' (it names the dataset " + dataset +
                           "/<name>), got '" + name + "'");
    std::vector<Coordinate> coords = parse_coordinates(named, name);
    if (std::find(sizes.begin(), sizes.end(), coords.size()) == sizes.end())
      named.fail(name, std::string("expected ") + expected + ", got " + std::to_string(coords.size()));
    out[name] = std::move(coords);
  }
}

ImportSpec parse_spec(const Config& root) {
  root.check_known_keys({"files", "delimiter", "header", "comment", "time", "sample_rate", "dt", "t0", "time_scale",
                         "time_offset", "model", "joint_names", "q_names", "q", "qd", "tau", "tau_measured", "current",
                         "imus", "link_poses", "resample_dt", "segment", "split"});
  ImportSpec spec;
  spec.source = root.file();
  spec.owner = root;
  const std::vector<std::string> patterns = string_or_list(root, "files");
  if (patterns.empty()) root.fail("files", "expected at least one file");
  for (size_t i = 0; i < patterns.size(); ++i) {
    const std::string key = root.is_list("files") ? "files." + std::to_string(i) : "files";
    spec.files.push_back({root.path(key), root.prefix() + "." + key});
  }
  parse_time(root, spec);
  spec.model = root.get<std::string>("model");
  spec.joint_names = string_or_list(root, "joint_names");
  if (root.has("q_names")) spec.q_names = string_or_list(root, "q_names");
  spec.q = parse_coordinates(root, "q");
  if (root.is_map("qd"))
    spec.derive_qd = parse_derived_velocity(root.at("qd"));
  else
    spec.qd = parse_coordinates(root, "qd");
  if (root.has("tau")) spec.tau = parse_coordinates(root, "tau");
  if (root.has("tau_measured")) spec.tau_measured = parse_coordinates(root, "tau_measured");
  if (root.has("current")) spec.current = parse_coordinates(root, "current");
  parse_named_channels(root, "imus", "sensor", "imu", {6}, "6 coordinates (gyro x y z, accelerometer x y z)",
                       spec.imus);
  parse_named_channels(root, "link_poses", "link or marker", "link_poses", {3, 7},
                       "3 coordinates (x y z: a marker, its orientation missing) or 7 (x y z qx qy qz qw)",
                       spec.link_poses);
  const std::string delimiter = root.get_or("delimiter", ",");
  if (delimiter.size() != 1) root.fail("delimiter", "expected a single character, got '" + delimiter + "'");
  spec.delimiter = delimiter[0];
  spec.header = root.get_or<bool>("header", true);
  spec.comment = root.get_or("comment", "#");
  if (root.has("resample_dt")) {
    spec.resample_dt = root.get<double>("resample_dt");
    if (!(*spec.resample_dt > 0)) root.fail("resample_dt", "must be > 0");
  }
  if (root.has("segment")) {
    const Config seg = root.at("segment");
    seg.check_known_keys({"start", "end"});
    spec.segment_start = seg.get_limit("start", spec.segment_start);
    spec.segment_end = seg.get_limit("end", spec.segment_end);
    if (!(spec.segment_start < spec.segment_end)) seg.fail("end", "the segment's start must be before its end");
  }
  if (root.has("split")) spec.split = parse_split(root);
  const std::string nv = std::to_string(spec.nv());
  if (spec.joint_names.size() != spec.nv())
    root.fail("joint_names", "expected one name per qd coordinate (nv = " + nv + "), got " +
                                 std::to_string(spec.joint_names.size()));
  for (const auto& [key, coords] : {std::pair<const char*, const std::vector<Coordinate>*>{"tau", &spec.tau},
                                    {"tau_measured", &spec.tau_measured},
                                    {"current", &spec.current}})
    if (!coords->empty() && coords->size() != spec.nv())
      root.fail(key, "expected nv = " + nv + " coordinates, got " + std::to_string(coords->size()));
  if (!spec.q_names.empty() && spec.q_names.size() != spec.q.size())
    root.fail("q_names", "expected nq = " + std::to_string(spec.q.size()) + " names, got " +
                             std::to_string(spec.q_names.size()));
  return spec;
}

// ---------------------------------------------------------------- files

bool has_glob_chars(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

std::vector<std::string> expand_pattern(const FilePattern& file, const ImportSpec& spec) {
  const std::string resolved = file.pattern;
  std::vector<std::string> matches;
  if (!has_glob_chars(resolved)) {
    // Anything but a missing file (a directory, a FIFO, a loop of symbolic
    // links) is named by the reader, which says what it is.
    if (input_file_problem(resolved).rfind("does not exist", 0) != 0) matches.push_back(resolved);
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
    throw DataError(spec.source + ": key '" + file.key + "': '" + resolved + "' matches no file");
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

// The fields of one record; DataError at `where` ("file:line") for a
// quoted field that is never closed (the record would silently lose its
// delimiters).
std::vector<std::string> split_fields(const std::string& line, char delimiter, const std::string& where) {
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
  if (quoted)
    throw DataError(where + ": field " + std::to_string(fields.size()) +
                    ": expected a closing '\"' before the end of the line, got an unterminated quoted field");
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
    std::string text = read_input_file(path, "CSV file", InputError::kData, CsvImportLimits::kMaxFileBytes);
    // A UTF-8 byte-order mark (spreadsheet exports) is not part of the first name.
    if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) text.erase(0, 3);
    std::istringstream in(text);
    text = std::string();
    std::string line;
    for (size_t n = 1; std::getline(in, line); ++n) {
      if (is_skipped(line)) continue;
      records_.push_back({n, split_fields(line, spec.delimiter, path + ":" + std::to_string(n))});
    }
    if (records_.empty()) throw DataError(path + ": CSV file has no records");
    width_ = records_.front().fields.size();
    if (spec.header) {
      names_ = records_.front().fields;
      header_line_ = records_.front().line;
      records_.erase(records_.begin());
    }
  }

  // Index of a column given by header name or 0-based index. A header
  // naming the column twice is refused: either one could be meant.
  size_t resolve(const ColumnRef& ref) const {
    const std::string key = ref.key.empty() ? ref.where.prefix() : ref.where.prefix() + "." + ref.key;
    std::vector<size_t> named;
    for (size_t i = 0; i < names_.size(); ++i)
      if (names_[i] == ref.name) named.push_back(i);
    if (named.size() > 1) {
      std::string columns;
      for (size_t i : named) columns += (columns.empty() ? "" : ", ") + std::to_string(i);
      throw DataError(path_ + ":" + std::to_string(header_line_) + ": column name '" + ref.name + "' appears " +
                      std::to_string(named.size()) + " times in the header (columns " + columns + "), so key '" +
                      key + "' (" + ref.where.where(ref.key) + ") is ambiguous; expected each name once");
    }
    if (named.size() == 1) return named.front();
    size_t index = 0;
    const char* end = ref.name.data() + ref.name.size();
    const auto r = std::from_chars(ref.name.data(), end, index);
    if (!ref.name.empty() && r.ec == std::errc() && r.ptr == end && index < width_) return index;
    ref.where.fail(ref.key, "unknown column '" + ref.name + "' in " + path_ + "; available columns: " + available());
  }

  // `may_be_missing`: the CSV columns whose empty cells are missing samples
  // (NaN: a channel logged at a lower rate, docs/data-format.md).
  CsvColumns read(const std::vector<size_t>& columns, const std::vector<size_t>& may_be_missing = {}) const {
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
        const bool missing = trim(rec.fields[c]).empty() &&
                             std::find(may_be_missing.begin(), may_be_missing.end(), c) != may_be_missing.end();
        out.values.push_back(missing ? std::numeric_limits<double>::quiet_NaN()
                                     : parse_number(rec.fields[c], path_, rec.line, c, column_name(c)));
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
  size_t header_line_ = 0;
  size_t width_ = 0;
};

// ---------------------------------------------------------------- mapping

// Maps each referenced column to its position in CsvColumns.
struct ColumnIndex {
  std::optional<size_t> time;  // none with a sample rate
  std::vector<std::vector<std::pair<size_t, double>>> q, qd, tau, tau_measured, current;  // (slot, coeff)
  std::map<std::string, std::vector<std::vector<std::pair<size_t, double>>>> imus, link_poses;
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
    const std::vector<Coordinate>& coords, const CsvFile& csv, ColumnCollector& collector) {
  std::vector<std::vector<std::pair<size_t, double>>> out;
  for (const Coordinate& c : coords) {
    out.emplace_back();
    for (const Term& t : c.terms)
      out.back().emplace_back(collector.slot(csv.resolve(t.column)), t.coeff);
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
                                   const std::string& file, std::vector<std::string>* notes) {
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
  if (dropped > 0 && notes)
    notes->push_back(file + ": dropped " + std::to_string(dropped) +
                     " row(s) with duplicate time stamps (first on line " + std::to_string(first_dropped_line) + ")");
  return keep;
}

// Linear interpolation of every column onto t0, t0 + dt, ... <= t_end. The
// length is sized before anything is allocated: a tiny resample_dt is a
// ConfigError at that key, not an exhausted memory.
// The optional channels beside q and q̇ (empty when not imported).
constexpr RowMatrixXd Trajectory::*kOptionalChannels[] = {&Trajectory::tau, &Trajectory::tau_measured,
                                                          &Trajectory::current};
// The named channels: IMU readings and link poses (markers: x y z alone
// until load_trajectory writes their quaternion columns).
constexpr std::map<std::string, RowMatrixXd> Trajectory::*kNamedChannels[] = {&Trajectory::imus,
                                                                              &Trajectory::link_poses};

Trajectory resample(const Trajectory& in, double dt, const ImportSpec& spec, const std::string& file) {
  const double t0 = in.time[0];
  const double span = in.time[in.size() - 1] - t0;
  // The tolerance keeps the last sample when span is a multiple of dt up to
  // rounding.
  const double samples = std::floor(span / dt + 1e-9) + 1;
  if (!(samples <= static_cast<double>(CsvImportLimits::kMaxSamples)))
    spec.owner->fail("resample_dt", format_printf("%g s over the %g s of %s makes %.3g samples, more than the "
                                                  "limit of %lld per trajectory",
                                                  dt, span, file.c_str(), samples, CsvImportLimits::kMaxSamples));
  double columns = 1.0 + static_cast<double>(in.q.cols() + in.qd.cols());
  for (auto channel : kOptionalChannels) columns += static_cast<double>((in.*channel).cols());
  for (auto channel : kNamedChannels)
    for (const auto& [name, m] : in.*channel) columns += static_cast<double>(m.cols());
  check_memory(*spec.owner, "resample_dt", format_printf("resampling %s to %.0f samples", file.c_str(), samples),
               samples * columns * sizeof(double));
  const Eigen::Index n = static_cast<Eigen::Index>(samples);
  Trajectory out;
  out.name = in.name;
  out.time.resize(n);
  out.q.resize(n, in.q.cols());
  out.qd.resize(n, in.qd.cols());
  for (auto channel : kOptionalChannels) (out.*channel).resize((in.*channel).size() > 0 ? n : 0, (in.*channel).cols());
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
    for (auto channel : kOptionalChannels)
      if ((in.*channel).size() > 0) (out.*channel).row(k) = (1 - w) * (in.*channel).row(j) + w * (in.*channel).row(j1);
    for (auto channel : kNamedChannels)
      for (const auto& [name, reading] : in.*channel) {
        RowMatrixXd& o = (out.*channel)[name];
        if (o.rows() != n) o.resize(n, reading.cols());
        o.row(k) = (1 - w) * reading.row(j) + w * reading.row(j1);
      }
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
  for (auto channel : kOptionalChannels) (out.*channel).resize((in.*channel).size() > 0 ? n : 0, (in.*channel).cols());
  for (Eigen::Index k = 0; k < n; ++k) {
    const Eigen::Index r = static_cast<Eigen::Index>(rows[k]);
    out.time[k] = in.time[r];
    out.q.row(k) = in.q.row(r);
    out.qd.row(k) = in.qd.row(r);
    for (auto channel : kOptionalChannels)
      if ((in.*channel).size() > 0) (out.*channel).row(k) = (in.*channel).row(r);
    for (auto channel : kNamedChannels)
      for (const auto& [name, reading] : in.*channel) {
        RowMatrixXd& o = (out.*channel)[name];
        if (o.rows() != n) o.resize(n, reading.cols());
        o.row(k) = reading.row(r);
      }
  }
  return out;
}

// q̇ from the imported positions by the derivative filter's local polynomial
// fit (core/derivative_filter.hpp), on the trajectory's own, possibly
// uneven, stamps. The window/2 samples at each end have no full window and
// are dropped, with their q and τ, as data.velocity drops them
// (experiment/data.hpp): a one-sided fit there would be far less accurate.
void derive_velocity(Trajectory& tr, const DerivedVelocity& d, const ImportSpec& spec, const std::string& file) {
  const Eigen::Index T = tr.size(), half = d.window / 2;
  if (T < d.window + 1)  // at least two samples must keep a full window
    spec.owner->at("qd").fail(d.window_key,
                              format_printf("expected a window shorter than the %lld samples of %s (at least 2 "
                                            "samples with a full window), got %d",
                                            static_cast<long long>(T), file.c_str(), d.window));
  Eigen::MatrixXd qd;
  savitzky_golay(tr.time, tr.q, d.window, d.order, nullptr, &qd, nullptr);
  const Eigen::Index n = T - 2 * half;
  Trajectory out;
  out.name = tr.name;
  out.time = tr.time.segment(half, n);
  out.q = tr.q.middleRows(half, n);
  out.qd = qd;
  for (auto channel : kOptionalChannels)
    if ((tr.*channel).size() > 0) out.*channel = (tr.*channel).middleRows(half, n);
  for (auto channel : kNamedChannels)
    for (const auto& [name, reading] : tr.*channel) (out.*channel)[name] = reading.middleRows(half, n);
  tr = std::move(out);
}

Trajectory load_trajectory(const std::string& path, const ImportSpec& spec, std::vector<std::string>* notes) {
  const CsvFile csv(path, spec);
  ColumnCollector collector;
  ColumnIndex index;
  if (spec.time) index.time = collector.slot(csv.resolve(*spec.time));
  index.q = resolve_coordinates(spec.q, csv, collector);
  index.qd = resolve_coordinates(spec.qd, csv, collector);
  index.tau = resolve_coordinates(spec.tau, csv, collector);
  index.tau_measured = resolve_coordinates(spec.tau_measured, csv, collector);
  index.current = resolve_coordinates(spec.current, csv, collector);
  for (const auto& [sensor, coords] : spec.imus) index.imus[sensor] = resolve_coordinates(coords, csv, collector);
  for (const auto& [link, coords] : spec.link_poses)
    index.link_poses[link] = resolve_coordinates(coords, csv, collector);
  // Empty cells of q, q̇ and sensor columns are missing samples (simid skips
  // them); a column that time or τ also reads must be complete.
  std::vector<size_t> may_be_missing;
  std::vector<const std::vector<std::vector<std::pair<size_t, double>>>*> sensors = {&index.q, &index.qd,
                                                                                      &index.tau_measured,
                                                                                      &index.current};
  for (const auto* named : {&index.imus, &index.link_poses})
    for (const auto& entry : *named) sensors.push_back(&entry.second);
  for (const auto* coords : sensors)
    for (const auto& terms : *coords)
      for (const auto& term : terms) may_be_missing.push_back(collector.columns()[term.first]);
  std::vector<size_t> complete;
  if (index.time) complete.push_back(collector.columns()[*index.time]);
  for (const auto& terms : index.tau)
    for (const auto& term : terms) complete.push_back(collector.columns()[term.first]);
  may_be_missing.erase(std::remove_if(may_be_missing.begin(), may_be_missing.end(),
                                      [&](size_t c) {
                                        return std::find(complete.begin(), complete.end(), c) != complete.end();
                                      }),
                       may_be_missing.end());
  const CsvColumns data = csv.read(collector.columns(), may_be_missing);

  Trajectory tr;
  tr.name = fs::path(path).stem().string();
  std::vector<size_t> rows;
  if (index.time) {
    rows = monotonic_rows(data, *index.time, spec.time_scale, path, notes);
    tr.time.resize(static_cast<Eigen::Index>(rows.size()));
    for (size_t r = 0; r < rows.size(); ++r) {
      tr.time[static_cast<Eigen::Index>(r)] = spec.time_scale * data.at(rows[r], *index.time);
    }
    if (spec.time_offset && tr.size() > 0) tr.time.array() -= tr.time[0];
  } else {
    // Every record is a sample: t0 + k / rate (or t0 + k dt), computed from k
    // so that no rounding accumulates.
    rows.resize(data.rows());
    std::iota(rows.begin(), rows.end(), size_t{0});
    tr.time.resize(static_cast<Eigen::Index>(rows.size()));
    for (Eigen::Index k = 0; k < tr.time.size(); ++k) {
      const double kd = static_cast<double>(k);
      tr.time[k] = spec.t0 + (spec.sample_rate ? kd / *spec.sample_rate : kd * *spec.sample_dt);
    }
  }
  tr.q = evaluate(spec.q, index.q, data, rows);
  if (!spec.tau.empty()) tr.tau = evaluate(spec.tau, index.tau, data, rows);
  if (!spec.tau_measured.empty()) tr.tau_measured = evaluate(spec.tau_measured, index.tau_measured, data, rows);
  if (!spec.current.empty()) tr.current = evaluate(spec.current, index.current, data, rows);
  for (const auto& [sensor, coords] : spec.imus) tr.imus[sensor] = evaluate(coords, index.imus.at(sensor), data, rows);
  for (const auto& [link, coords] : spec.link_poses)
    tr.link_poses[link] = evaluate(coords, index.link_poses.at(link), data, rows);
  // Filters and interpolation would smear a missing sample over its
  // neighbours: they need complete positions (and, interpolated, complete
  // sensor readings).
  std::vector<std::pair<std::string, const RowMatrixXd*>> complete_for_filters = {
      {"q", &tr.q}, {"tau_measured", &tr.tau_measured}, {"current", &tr.current}};
  for (const auto& [sensor, reading] : tr.imus) complete_for_filters.emplace_back("imus." + sensor, &reading);
  for (const auto& [link, pose] : tr.link_poses) complete_for_filters.emplace_back("link_poses." + link, &pose);
  for (const auto& [name, m] : complete_for_filters) {
    const bool needed = spec.resample_dt || (spec.derive_qd && m == &tr.q);
    if (!needed || !m->hasNaN()) continue;
    Eigen::Index row = 0;
    while (!m->row(row).hasNaN()) ++row;
    throw DataError(path + ":" + std::to_string(data.lines[rows[static_cast<size_t>(row)]]) + ": an empty " + name +
                    " cell (a missing sample), and " + (spec.derive_qd && m == &tr.q ? "qd derived from q" : "resample_dt") +
                    " needs complete " + (m == &tr.q ? "positions" : "readings") +
                    "; fill the gap or import without it");
  }
  if (spec.derive_qd) {
    derive_velocity(tr, *spec.derive_qd, spec, path);
  } else {
    tr.qd = evaluate(spec.qd, index.qd, data, rows);
  }

  const std::vector<size_t> kept = in_segment(tr.time, spec);
  if (kept.empty()) {
    throw DataError(path + ": no samples in segment [" + std::to_string(spec.segment_start) + ", " +
                    std::to_string(spec.segment_end) + "] s");
  }
  if (kept.size() != static_cast<size_t>(tr.size())) tr = select_rows(tr, kept);
  if (spec.resample_dt && tr.qd.hasNaN()) {
    Eigen::Index row = 0;
    while (!tr.qd.row(row).hasNaN()) ++row;
    throw DataError(path + ": an empty qd cell (a missing sample) at sample " + std::to_string(row) +
                    ", and resample_dt needs complete velocities; fill the gap or import without it");
  }
  if (spec.resample_dt) tr = resample(tr, *spec.resample_dt, spec, path);
  // A marker (x y z alone): its orientation is missing (docs/data-format.md).
  for (auto& [link, pose] : tr.link_poses)
    if (pose.cols() == 3) {
      pose.conservativeResize(Eigen::NoChange, 7);
      pose.rightCols<4>().setConstant(std::numeric_limits<double>::quiet_NaN());
    }
  return tr;
}

// Consecutive samples first .. first + n - 1 of a trajectory.
Trajectory sample_range(const Trajectory& in, Eigen::Index first, Eigen::Index n, const std::string& name) {
  std::vector<size_t> rows(static_cast<size_t>(n));
  std::iota(rows.begin(), rows.end(), static_cast<size_t>(first));
  Trajectory out = select_rows(in, rows);
  out.name = name;
  return out;
}

// One trajectory into its training and validation parts, which share no
// sample. validation_fraction: the last floor(f T) samples validate. A time
// range: the samples with t_start <= t <= t_end validate, and the samples
// before and after it train as two trajectories (<stem>_before,
// <stem>_after; a simulation must not run across the gap). A part of one
// sample is no trajectory: dropped, with a note.
void split_trajectory(const Trajectory& tr, const ImportSplit& split, const ImportSpec& spec, const std::string& file,
                      std::vector<Trajectory>& train, std::vector<Trajectory>& validation,
                      std::vector<std::string>* notes) {
  const Config s = spec.owner->at("split");
  const Eigen::Index T = tr.size();
  if (split.fraction) {
    const Eigen::Index nv = static_cast<Eigen::Index>(std::floor(*split.fraction * static_cast<double>(T)));
    const Eigen::Index nt = T - nv;
    if (nv < 2 || nt < 2)
      s.fail("validation_fraction",
             format_printf("expected at least 2 training and 2 validation samples of the %lld of %s, got %lld and %lld",
                           static_cast<long long>(T), file.c_str(), static_cast<long long>(nt),
                           static_cast<long long>(nv)));
    train.push_back(sample_range(tr, 0, nt, tr.name));
    validation.push_back(sample_range(tr, nt, nv, tr.name));
    return;
  }
  // The samples of [a, b] (inclusive): [first, last), at least 2 of them.
  const auto samples_in = [&](const std::string& key, double a, double b) {
    Eigen::Index first = 0;
    while (first < T && tr.time[first] < a) ++first;
    Eigen::Index last = first;
    while (last < T && tr.time[last] <= b) ++last;
    if (last - first < 2)
      s.fail(key, format_printf("expected at least 2 samples of %s in %s (its samples span [%g, %g] s), got %lld",
                                file.c_str(), range_text(a, b).c_str(), tr.time[0], tr.time[T - 1],
                                static_cast<long long>(last - first)));
    return std::make_pair(first, last);
  };
  const auto [first, last] = samples_in("validation", split.start, split.end);
  if (split.train) {
    // Only the training range trains; the rest of the file is left out.
    const auto [a, b] = samples_in("train", split.train->first, split.train->second);
    train.push_back(sample_range(tr, a, b - a, tr.name));
    validation.push_back(sample_range(tr, first, last - first, tr.name));
    return;
  }
  const Eigen::Index nv = last - first, before = first, after = T - last;
  const std::string range = range_text(split.start, split.end);
  if (before < 2 && after < 2)
    s.fail("validation", format_printf("expected training samples of %s outside %s (at least 2 before or after "
                                       "it), got %lld before and %lld after",
                                       file.c_str(), range.c_str(), static_cast<long long>(before),
                                       static_cast<long long>(after)));
  const bool both = before >= 2 && after >= 2;
  if (before >= 2) train.push_back(sample_range(tr, 0, before, both ? tr.name + "_before" : tr.name));
  if (after >= 2) train.push_back(sample_range(tr, last, after, both ? tr.name + "_after" : tr.name));
  if ((before == 1 || after == 1) && notes)
    notes->push_back(file + ": split.validation " + range + " leaves one training sample " +
                     (before == 1 ? "before" : "after") + " it, dropped (no trajectory)");
  validation.push_back(sample_range(tr, first, nv, tr.name));
}

std::vector<std::string> expand_files(const ImportSpec& spec) {
  std::vector<std::string> files;
  for (const FilePattern& f : spec.files)
    for (std::string& path : expand_pattern(f, spec)) files.push_back(std::move(path));
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

TrajectoryMetadata make_metadata(const ImportSpec& spec, const Config& desc, const std::vector<std::string>& files) {
  TrajectoryMetadata meta;
  meta.model = spec.model;
  meta.joint_names = spec.joint_names;
  meta.q_names = !spec.q_names.empty()           ? spec.q_names
                 : spec.q.size() == spec.nv()    ? spec.joint_names
                                                   : std::vector<std::string>{};
  meta.generator = "csv-import";
  // The whole description is kept so the mapping can be audited later.
  const nlohmann::json params = {{"source", spec.source}, {"files", files}, {"description", desc.to_json()}};
  meta.parameters_json = params.dump();
  return meta;
}

}  // namespace csv_import_internal

TrajectorySet import_csv(const Config& desc, std::vector<std::string>* notes, TrajectorySet* validation) {
  namespace internal = csv_import_internal;
  const internal::ImportSpec spec = internal::parse_spec(desc);
  if (spec.split && !validation)
    desc.fail("split", "expected a caller that keeps the validation part (import-csv writes it as validation.h5), "
                       "got one that reads this description as one data file: import it with import-csv first");
  const std::vector<std::string> files = internal::expand_files(spec);
  TrajectorySet set;
  set.meta = internal::make_metadata(spec, desc, files);
  if (validation) {
    validation->meta = set.meta;
    validation->trajectories.clear();
  }
  // By files: the last floor(f N) files validate, whole, the others train.
  size_t first_validation_file = files.size();
  if (spec.split && spec.split->by_files) {
    const size_t n = files.size();
    const size_t nv = static_cast<size_t>(std::floor(*spec.split->fraction * static_cast<double>(n)));
    if (nv < 1 || n - nv < 1)
      desc.at("split").fail("validation_fraction",
                            format_printf("expected at least 1 training and 1 validation file of the %zu file(s) "
                                          "with by: files, got %zu and %zu",
                                          n, n - nv, nv));
    first_validation_file = n - nv;
  }
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string& path = files[i];
    Trajectory tr = internal::load_trajectory(path, spec, notes);
    if (spec.split && spec.split->by_files)
      (i < first_validation_file ? set.trajectories : validation->trajectories).push_back(std::move(tr));
    else if (spec.split)
      internal::split_trajectory(tr, *spec.split, spec, path, set.trajectories, validation->trajectories, notes);
    else
      set.trajectories.push_back(std::move(tr));
  }
  if (spec.derive_qd && notes) {
    const internal::DerivedVelocity& d = *spec.derive_qd;
    notes->push_back(format_printf("%s: qd derived from q by %s (window %d, order %d); the first and last %d "
                                   "samples of every file, which have no full window, are dropped",
                                   spec.source.c_str(), d.method.c_str(), d.window, d.order, d.window / 2));
  }
  internal::assign_names(set.trajectories);

  TrajectoryExpectations expect;
  expect.nq = static_cast<int>(spec.q.size());
  expect.nv = static_cast<int>(spec.nv());
  expect.require_tau = !spec.tau.empty();
  expect.allow_missing = true;  // empty q, qd cells: missing samples (load_trajectory)
  validate_trajectories(set, expect, spec.source);
  if (spec.split) {
    internal::assign_names(validation->trajectories);
    validate_trajectories(*validation, expect, spec.source);
  }
  return set;
}

TrajectorySet import_csv(const std::string& yaml_path, std::vector<std::string>* notes, TrajectorySet* validation) {
  const Config root = Config::parse(
      read_input_file(yaml_path, "CSV import description", InputError::kConfig, Config::kMaxConfigBytes), yaml_path);
  root.check_known_keys({"csv_import", "description"});
  return import_csv(root.at("csv_import"), notes, validation);
}

}  // namespace neuralsim
