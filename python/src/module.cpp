// The extension module neuralsim._neuralsim: exceptions, argument checks,
// interruptible calls, and the bindings of bindings.hpp.
#include <oneapi/tbb/global_control.h>

#include <chrono>
#include <cmath>
#include <future>
#include <mutex>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "neuralsim/core/errors.hpp"

namespace neuralsim::python {

namespace {

std::string shape_of(const py::array& a) {
  std::string s = "(";
  for (py::ssize_t i = 0; i < a.ndim(); ++i) s += (i ? ", " : "") + std::to_string(a.shape(i));
  return s + (a.ndim() == 1 ? ",)" : ")");
}

// A float64 array of `value`: numpy arrays keep their dtype (checked),
// sequences are converted.
py::array float_array(const py::handle& value, const char* argument) {
  py::array a;
  if (py::isinstance<py::array>(value)) {
    a = py::reinterpret_borrow<py::array>(value);
  } else if (py::isinstance<py::sequence>(value) || py::isinstance<py::float_>(value) ||
             py::isinstance<py::int_>(value)) {
    try {
      a = py::array_t<double>::ensure(value);
    } catch (...) {
      a = py::array();
    }
    if (!a) throw py::type_error(std::string(argument) + ": expected numbers (a float64 array), got a " +
                                 std::string(py::str(value.get_type().attr("__name__"))));
  } else {
    throw py::type_error(std::string(argument) + ": expected a float64 numpy array, got " +
                         std::string(py::str(value.get_type().attr("__name__"))));
  }
  if (!a.dtype().is(py::dtype::of<double>()))
    throw py::type_error(std::string(argument) + ": expected dtype float64, got " + std::string(py::str(a.dtype())));
  return a;
}

void check_finite(const double* p, py::ssize_t n, const char* argument) {
  for (py::ssize_t i = 0; i < n; ++i)
    if (!std::isfinite(p[i]))
      throw py::value_error(std::string(argument) + ": expected finite values, element " + std::to_string(i) +
                            " is " + std::to_string(p[i]));
}

}  // namespace

Eigen::VectorXd vector_arg(const py::handle& value, const char* argument, Eigen::Index n) {
  const py::array a = float_array(value, argument);
  if (a.ndim() != 1 || (n >= 0 && a.shape(0) != n))
    throw py::value_error(std::string(argument) + ": expected shape (" + (n >= 0 ? std::to_string(n) : "n") +
                          ",), got " + shape_of(a));
  const auto c = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(a);
  Eigen::VectorXd v = Eigen::Map<const Eigen::VectorXd>(c.data(), c.shape(0));
  check_finite(v.data(), v.size(), argument);
  return v;
}

py::array_t<double, py::array::c_style> rows_arg(const py::handle& value, const char* argument, Eigen::Index rows,
                                                 Eigen::Index cols) {
  const py::array a = float_array(value, argument);
  if (a.ndim() != 2 || (rows >= 0 && a.shape(0) != rows) || a.shape(1) != cols)
    throw py::value_error(std::string(argument) + ": expected shape (" + (rows >= 0 ? std::to_string(rows) : "T") +
                          ", " + std::to_string(cols) + "), got " + shape_of(a));
  auto c = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(a);
  check_finite(c.data(), c.size(), argument);
  return c;
}

Eigen::MatrixXd matrix_arg(const py::handle& value, const char* argument, Eigen::Index rows, Eigen::Index cols) {
  const auto c = rows_arg(value, argument, rows, cols);
  using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  return Eigen::Map<const RowMajor>(c.data(), c.shape(0), c.shape(1));
}

Config config_arg(const py::handle& config, const std::vector<std::string>& overrides) {
  if (py::isinstance<py::dict>(config)) {
    // JSON is YAML: the dict, dumped by Python's json module.
    const std::string text = py::str(py::module_::import("json").attr("dumps")(config));
    const std::string cwd = py::str(py::module_::import("os").attr("getcwd")());
    return Config::parse(text, cwd + "/<config dict>", overrides);
  }
  if (py::isinstance<py::str>(config) || py::hasattr(config, "__fspath__"))
    return Config::load(py::str(py::module_::import("os").attr("fspath")(config)), overrides);
  throw py::type_error("config: expected a YAML file path or a dict, got " +
                       std::string(py::str(config.get_type().attr("__name__"))));
}

namespace {

// Log lines of a run, queued by any thread, emitted by the Python thread.
class QueuedLog final : public RunObserver {
 public:
  bool logs(LogLevel level) const override { return level != LogLevel::kDebug || debug_; }
  void log(LogLevel level, const std::string& message) override {
    std::lock_guard<std::mutex> lock(mutex_);
    lines_.emplace_back(level, message);
  }
  void set_debug(bool debug) { debug_ = debug; }
  // Emits the queued lines to logging.getLogger("neuralsim"); holds the GIL.
  void flush(const py::object& logger) {
    std::vector<std::pair<LogLevel, std::string>> lines;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      lines.swap(lines_);
    }
    for (const auto& [level, message] : lines)
      logger.attr(level == LogLevel::kWarning ? "warning" : level == LogLevel::kInfo ? "info" : "debug")(message);
  }

 private:
  std::mutex mutex_;
  std::vector<std::pair<LogLevel, std::string>> lines_;
  bool debug_ = false;
};

}  // namespace

void run_interruptibly(const std::function<void(const RunContext&)>& work, int threads) {
  const py::object logger = py::module_::import("logging").attr("getLogger")("neuralsim");
  QueuedLog log;
  log.set_debug(py::cast<bool>(logger.attr("isEnabledFor")(10)));
  std::atomic<bool> stop{false};
  RunContext context;
  context.observer = &log;
  context.stop = &stop;
  std::future<void> done;
  // The KeyboardInterrupt, held until the work has stopped: left pending,
  // the log lines the work still writes meanwhile would call into Python
  // with an exception set (a SystemError replaced the KeyboardInterrupt).
  std::optional<py::error_already_set> interrupt;
  {
    py::gil_scoped_release release;
    done = std::async(std::launch::async, [&] {
      std::optional<tbb::global_control> cap;
      if (threads > 0) cap.emplace(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));
      work(context);
    });
  }
  for (;;) {
    bool ready = false;
    {
      py::gil_scoped_release release;
      ready = done.wait_for(std::chrono::milliseconds(50)) == std::future_status::ready;
    }
    // Python code runs here (logging handlers): a Ctrl-C that lands in it
    // raises there. The work must then stop before the exception leaves (the
    // future's destructor would wait for an uninterrupted run).
    try {
      log.flush(logger);
    } catch (py::error_already_set&) {
      stop = true;
      try {
        done.get();
      } catch (...) {
      }
      throw;
    }
    if (ready) break;
    if (!interrupt && PyErr_CheckSignals() != 0) {
      interrupt.emplace();  // fetches the KeyboardInterrupt and clears the error indicator
      stop = true;
    }
  }
  if (interrupt) {
    try {
      done.get();
    } catch (...) {
    }
    interrupt->restore();
    throw py::error_already_set();
  }
  done.get();  // rethrows the work's exception, translated below
}

}  // namespace neuralsim::python

PYBIND11_MODULE(_neuralsim, m) {
  namespace py = pybind11;
  using namespace neuralsim;
  m.doc() = "NeuralSim: differentiable rigid-body simulation, system identification and neural augmentation.";
  // The library's errors become the exception classes of neuralsim/errors.py
  // (bad inputs ValueErrors, numerical failures RuntimeErrors), with the
  // CLIs' messages.
  py::register_exception_translator([](std::exception_ptr p) {
    auto raise = [](const char* name, const std::exception& e) {
      const py::object cls = py::module_::import("neuralsim.errors").attr(name);
      PyErr_SetString(cls.ptr(), e.what());
    };
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ConfigError& e) {
      raise("ConfigError", e);
    } catch (const DataError& e) {
      raise("DataError", e);
    } catch (const ModelError& e) {
      raise("ModelError", e);
    } catch (const NumericalError& e) {
      raise("NumericalError", e);
    } catch (const InvalidArgument& e) {
      raise("InvalidArgumentError", e);
    }
  });
  python::bind_models(m);
  python::bind_simulation(m);
  python::bind_tools(m);
}
