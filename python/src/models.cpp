// Models, their named physical parameters, and the rigid-body algorithms on
// numpy arrays.
#include <cmath>

#include "bindings.hpp"
#include "neuralsim/core/errors.hpp"
#include "neuralsim/dynamics/aba.hpp"
#include "neuralsim/dynamics/crba.hpp"
#include "neuralsim/dynamics/energy.hpp"
#include "neuralsim/dynamics/jacobian.hpp"
#include "neuralsim/dynamics/kinematics.hpp"
#include "neuralsim/dynamics/rnea.hpp"
#include "neuralsim/experiment/experiment.hpp"
#include "neuralsim/model/parameters.hpp"
#include "neuralsim/parameters/named_parameter.hpp"
#include "neuralsim/step/link_poses.hpp"

namespace neuralsim::python {
namespace {

// A view of a model's named physical parameters, as a mutable mapping.
struct ParameterView {
  ModelHandle handle;

  ParameterRef ref(const std::string& name) const {
    const std::optional<ParameterRef> p = find_parameter(handle->model, name);
    if (!p) {
      const py::object error = py::module_::import("neuralsim.errors").attr("UnknownParameterError");
      PyErr_SetString(error.ptr(), unknown_parameter_message(name, handle->model, false).c_str());
      throw py::error_already_set();
    }
    return *p;
  }
  double get(const std::string& name) const { return get_parameter(handle->model, ref(name)); }
  // Sets the value and checks the model stays physical (the old value is
  // kept when it would not).
  void set(const std::string& name, double value) {
    if (!std::isfinite(value)) throw py::value_error("parameters['" + name + "']: expected a finite value, got " + std::to_string(value));
    const ParameterRef p = ref(name);
    const double old = get_parameter(handle->model, p);
    set_parameter(handle->model, p, value);
    try {
      handle->model.validate();
    } catch (...) {
      set_parameter(handle->model, p, old);
      throw;
    }
    ++handle->generation;
  }
  std::vector<std::string> keys() const { return parameter_names(handle->model); }
};

Eigen::VectorXd q_of(const SharedModel& s, const py::handle& q) { return vector_arg(q, "q", s.model.nq); }
Eigen::VectorXd v_of(const SharedModel& s, const py::handle& v, const char* name) {
  return vector_arg(v, name, s.model.nv);
}

LinkRef link_of(const Model<double>& model, const std::string& name) {
  const std::optional<LinkRef> link = find_link(model, name);
  if (!link) throw ConfigError("link: the model '" + model.name + "' has no body or frame named '" + name + "'");
  return *link;
}

// World pose (position, quaternion x y z w) of a body or frame after forward kinematics.
std::pair<Eigen::Vector3d, Eigen::Vector4d> pose_of(const Model<double>& model, const Data<double>& data,
                                                   const LinkRef& link) {
  const int body = link.second >= 0 ? link.second : model.frames[-2 - link.second].body;
  const Transform<double>& X = data.X_world[body];  // E = R^T
  Eigen::Matrix3d R = X.E.transpose();
  Eigen::Vector3d p = X.r;
  if (link.second < 0) {
    const Transform<double>& F = model.frames[-2 - link.second].placement;
    p = X.r + R * F.r;
    R = R * F.E.transpose();
  }
  const Eigen::Quaterniond quat(R);
  return {p, Eigen::Vector4d(quat.x(), quat.y(), quat.z(), quat.w())};
}

ModelHandle load(const py::handle& path, bool floating_base, bool merge_fixed_joints, std::vector<std::string>* warnings) {
  const std::string file = py::str(py::module_::import("os").attr("fspath")(path));
  auto ends_with = [&file](const std::string& suffix) {
    return file.size() >= suffix.size() && file.compare(file.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  nlohmann::json section = ends_with(".urdf") ? nlohmann::json{{"urdf", file}, {"floating_base", floating_base},
                                                               {"merge_fixed_joints", merge_fixed_joints}}
                           : ends_with(".xml") ? nlohmann::json{{"mjcf", file}}
                                               : nlohmann::json{{"file", file}};
  const std::string cwd = py::str(py::module_::import("os").attr("getcwd")());
  auto handle = std::make_shared<SharedModel>();
  handle->model = load_model_section(Config::parse(section.dump(), cwd + "/<load_model>"), warnings);
  return handle;
}

}  // namespace

void bind_models(py::module_& m) {
  py::class_<SharedModel, ModelHandle> model(m, "Model", R"doc(
A rigid-body model (constant tree of bodies and joints) with named physical
parameters. Load one with neuralsim.load_model(path) (YAML, URDF, or MJCF for a .xml file).)doc");
  model
      .def_property_readonly("name", [](const SharedModel& s) { return s.model.name; })
      .def_property_readonly("nq", [](const SharedModel& s) { return s.model.nq; }, "Number of position coordinates.")
      .def_property_readonly("nv", [](const SharedModel& s) { return s.model.nv; }, "Number of velocity coordinates.")
      .def_property_readonly("body_names",
                             [](const SharedModel& s) {
                               std::vector<std::string> n;
                               for (const auto& b : s.model.bodies) n.push_back(b.name);
                               return n;
                             })
      .def_property_readonly("position_names", [](const SharedModel& s) { return s.model.position_names(); })
      .def_property_readonly("velocity_names", [](const SharedModel& s) { return s.model.velocity_names(); })
      .def_property_readonly("parameters", [](const ModelHandle& h) { return ParameterView{h}; },
                             "The named physical parameters (link.<body>.mass, joint.<joint>.damping, gravity.z, "
                             "...) as a mutable mapping; a value that makes the model unphysical is refused.")
      .def("copy", [](const SharedModel& s) { return std::make_shared<SharedModel>(SharedModel{s.model, 0}); },
           "An independent copy (its parameters change alone).")
      .def("__repr__", [](const SharedModel& s) {
        return "<neuralsim.Model '" + s.model.name + "': nq=" + std::to_string(s.model.nq) +
               ", nv=" + std::to_string(s.model.nv) + ", " + std::to_string(s.model.num_bodies()) + " bodies, " +
               std::to_string(parameter_names(s.model).size()) + " parameters>";
      });

  py::class_<ParameterView>(m, "Parameters", "The named physical parameters of a Model (a mutable mapping).")
      .def("__getitem__", &ParameterView::get)
      .def("__setitem__", &ParameterView::set)
      .def("__contains__", [](const ParameterView& v, const std::string& n) { return find_parameter(v.handle->model, n).has_value(); })
      .def("__len__", [](const ParameterView& v) { return v.keys().size(); })
      .def("__iter__", [](const ParameterView& v) { return py::iter(py::cast(v.keys())); })
      .def("keys", &ParameterView::keys, "Every parameter name, in the model's order.")
      .def("items",
           [](const ParameterView& v) {
             std::vector<std::pair<std::string, double>> out;
             for (const std::string& n : v.keys()) out.emplace_back(n, v.get(n));
             return out;
           })
      .def("bounds", [](const ParameterView& v, const std::string& name) { return parameter_bounds(v.ref(name)); },
           py::arg("name"), "The parameter's physical domain (lower, upper); ±inf where unbounded.")
      .def("vector",
           [](const ParameterView& v, const std::vector<std::string>& names) {
             Eigen::VectorXd x(static_cast<Eigen::Index>(names.size()));
             for (size_t i = 0; i < names.size(); ++i) x[static_cast<Eigen::Index>(i)] = v.get(names[i]);
             return x;
           },
           py::arg("names"), "The values of `names`, as a float64 vector.")
      .def("set_vector",
           [](ParameterView& v, const std::vector<std::string>& names, const py::handle& values) {
             const Eigen::VectorXd x = vector_arg(values, "values", static_cast<Eigen::Index>(names.size()));
             for (size_t i = 0; i < names.size(); ++i) v.set(names[i], x[static_cast<Eigen::Index>(i)]);
           },
           py::arg("names"), py::arg("values"), "Sets `names` to `values` (a float64 vector).")
      .def("__repr__", [](const ParameterView& v) {
        std::string s = "{";
        for (const std::string& n : v.keys()) s += (s.size() > 1 ? ", '" : "'") + n + "': " + py::str(py::float_(v.get(n))).cast<std::string>();
        return s + "}";
      });

  m.def(
      "load_model",
      [](const py::handle& path, bool floating_base, bool merge_fixed_joints) {
        std::vector<std::string> warnings;
        ModelHandle h = load(path, floating_base, merge_fixed_joints, &warnings);
        const py::object warn = py::module_::import("warnings").attr("warn");
        for (const std::string& w : warnings) warn(w);
        return h;
      },
      py::arg("path"), py::arg("floating_base") = false, py::arg("merge_fixed_joints") = true,
      "A model from a YAML model file, a URDF file or an MJCF file (.xml; missing meshes are skipped and MJCF elements with no counterpart listed in a warning).");

  // ---- rigid-body algorithms (one Data per call: these are for scripts, the
  // simulator's loops stay in C++).
  m.def("aba",
        [](const SharedModel& s, const py::handle& q, const py::handle& qd, const py::handle& tau) {
          Data<double> d(s.model);
          aba(s.model, d, q_of(s, q), v_of(s, qd, "qd"), v_of(s, tau, "tau"));
          return Eigen::VectorXd(d.qdd);
        },
        py::arg("model"), py::arg("q"), py::arg("qd"), py::arg("tau"),
        "Forward dynamics (articulated-body algorithm): q̈ from q, q̇ and the joint forces τ.");
  m.def("rnea",
        [](const SharedModel& s, const py::handle& q, const py::handle& qd, const py::handle& qdd) {
          Data<double> d(s.model);
          rnea(s.model, d, q_of(s, q), v_of(s, qd, "qd"), v_of(s, qdd, "qdd"));
          return Eigen::VectorXd(d.tau);
        },
        py::arg("model"), py::arg("q"), py::arg("qd"), py::arg("qdd"),
        "Inverse dynamics (recursive Newton–Euler): τ from q, q̇ and q̈.");
  m.def("crba",
        [](const SharedModel& s, const py::handle& q) {
          Data<double> d(s.model);
          crba(s.model, d, q_of(s, q));
          return Eigen::MatrixXd(d.M);
        },
        py::arg("model"), py::arg("q"), "The joint-space mass matrix M(q) (composite-rigid-body algorithm).");
  m.def("kinetic_energy",
        [](const SharedModel& s, const py::handle& q, const py::handle& qd) {
          Data<double> d(s.model);
          const Eigen::VectorXd v = v_of(s, qd, "qd");
          forward_kinematics(s.model, d, q_of(s, q), v);
          return kinetic_energy(s.model, d, v);
        },
        py::arg("model"), py::arg("q"), py::arg("qd"));
  m.def("potential_energy",
        [](const SharedModel& s, const py::handle& q) {
          Data<double> d(s.model);
          const Eigen::VectorXd x = q_of(s, q);
          forward_kinematics(s.model, d, x);
          return potential_energy(s.model, d, x);
        },
        py::arg("model"), py::arg("q"));
  m.def("link_pose",
        [](const SharedModel& s, const py::handle& q, const std::string& link) {
          Data<double> d(s.model);
          forward_kinematics(s.model, d, q_of(s, q));
          return pose_of(s.model, d, link_of(s.model, link));
        },
        py::arg("model"), py::arg("q"), py::arg("link"),
        "World pose of a body or frame: (position (3,), quaternion (4,) as x, y, z, w).");
  m.def("jacobian",
        [](const SharedModel& s, const py::handle& q, const std::string& link) {
          Data<double> d(s.model);
          forward_kinematics(s.model, d, q_of(s, q));
          const LinkRef l = link_of(s.model, link);
          Eigen::MatrixXd J(6, s.model.nv);
          if (l.second >= 0) point_jacobian(s.model, d, l.second, Eigen::Vector3d::Zero().eval(), J);
          else frame_jacobian(s.model, d, -2 - l.second, J);
          return J;
        },
        py::arg("model"), py::arg("q"), py::arg("link"),
        "6 × nv Jacobian of a body's or frame's origin, rows [ω; ṗ] in world axes.");
}

}  // namespace neuralsim::python
