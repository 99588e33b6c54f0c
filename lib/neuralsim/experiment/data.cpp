#include "neuralsim/experiment/data.hpp"

#include <cmath>
#include <filesystem>
#include <optional>
#include <sstream>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/core/derivative_filter.hpp"
#include "neuralsim/io/csv_import.hpp"
#include "neuralsim/io/derivative_config.hpp"
#include "neuralsim/io/hdf5_trajectory.hpp"
#include "neuralsim/step/link_poses.hpp"

namespace neuralsim {
namespace {

// `data.targets: [{name, q0, qd0, time, link, position}]`: instead of
// recordings, positions a link must reach at a time from a start state
// (Degrave's ball throw; the estimated initial.qd.* coordinates replace
// qd0). Each becomes a two-sample trajectory whose second sample holds the
// target as the link's observed position; q there is a placeholder that is
// never compared (the observation must be link positions only).
TrajectorySet targets_as_trajectories(const Config& data, const Model<double>& model) {
  TrajectorySet set;
  set.meta = trajectory_metadata(model, "simid data.targets", "{}", -1);
  int index = 0;
  for (const Config& t : data.list("targets")) {
    t.check_known_keys({"name", "q0", "qd0", "time", "link", "position"});
    Trajectory tr;
    char name[32];
    std::snprintf(name, sizeof name, "target%02d", index++);
    tr.name = t.get_or<std::string>("name", name);
    const Eigen::VectorXd q0 = t.get<Eigen::VectorXd>("q0");
    const Eigen::VectorXd qd0 = t.has("qd0") ? t.get<Eigen::VectorXd>("qd0") : Eigen::VectorXd::Zero(model.nv);
    if (q0.size() != model.nq) t.fail("q0", "expected nq = " + std::to_string(model.nq) + " values, got " + std::to_string(q0.size()));
    if (qd0.size() != model.nv) t.fail("qd0", "expected nv = " + std::to_string(model.nv) + " values, got " + std::to_string(qd0.size()));
    const double time = t.get<double>("time");
    if (!(time > 0)) t.fail("time", "must be > 0");
    const std::string link = t.get<std::string>("link");
    const auto ref = find_link(model, link);
    if (!ref) t.fail("link", "no body or frame named '" + link + "'");
    const std::vector<double> p = t.get<std::vector<double>>("position");
    if (p.size() != 3) t.fail("position", "expected [x, y, z]");
    tr.time = Eigen::Vector2d(0.0, time);
    tr.q.resize(2, model.nq);
    tr.q.row(0) = q0.transpose();
    tr.q.row(1) = q0.transpose();
    tr.qd.resize(2, model.nv);
    tr.qd.row(0) = qd0.transpose();
    tr.qd.row(1) = qd0.transpose();
    record_link_poses(model, {*ref}, tr);
    tr.link_poses[link].row(1) << p[0], p[1], p[2], 0, 0, 0, 1;
    set.trajectories.push_back(std::move(tr));
  }
  if (set.trajectories.empty()) data.fail("targets", "is empty");
  return set;
}

void cut(Trajectory& t, long long n) {
  if (t.size() <= n) return;
  t.time.conservativeResize(n);
  t.q.conservativeResize(n, Eigen::NoChange);
  t.qd.conservativeResize(n, Eigen::NoChange);
  if (t.has_tau()) t.tau.conservativeResize(n, Eigen::NoChange);
  for (auto& [name, pose] : t.link_poses) pose.conservativeResize(n, Eigen::NoChange);
  for (auto& [name, reading] : t.imus) reading.conservativeResize(n, Eigen::NoChange);
  if (t.tau_measured.size() > 0) t.tau_measured.conservativeResize(n, Eigen::NoChange);
  if (t.current.size() > 0) t.current.conservativeResize(n, Eigen::NoChange);
}

// `data.velocity: {method: savitzky_golay, window: W, order: P}` (or
// `recorded`, the default).
std::optional<DerivativeOptions> read_velocity_option(const Config& data) {
  if (!data.has("velocity")) return std::nullopt;
  if (!data.is_map("velocity")) {
    data.check_one_of("velocity", {"recorded"});
    return std::nullopt;
  }
  const Config v = data.at("velocity");
  v.check_known_keys({"method", "window", "order"});
  DerivativeOptions o;
  o.method = DerivativeMethod::kSavitzkyGolay;
  v.get_choice("method", {"savitzky_golay"}, "savitzky_golay");
  const SavitzkyGolayFit fit = read_savitzky_golay_fit(v);
  o.window = fit.window;
  o.order = fit.order;
  return o;
}

// Replaces each trajectory's q̇ by the Savitzky–Golay derivative of its
// positions and drops the window/2 samples at each end that have no full
// window. q, τ and link poses keep their measured values.
void derive_velocities(TrajectorySet& set, const DerivativeOptions& o, const std::string& source) {
  for (Trajectory& t : set.trajectories) {
    if (t.q.cols() != t.qd.cols())
      throw DataError(source + ": trajectory '" + t.name + "': data.velocity needs q and q̇ of the same size (" +
                      std::to_string(t.q.cols()) + " vs " + std::to_string(t.qd.cols()) +
                      "; quaternion joints are not supported)");
    // A gap would spread over the filter's window and leave NaN velocities
    // at samples whose position is measured: refused, not smeared.
    for (Eigen::Index k = 0; k < t.q.rows(); ++k)
      for (Eigen::Index c = 0; c < t.q.cols(); ++c)
        if (std::isnan(t.q(k, c)))
          throw DataError(source + ":/trajectories/" + t.name + "/q: a missing sample (NaN) at row " +
                          std::to_string(k) + ", column " + std::to_string(c) +
                          ", and data.velocity derives q̇ from q: expected complete positions, or velocity: recorded");
    const FilteredDerivatives f = filter_derivatives(t, o);
    if (f.rows.empty())
      throw DataError(source + ": trajectory '" + t.name + "' has " + std::to_string(t.size()) +
                      " samples, too few for a data.velocity window of " + std::to_string(o.window));
    const Eigen::Index first = f.rows.front(), n = static_cast<Eigen::Index>(f.rows.size());
    Trajectory d;
    d.name = t.name;
    d.time = t.time.segment(first, n);
    d.q = t.q.middleRows(first, n);
    d.qd = f.qd;
    if (t.has_tau()) d.tau = t.tau.middleRows(first, n);
    for (const auto& [name, pose] : t.link_poses) d.link_poses[name] = pose.middleRows(first, n);
    for (const auto& [name, reading] : t.imus) d.imus[name] = reading.middleRows(first, n);
    if (t.tau_measured.size() > 0) d.tau_measured = t.tau_measured.middleRows(first, n);
    if (t.current.size() > 0) d.current = t.current.middleRows(first, n);
    t = std::move(d);
  }
}

// The files named at `key` (one path or a list), resolved as
// load_trajectory_files resolves them and made canonical, for overlap checks.
std::vector<std::filesystem::path> named_files(const Config& owner, const std::string& key) {
  std::vector<std::string> paths;
  if (owner.is_list(key)) {
    for (size_t i = 0; i < owner.list(key).size(); ++i) paths.push_back(owner.path(key + "." + std::to_string(i)));
  } else {
    paths = {owner.path(key)};
  }
  std::vector<std::filesystem::path> out;
  for (const std::string& p : paths) {
    std::error_code ec;
    const std::filesystem::path c = std::filesystem::weakly_canonical(p, ec);
    out.push_back(ec ? std::filesystem::path(p).lexically_normal() : c);
  }
  return out;
}

// `data.<key>` in [0, 1) and finite; 0 when absent.
double read_fraction(const Config& data, const std::string& key) {
  if (!data.has(key)) return 0;
  const double f = data.get<double>(key);
  if (!(std::isfinite(f) && f >= 0 && f < 1)) data.fail(key, "must be a finite number in [0, 1), got " + std::to_string(f));
  return f;
}

// A test file that is also a training or validation file: the reported
// error would not be a held-out error.
void refuse_overlap(const Config& data, const std::string& other) {
  if (!data.has(other)) return;
  const std::vector<std::filesystem::path> test = named_files(data, "test"), named = named_files(data, other);
  for (const std::filesystem::path& t : test)
    for (const std::filesystem::path& o : named)
      if (t == o)
        data.fail("test", "overlaps data." + other + ": " + t.string() +
                              " is named by both (a test split must be held out of training and validation)");
}

}  // namespace

TrajectorySet load_trajectory_file(const std::string& path, std::vector<std::string>* notes, bool allow_missing) {
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext == ".yaml" || ext == ".yml") return import_csv(path, notes);
  return read_trajectories(path, allow_missing);
}

TrajectorySet load_trajectory_files(const Config& owner, const std::string& key, std::string& source,
                                    std::vector<std::string>* notes, bool allow_missing) {
  std::vector<std::string> paths;
  if (owner.is_list(key)) {
    const size_t n = owner.list(key).size();
    if (n == 0) owner.fail(key, "expected at least one file");
    for (size_t i = 0; i < n; ++i) paths.push_back(owner.path(key + "." + std::to_string(i)));
  } else {
    paths = {owner.path(key)};
  }
  TrajectorySet all;
  for (size_t i = 0; i < paths.size(); ++i) {
    const std::string& path = paths[i];
    const std::string item = owner.is_list(key) ? key + "." + std::to_string(i) : key;
    TrajectorySet set;
    try {
      set = load_trajectory_file(path, notes, allow_missing);
    } catch (const DataError& e) {
      // The data's own message first (file, dataset, expected vs actual),
      // then where the config named it.
      throw DataError(std::string(e.what()) + " (" + owner.named_by(item) + ")");
    } catch (const ConfigError& e) {  // a CSV import description
      throw ConfigError(std::string(e.what()) + " (" + owner.named_by(item) + ")");
    }
    if (all.trajectories.empty()) all.meta = set.meta;
    for (auto& t : set.trajectories) {
      if (paths.size() > 1) t.name = std::filesystem::path(path).stem().string() + "_" + t.name;
      all.trajectories.push_back(std::move(t));
    }
    source += (source.empty() ? "" : ", ") + path;
  }
  return all;
}

DataSplit load_data(const Config& data, const Model<double>& model, std::vector<std::string>* notes,
                    bool allow_missing) {
  data.check_known_keys({"train", "validation", "validation_fraction", "test", "test_fraction", "max_samples",
                         "targets", "velocity"});
  const std::optional<DerivativeOptions> velocity = read_velocity_option(data);
  if (velocity && data.has("targets")) data.fail("velocity", "applies to recordings, not to data.targets");
  DataSplit split;
  if (data.has("targets")) {
    if (data.has("train")) data.fail("targets", "give either data.train or data.targets, not both");
    for (const char* key : {"test", "test_fraction"})
      if (data.has(key)) data.fail(key, "applies to recordings, not to data.targets");
    split.train = targets_as_trajectories(data, model);
    split.train_source = data.where("targets");
    split.targets = true;
    return split;
  }
  if (data.has("validation") && data.has("validation_fraction"))
    data.fail("validation_fraction", "give either validation or validation_fraction");
  if (data.has("test") && data.has("test_fraction")) data.fail("test_fraction", "give either test or test_fraction");
  const double f_validation = read_fraction(data, "validation_fraction");
  const double f_test = read_fraction(data, "test_fraction");
  if (data.has("test")) {
    refuse_overlap(data, "train");
    refuse_overlap(data, "validation");
  }
  split.train = load_trajectory_files(data, "train", split.train_source, notes, allow_missing);
  if (data.has("validation"))
    split.validation = load_trajectory_files(data, "validation", split.validation_source, notes, allow_missing);
  if (data.has("test")) split.test = load_trajectory_files(data, "test", split.test_source, notes, allow_missing);
  // Fractions: [train | validation | test] in the training files' order.
  const size_t n = split.train.trajectories.size();
  const size_t n_validation = static_cast<size_t>(std::floor(f_validation * static_cast<double>(n)));
  const size_t n_test = static_cast<size_t>(std::floor(f_test * static_cast<double>(n)));
  if (n_validation + n_test >= n && (n_validation + n_test) > 0)
    data.fail(data.has("test_fraction") ? "test_fraction" : "validation_fraction",
              "validation_fraction " + std::to_string(f_validation) + " and test_fraction " + std::to_string(f_test) +
                  " of " + std::to_string(n) + " trajectories take " + std::to_string(n_validation) + " + " +
                  std::to_string(n_test) + ", leaving no training trajectory");
  auto take_last = [&](size_t count, TrajectorySet& into, std::string& source, const std::string& what) {
    const size_t m = split.train.trajectories.size();
    into.meta = split.train.meta;
    for (size_t k = m - count; k < m; ++k) into.trajectories.push_back(split.train.trajectories[k]);
    split.train.trajectories.resize(m - count);
    source = split.train_source + " (" + what + ")";
  };
  if (data.has("test_fraction"))
    take_last(n_test, split.test, split.test_source, "last " + std::to_string(n_test) + " trajectories");
  if (data.has("validation_fraction"))
    take_last(n_validation, split.validation, split.validation_source,
              data.has("test_fraction") ? std::to_string(n_validation) + " trajectories before the test fraction's"
                                        : "last " + std::to_string(n_validation) + " trajectories");
  const long long max_samples = data.get_int_in_range("max_samples", 0, 0, 1LL << 40);
  if (max_samples == 1) data.fail("max_samples", "must be 0 (no cut) or >= 2");
  if (max_samples > 0)
    for (TrajectorySet* set : {&split.train, &split.validation, &split.test})
      for (Trajectory& t : set->trajectories) cut(t, max_samples);
  if (split.train.trajectories.empty()) throw DataError(split.train_source + ": no training trajectories");
  validate_against_model(split.train, model, split.train_source, false, allow_missing);
  if (!split.validation.trajectories.empty())
    validate_against_model(split.validation, model, split.validation_source, false, allow_missing);
  if (!split.test.trajectories.empty()) validate_against_model(split.test, model, split.test_source, false, allow_missing);
  if (velocity) {
    derive_velocities(split.train, *velocity, split.train_source);
    derive_velocities(split.validation, *velocity, split.validation_source);
    derive_velocities(split.test, *velocity, split.test_source);
  }
  return split;
}

void validate_against_model(const TrajectorySet& set, const Model<double>& model, const std::string& source,
                            bool require_tau, bool allow_missing) {
  TrajectoryExpectations expect;
  expect.nq = model.nq;
  expect.nv = model.nv;
  expect.joint_names = model.velocity_names();
  expect.require_tau = require_tau;
  expect.allow_missing = allow_missing;
  validate_trajectories(set, expect, source);
}

std::vector<std::string> plausibility_warnings(const TrajectorySet& set, const Model<double>& model,
                                               const std::string& source) {
  std::vector<std::string> out;
  auto number = [](double v) {
    std::ostringstream s;
    s.precision(4);
    s << v;
    return s.str();
  };
  for (const Trajectory& t : set.trajectories) {
    const std::string where = source + ":/trajectories/" + t.name;
    for (const Joint<double>& j : model.joints) {
      if (j.nq != 1 || !(j.upper - j.lower < 1e29)) continue;
      const double margin = 0.1 * (j.upper - j.lower);
      // Missing samples (NaN) do not count.
      const double lo = t.q.col(j.idx_q).minCoeff<Eigen::PropagateNumbers>();
      const double hi = t.q.col(j.idx_q).maxCoeff<Eigen::PropagateNumbers>();
      if (lo < j.lower - margin || hi > j.upper + margin)
        out.push_back(where + "/q: joint '" + j.name + "' spans [" + number(lo) + ", " + number(hi) +
                      "], outside its limits [" + number(j.lower) + ", " + number(j.upper) + "]");
    }
    const double q_max = t.q.cwiseAbs().maxCoeff<Eigen::PropagateNumbers>();
    const double qd_max = t.qd.cwiseAbs().maxCoeff<Eigen::PropagateNumbers>();
    if (q_max > 1e3) out.push_back(where + "/q: values up to " + number(q_max) + " (implausible for positions)");
    if (qd_max > 1e4) out.push_back(where + "/qd: values up to " + number(qd_max) + " (implausible for velocities)");
    if (t.size() > 1) {
      const double dt_max = (t.time.tail(t.size() - 1) - t.time.head(t.size() - 1)).maxCoeff();
      if (dt_max > 10) out.push_back(where + "/time: a step of " + number(dt_max) + " s between samples");
    }
  }
  return out;
}

TrajectoryMetadata trajectory_metadata(const Model<double>& model, const std::string& generator,
                                       const std::string& parameters_json, long long seed) {
  TrajectoryMetadata meta;
  meta.model = model.name;
  meta.joint_names = model.velocity_names();
  meta.q_names = model.position_names();
  meta.generator = generator;
  meta.parameters_json = parameters_json;
  meta.seed = seed;
  return meta;
}

}  // namespace neuralsim
