// The `simid` tool: identify (lib/neuralsim/tools/identify.hpp) and its
// outputs (config reference: docs/simid.md). main.cpp only names the tool.
#pragma once

#include "common/tool.hpp"

namespace neuralsim {

struct SimidFlags {
  std::string evaluate_path;  // non-empty: evaluate this parameter file's values, no fit
  GradientCheckFlags gradients;  // --check-gradients: check, no fit
  bool design_excitation = false;  // --design-excitation: design an excitation trajectory, no fit
};

// Runs identify on the run's config and writes params.json,
// identifiability.txt, fit.h5, measured.h5, fit.png, report.html and the
// metrics.
RunReport run_simid(ToolRun& run, const SimidFlags& flags = {});

// --design-excitation (simid_excitation.cpp): excitation.h5, .csv, .json.
RunReport run_excitation_design(ToolRun& run, const SimidFlags& flags);

struct IdentificationResult;
// report.html (simid_report.cpp): parameters with intervals and warnings,
// correlations, identifiability in words, convergence, measured against
// fitted, residual histograms, provenance.
void write_simid_report(const IdentificationResult& r, ToolRun& run);
// summary.json's errors (per trajectory, windows, torque, consistency,
// missing entries) and its "inertials" and "base_parameters"
// (simid_metrics.cpp).
void evaluation_metrics(const IdentificationResult& r, nlohmann::json& m);
void estimate_metrics(const IdentificationResult& r, nlohmann::json& m);

}  // namespace neuralsim
