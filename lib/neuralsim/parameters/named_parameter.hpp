// Every quantity an experiment can set or estimate by name, resolved in one
// place. The kinds of names:
//   model parameters      link.*, joint.*, gravity.*  (model/parameters.hpp)
//   inertial blocks       link.<body>.log_cholesky.{alpha,d1,d2,d3,s12,s23,s13,t1,t2,t3}:
//                         the ten log-Cholesky coordinates of a link's whole
//                         inertia (model/parameterization.hpp); any values
//                         give a physically consistent inertia
//   contact parameters    contact.*  (contact/contact_parameters.hpp; need
//                         the experiment's contact section)
//   initial velocities    initial.qd.<velocity coordinate>, e.g.
//                         initial.qd.ball_free.vx (Degrave's ball throw)
//   control delay         controls.delay: the actuation latency in seconds
//                         (step/control_signal.hpp), fixed by
//                         sim.controls.delay (or params: controls.delay, as
//                         simid's params.json holds it) and fitted by simid;
//                         no target in a model (step/replay.hpp takes it)
//   sensor delays         observe.q.delay, observe.qd.delay: the latency of
//                         a joint channel in seconds (estimate/observation.hpp),
//                         fixed by estimate.observe and fitted by simid
//   IMU calibration       imu.<sensor>.{gyro,accel}_gain (1 when not fitted)
//                         and imu.<sensor>.{gyro,accel}_bias.{x,y,z} (0):
//                         measured = gain · reading + bias per sensor of
//                         estimate.observe.imus (estimate/observation.hpp);
//                         resolved here by form, the sensor checked by simid
//   torque constants      joint.<joint>.torque_constant (1 when not fitted):
//                         a motor's torque per ampere, current = u / k_t per
//                         joint of estimate.observe.motor_currents
// Tools resolve a name once; set_named_parameter() then writes values in
// any scalar type with no string handling.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "neuralsim/contact/contact_parameters.hpp"
#include "neuralsim/core/errors.hpp"
#include "neuralsim/model/parameterization.hpp"
#include "neuralsim/model/parameters.hpp"

namespace neuralsim {

enum class ParameterKind { kModel, kLogCholesky, kContact, kInitialVelocity, kControlDelay, kSensorDelay, kImu,
                           kTorqueConstant };

struct NamedParameter {
  std::string name;
  ParameterKind kind = ParameterKind::kModel;
  ParameterRef model;                 // kModel
  int body = -1;                      // kLogCholesky: link index
  int component = -1;                 // kLogCholesky: 0..9 in the order of inertia_from_log_cholesky
  ContactParameterId contact{};       // kContact
  int velocity_index = -1;            // kInitialVelocity: index into q̇
  int channel = -1;                   // kSensorDelay: 0 = q, 1 = q̇; kImu: 0 = gyro, 1 = accelerometer
  std::string sensor;                 // kImu: the IMU's name (observe.imus)
  int axis = -1;                      // kImu: -1 = gain, 0..2 = bias x, y, z
  int joint = -1;                     // kTorqueConstant: joint index
};

// The ten coordinate names of a log-Cholesky block, in θ order.
const std::vector<std::string>& log_cholesky_coordinate_names();

// Resolves `name` against `model`; `has_contact` says whether contact.*
// names exist in this experiment. Returns nothing for an unknown name (the
// caller reports it with unknown_parameter_message and its location).
std::optional<NamedParameter> resolve_named_parameter(const std::string& name, const Model<double>& model,
                                                      bool has_contact);

// "unknown parameter 'x': valid names are ..." — names of the matching
// kind (model names, contact names or initial-velocity coordinates).
std::string unknown_parameter_message(const std::string& name, const Model<double>& model, bool has_contact);

// The current value of a scalar-valued parameter (kLogCholesky: the
// component of the link's current log-Cholesky coordinates; ModelError if
// its inertia is not physical). `contact` and `qd0` may be null when the
// parameter is not of that kind. kControlDelay, kSensorDelay:
// InvalidArgument (their values are sim.controls.delay and the observation's
// delays, which the caller holds).
double named_parameter_value(const NamedParameter& p, const Model<double>& model,
                             const ContactParameters<double>* contact, const Eigen::VectorXd* qd0);

// Writes the value of one scalar-valued parameter (not kLogCholesky, whose
// ten components are set together: ParameterSet::apply). Null targets of a
// kind the parameter does not have are allowed.
template <class S>
void set_named_parameter(const NamedParameter& p, const S& value, Model<S>* model, ContactParameters<S>* contact,
                         VecX<S>* qd0) {
  switch (p.kind) {
    case ParameterKind::kModel:
      if (model) set_parameter(*model, p.model, value);
      break;
    case ParameterKind::kContact:
      if (contact) set_contact_parameter(*contact, p.contact, value);
      break;
    case ParameterKind::kInitialVelocity:
      if (qd0) (*qd0)[p.velocity_index] = value;
      break;
    case ParameterKind::kLogCholesky:
      throw InvalidArgument("set_named_parameter: '" + p.name + "' is one component of a log-Cholesky block");
    case ParameterKind::kControlDelay:
    case ParameterKind::kSensorDelay:
    case ParameterKind::kImu:
    case ParameterKind::kTorqueConstant:
      throw InvalidArgument("set_named_parameter: '" + p.name + "' is no model quantity (the residuals take it)");
  }
}

}  // namespace neuralsim
