#include "neuralsim/parameters/named_parameter.hpp"

namespace neuralsim {
namespace {

constexpr const char* kContactPrefix = "contact.";
constexpr const char* kInitialPrefix = "initial.";
constexpr const char* kInitialVelocityPrefix = "initial.qd.";
constexpr const char* kLogCholeskyInfix = ".log_cholesky.";
constexpr const char* kControlsPrefix = "controls.";
constexpr const char* kControlDelay = "controls.delay";
constexpr const char* kObservePrefix = "observe.";
constexpr const char* kSensorDelays[2] = {"observe.q.delay", "observe.qd.delay"};
constexpr const char* kImuPrefix = "imu.";
constexpr const char* kTorqueConstantSuffix = ".torque_constant";
constexpr const char* kImuForms = "imu.<sensor>.{gyro,accel}_gain, imu.<sensor>.{gyro,accel}_bias.{x,y,z}";

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// imu.<sensor>.<quantity>: the quantity after the sensor's name (which may
// hold dots: the longest known suffix wins).
bool resolve_imu(const std::string& name, NamedParameter& p) {
  static const char* suffixes[] = {".gyro_gain",     ".accel_gain",     ".gyro_bias.x",  ".gyro_bias.y",
                                   ".gyro_bias.z",   ".accel_bias.x",   ".accel_bias.y", ".accel_bias.z"};
  const std::string rest = name.substr(std::string(kImuPrefix).size());
  for (int i = 0; i < 8; ++i) {
    const std::string suffix = suffixes[i];
    if (rest.size() <= suffix.size() || rest.compare(rest.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    p.kind = ParameterKind::kImu;
    p.sensor = rest.substr(0, rest.size() - suffix.size());
    p.channel = i < 2 ? i : (i < 5 ? 0 : 1);
    p.axis = i < 2 ? -1 : (i - 2) % 3;
    return true;
  }
  return false;
}

std::string join(const std::vector<std::string>& items, const std::string& prefix = "") {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + prefix + s;
  return out;
}

}  // namespace

const std::vector<std::string>& log_cholesky_coordinate_names() {
  static const std::vector<std::string> names = {"alpha", "d1", "d2", "d3", "s12", "s23", "s13", "t1", "t2", "t3"};
  return names;
}

std::optional<NamedParameter> resolve_named_parameter(const std::string& name, const Model<double>& model,
                                                      bool has_contact) {
  NamedParameter p;
  p.name = name;
  if (starts_with(name, kContactPrefix)) {
    if (!has_contact) return std::nullopt;
    const auto id = find_contact_parameter(name);
    if (!id) return std::nullopt;
    p.kind = ParameterKind::kContact;
    p.contact = *id;
    return p;
  }
  if (starts_with(name, kControlsPrefix)) {
    if (name != kControlDelay) return std::nullopt;
    p.kind = ParameterKind::kControlDelay;
    return p;
  }
  if (starts_with(name, kImuPrefix)) {
    if (!resolve_imu(name, p)) return std::nullopt;
    return p;
  }
  if (starts_with(name, kObservePrefix)) {
    for (int c = 0; c < 2; ++c)
      if (name == kSensorDelays[c]) {
        p.kind = ParameterKind::kSensorDelay;
        p.channel = c;
        return p;
      }
    return std::nullopt;
  }
  if (starts_with(name, kInitialPrefix)) {
    if (!starts_with(name, kInitialVelocityPrefix)) return std::nullopt;
    const std::vector<std::string> coords = model.velocity_names();
    const std::string coord = name.substr(std::string(kInitialVelocityPrefix).size());
    for (size_t i = 0; i < coords.size(); ++i)
      if (coords[i] == coord) {
        p.kind = ParameterKind::kInitialVelocity;
        p.velocity_index = static_cast<int>(i);
        return p;
      }
    return std::nullopt;
  }
  if (const auto pos = name.find(kLogCholeskyInfix); starts_with(name, "link.") && pos != std::string::npos) {
    const int body = model.body_index(name.substr(5, pos - 5));
    const std::string coord = name.substr(pos + std::string(kLogCholeskyInfix).size());
    const auto& coords = log_cholesky_coordinate_names();
    for (size_t c = 0; c < coords.size(); ++c)
      if (body >= 0 && coords[c] == coord) {
        p.kind = ParameterKind::kLogCholesky;
        p.body = body;
        p.component = static_cast<int>(c);
        return p;
      }
    return std::nullopt;
  }
  // joint.<joint>.torque_constant: a motor's k_t, taken by the
  // motor-current residuals (no model quantity).
  if (const std::string suffix = kTorqueConstantSuffix;
      starts_with(name, "joint.") && name.size() > 6 + suffix.size() &&
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
    const int joint = model.joint_index(name.substr(6, name.size() - 6 - suffix.size()));
    if (joint < 0) return std::nullopt;
    p.kind = ParameterKind::kTorqueConstant;
    p.joint = joint;
    return p;
  }
  const auto ref = find_parameter(model, name);
  if (!ref) return std::nullopt;
  p.kind = ParameterKind::kModel;
  p.model = *ref;
  return p;
}

std::string unknown_parameter_message(const std::string& name, const Model<double>& model, bool has_contact) {
  if (starts_with(name, kContactPrefix)) {
    if (!has_contact)
      return "parameter '" + name + "' is a contact parameter, but the experiment has no 'contact:' section";
    return "unknown contact parameter '" + name + "' (valid: " + join(contact_parameter_names()) + ")";
  }
  if (starts_with(name, kControlsPrefix))
    return "unknown control parameter '" + name + "' (valid: " + kControlDelay + ")";
  if (starts_with(name, kImuPrefix)) return "unknown IMU parameter '" + name + "' (valid: " + kImuForms + ")";
  if (starts_with(name, kObservePrefix))
    return "unknown sensor parameter '" + name + "' (valid: " + kSensorDelays[0] + ", " + kSensorDelays[1] + ")";
  if (starts_with(name, kInitialPrefix))
    return "unknown initial-state parameter '" + name + "' (valid: " + join(model.velocity_names(), kInitialVelocityPrefix) +
           ")";
  if (name.find(kLogCholeskyInfix) != std::string::npos)
    return "unknown log-Cholesky coordinate '" + name + "' (valid: link.<body>.log_cholesky.{" +
           join(log_cholesky_coordinate_names()) + "})";
  return "unknown parameter '" + name + "' for model '" + model.name + "' (valid: " + join(parameter_names(model)) +
         "; also: link.<body>.log_cholesky.<coordinate>, initial.qd.<velocity coordinate>, controls.delay, observe.{q,qd}.delay, " +
         kImuForms + ", joint.<joint>.torque_constant" +
         (has_contact ? ", contact.<parameter>" : "") + ")";
}

double named_parameter_value(const NamedParameter& p, const Model<double>& model,
                             const ContactParameters<double>* contact, const Eigen::VectorXd* qd0) {
  switch (p.kind) {
    case ParameterKind::kModel: return get_parameter(model, p.model);
    case ParameterKind::kContact:
      if (!contact) throw InvalidArgument("named_parameter_value: '" + p.name + "' needs the contact parameters");
      return get_contact_parameter(*contact, p.contact);
    case ParameterKind::kInitialVelocity: return qd0 ? (*qd0)[p.velocity_index] : 0.0;
    case ParameterKind::kControlDelay:
    case ParameterKind::kSensorDelay:
      throw InvalidArgument("named_parameter_value: '" + p.name + "' is a delay of the experiment, not a model quantity");
    case ParameterKind::kImu: return p.axis < 0 ? 1.0 : 0.0;  // an IMU is calibrated until fitted
    case ParameterKind::kTorqueConstant: return 1.0;               // current = torque until fitted
    case ParameterKind::kLogCholesky:
      return log_cholesky_from_inertia(model.bodies[p.body].inertia, "link '" + model.bodies[p.body].name + "'")[p.component];
  }
  return 0.0;
}

}  // namespace neuralsim
