// The Python module `neuralsim` (pybind11): what its translation units share.
// Everything here converts between Python and the library; no library logic.
#pragma once

#include <pybind11/eigen.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "neuralsim/io/config.hpp"
#include "neuralsim/model/model.hpp"
#include "neuralsim/tools/run_context.hpp"

namespace neuralsim::python {

namespace py = pybind11;

// A model shared by Python objects (the model, its parameter view and the
// simulators built on it); `generation` counts parameter changes, so that a
// simulator knows when what it derived from the model is stale.
struct SharedModel {
  Model<double> model;
  std::uint64_t generation = 0;
};
using ModelHandle = std::shared_ptr<SharedModel>;

// A float64 vector of length n (n < 0: any), from a numpy array or a
// sequence; TypeError for another dtype, ValueError for another shape or a
// value that is not finite, naming `argument`, expected against actual.
Eigen::VectorXd vector_arg(const py::handle& value, const char* argument, Eigen::Index n);
// A C-contiguous float64 array of shape (rows, cols) (rows < 0: any) with
// finite values, viewing `value` without a copy when it already is one.
py::array_t<double, py::array::c_style> rows_arg(const py::handle& value, const char* argument, Eigen::Index rows,
                                                 Eigen::Index cols);
// A float64 matrix of `cols` columns (and `rows` rows when ≥ 0).
Eigen::MatrixXd matrix_arg(const py::handle& value, const char* argument, Eigen::Index rows, Eigen::Index cols);

// A config from a YAML path or a dict (paths in a dict are relative to the
// working directory), with "key=value" overrides.
Config config_arg(const py::handle& config, const std::vector<std::string>& overrides);

// Runs `work` on a worker thread with the GIL released. The calling thread
// checks for Python signals every 50 ms: a KeyboardInterrupt sets the stop
// flag that `work` polls, waits for it to return, and is raised. Messages
// the work logs through the context reach Python's `logging` (logger
// "neuralsim") from the calling thread. `threads` > 0 caps TBB's workers.
void run_interruptibly(const std::function<void(const RunContext&)>& work, int threads = 0);

void bind_models(py::module_& m);
void bind_simulation(py::module_& m);
void bind_tools(py::module_& m);

}  // namespace neuralsim::python
