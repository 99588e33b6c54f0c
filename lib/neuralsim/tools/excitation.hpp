// `simid --design-excitation`: the config's `excitation:` section read and
// checked, the model loaded, and estimate/excitation_design.hpp run
// (reference: docs/simid.md, "Excitation design").
//
//   ExcitationRun r = design_excitation_from_config({Config::load("configs/simid_excitation_geared_arm.yaml"), 1});
//   r.result.designed.std_errors;   // the predicted standard error of each base parameter
#pragma once

#include <string>
#include <vector>

#include "neuralsim/estimate/excitation_design.hpp"
#include "neuralsim/io/config.hpp"
#include "neuralsim/tools/run_context.hpp"

namespace neuralsim {

struct ExcitationRequest {
  Config config;       // the experiment with an `excitation:` section
  long long seed = 0;  // the random starts
};

struct ExcitationRun : RunReport {
  Model<double> model;               // `model:` with `params:` / `params_file:` applied
  ExcitationDesignOptions options;   // as read (limits with the model's filled in)
  std::vector<std::string> links;    // the links whose inertial parameters are identified
  ExcitationDesignResult result;
};

// The `excitation:` section of `config` as options: every key checked
// (known keys, finite numbers in range, one value or one per joint);
// ConfigError naming the key otherwise. The links by name in *links.
ExcitationDesignOptions read_excitation_options(const Config& section, const Model<double>& model, long long seed,
                                                std::vector<std::string>* links = nullptr);

// Reads the config (model, params; the `data:` and `estimate:` sections of
// a simid config are allowed and not used) and designs the excitation.
ExcitationRun design_excitation_from_config(const ExcitationRequest& request, const RunContext& context = {});

}  // namespace neuralsim
