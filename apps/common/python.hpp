// The Python interpreter that runs the project's helper scripts (plots,
// h5py checks). It needs numpy, h5py and matplotlib, which scripts/setup.sh
// installs as Debian packages for Debian's interpreter, not for whatever
// `python3` is first on PATH.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace neuralsim {

// $NEURALSIM_PYTHON if set and non-empty, else the build's default (CMake
// cache variable NEURALSIM_PYTHON, default /usr/bin/python3).
std::string python_interpreter();

// The path of a helper script of scripts/ (e.g. "plot_fit.py").
std::string helper_script(const std::string& name);

// Runs helper script `script` with `args` and "-" as its output: the script
// writes the PNG it draws to its standard output, and this returns it (the
// caller writes it atomically, like every output, so a full disk is our
// error to report, never a half-written PNG). Plots are optional, drawn
// after every result is written: without the interpreter, the script or
// matplotlib this logs one info line and returns nullopt.
std::optional<std::string> draw_plot(const std::string& script, const std::vector<std::string>& args);

}  // namespace neuralsim
