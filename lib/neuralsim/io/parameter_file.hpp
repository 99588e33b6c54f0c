// Parameter files: named values as simid writes them (params.json:
// {"parameters": {"name": {"value": v, ...}}}) or a flat {"name": v}.
// Read by every tool that takes `params_file:`; written by simid and
// train-augment.
#pragma once

#include <map>
#include <string>

namespace neuralsim {

// Every value, by name. DataError naming the file for a missing file,
// invalid JSON, a file over 64 MiB, a non-numeric or non-finite value.
std::map<std::string, double> read_parameter_file(const std::string& path);

}  // namespace neuralsim
