// import-csv: writes an HDF5 trajectory file from a CSV import description
// (docs/data-format.md, "CSV import"). See README.md.
#include <CLI/CLI.hpp>

#include "import_csv/import_job.hpp"

int main(int argc, char** argv) {
  CLI::App app{"Import CSV logs into an HDF5 trajectory file, as described by a YAML import description."};
  neuralsim::AppOptions opts;
  opts.out = "out/import-csv";
  neuralsim::add_common_options(app, opts);
  return neuralsim::run_app(argc, argv, app, opts, [](const neuralsim::AppOptions& o) { return neuralsim::run_import(o); });
}
