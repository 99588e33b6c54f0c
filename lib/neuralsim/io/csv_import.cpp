#include "neuralsim/io/csv_import.hpp"

#include <glob.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/core/format.hpp"
#include "neuralsim/io/hdf5_trajectory.hpp"
#include "neuralsim/io/input_file.hpp"
#include "neuralsim/io/work_size.hpp"

namespace neuralsim {
namespace {

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

struct ImportSpec {
  std::string source;  // the description file, for messages
  std::vector<FilePattern> files;
  char delimiter = ',';
  bool header = true;
  std::string comment = "#";
  std::optional<ColumnRef> time;
  double time_scale = 1.0;
  bool time_offset = true;
  std::string model;
  std::vector<std::string> joint_names;
  std::vector<std::string> q_names;
  std::vector<Coordinate> q, qd, tau;
  std::optional<double> resample_dt;
  std::optional<Config> owner;  // the csv_import section, for messages about its keys
  double segment_start = -std::numeric_limits<double>::infinity();
  double segment_end = std::numeric_limits<double>::infinity();
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

ImportSpec parse_spec(const Config& root) {
  root.check_known_keys({"files", "delimiter", "header", "comment", "time", "time_scale", "time_offset", "model",
                         "joint_names", "q_names", "q", "qd", "tau", "resample_dt", "segment"});
  ImportSpec spec;
  spec.source = root.file();
  spec.owner = root;
  const std::vector<std::string> patterns = string_or_list(root, "files");
  if (patterns.empty()) root.fail("files", "expected at least one file");
  for (size_t i = 0; i < patterns.size(); ++i) {
    const std::string key = root.is_list("files") ? "files." + std::to_string(i) : "files";
    spec.files.push_back({root.path(key), root.prefix() + "." + key});
  }
  spec.time = ColumnRef{root.get<std::string>("time"), root, "time"};
  spec.model = root.get<std::string>("model");
  spec.joint_names = string_or_list(root, "joint_names");
  if (root.has("q_names")) spec.q_names = string_or_list(root, "q_names");
  spec.q = parse_coordinates(root, "q");
  spec.qd = parse_coordinates(root, "qd");
  if (root.has("tau")) spec.tau = parse_coordinates(root, "tau");
  const std::string delimiter = root.get_or("delimiter", ",");
  if (delimiter.size() != 1) root.fail("delimiter", "expected a single character, got '" + delimiter + "'");
  spec.delimiter = delimiter[0];
  spec.header = root.get_or<bool>("header", true);
  spec.comment = root.get_or("comment", "#");
  spec.time_scale = root.get_or<double>("time_scale", 1.0);
  if (!(spec.time_scale > 0)) root.fail("time_scale", "must be > 0, got " + std::to_string(spec.time_scale));
  spec.time_offset = root.get_or<bool>("time_offset", true);
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
  const std::string nv = std::to_string(spec.qd.size());
  if (spec.joint_names.size() != spec.qd.size())
    root.fail("joint_names", "expected one name per qd coordinate (nv = " + nv + "), got " +
                                 std::to_string(spec.joint_names.size()));
  if (!spec.tau.empty() && spec.tau.size() != spec.qd.size())
    root.fail("tau", "expected nv = " + nv + " coordinates, got " + std::to_string(spec.tau.size()));
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
  size_t header_line_ = 0;
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
  const double columns = 1.0 + static_cast<double>(in.q.cols() + in.qd.cols() + in.tau.cols());
  check_memory(*spec.owner, "resample_dt", format_printf("resampling %s to %.0f samples", file.c_str(), samples),
               samples * columns * sizeof(double));
  const Eigen::Index n = static_cast<Eigen::Index>(samples);
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

Trajectory load_trajectory(const std::string& path, const ImportSpec& spec, std::vector<std::string>* notes) {
  const CsvFile csv(path, spec);
  ColumnCollector collector;
  ColumnIndex index;
  index.time = collector.slot(csv.resolve(*spec.time));
  index.q = resolve_coordinates(spec.q, csv, collector);
  index.qd = resolve_coordinates(spec.qd, csv, collector);
  index.tau = resolve_coordinates(spec.tau, csv, collector);
  const CsvColumns data = csv.read(collector.columns());

  const std::vector<size_t> rows = monotonic_rows(data, index.time, spec.time_scale, path, notes);
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
  if (spec.resample_dt) tr = resample(tr, *spec.resample_dt, spec, path);
  return tr;
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
  meta.q_names = !spec.q_names.empty()             ? spec.q_names
                 : spec.q.size() == spec.qd.size() ? spec.joint_names
                                                   : std::vector<std::string>{};
  meta.generator = "csv-import";
  // The whole description is kept so the mapping can be audited later.
  const nlohmann::json params = {{"source", spec.source}, {"files", files}, {"description", desc.to_json()}};
  meta.parameters_json = params.dump();
  return meta;
}

}  // namespace

TrajectorySet import_csv(const Config& desc, std::vector<std::string>* notes) {
  const ImportSpec spec = parse_spec(desc);
  const std::vector<std::string> files = expand_files(spec);
  TrajectorySet set;
  set.meta = make_metadata(spec, desc, files);
  for (const std::string& path : files) set.trajectories.push_back(load_trajectory(path, spec, notes));
  assign_names(set.trajectories);

  TrajectoryExpectations expect;
  expect.nq = static_cast<int>(spec.q.size());
  expect.nv = static_cast<int>(spec.qd.size());
  expect.require_tau = !spec.tau.empty();
  validate_trajectories(set, expect, spec.source);
  return set;
}

TrajectorySet import_csv(const std::string& yaml_path, std::vector<std::string>* notes) {
  const Config root = Config::parse(
      read_input_file(yaml_path, "CSV import description", InputError::kConfig, Config::kMaxConfigBytes), yaml_path);
  root.check_known_keys({"csv_import", "description"});
  return import_csv(root.at("csv_import"), notes);
}

}  // namespace neuralsim
