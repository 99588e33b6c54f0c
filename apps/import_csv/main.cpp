// import-csv: writes an HDF5 trajectory file from a CSV import description
// (docs/data-format.md, "CSV import"). See README.md.
#include "import_csv/import_job.hpp"

int main(int argc, char** argv) {
  neuralsim::AppOptions opts;
  opts.out = "out/import-csv";
  neuralsim::CommandLine command_line(
      "Import CSV logs into an HDF5 trajectory file, as described by a YAML import description.", opts);
  return neuralsim::run_app(argc, argv, command_line,
                            [](const neuralsim::AppOptions& o) { return neuralsim::run_import(o); });
}
