// The Python interpreter that runs the project's helper scripts (plots,
// h5py checks). It needs numpy, h5py and matplotlib, which scripts/setup.sh
// installs as Debian packages for Debian's interpreter, not for whatever
// `python3` is first on PATH.
#pragma once

#include <string>

namespace neuralsim {

// $NEURALSIM_PYTHON if set and non-empty, else the build's default (CMake
// cache variable NEURALSIM_PYTHON, default /usr/bin/python3).
std::string python_interpreter();

// The path of a helper script of scripts/ (e.g. "plot_fit.py").
std::string helper_script(const std::string& name);

}  // namespace neuralsim
