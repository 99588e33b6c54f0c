// import-csv: writes an HDF5 trajectory file from a CSV import description
// (docs/data-format.md, "CSV import"). See README.md.
#include "import_csv/import_job.hpp"

int main(int argc, char** argv) {
  neuralsim::Tool tool(
      {"import-csv", "Import CSV logs into an HDF5 trajectory file, as described by a YAML import description.", ""});
  return tool.run(argc, argv, neuralsim::run_import);
}
