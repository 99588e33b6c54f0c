// Several configurations, one parameter vector: simid's `configurations:`
// (docs/simid.md "Several configurations"). Each configuration is the
// experiment with some of its top-level sections replaced, typically the
// same arm with and without a known payload, the same robot on two
// surfaces, or two robots of one series:
//
//   model: {file: arm.yaml}
//   configurations:
//     - {name: bare, data: {train: bare.h5}}
//     - {name: payload, params: {link.hand.mass: 1.5}, data: {train: payload.h5}}
//   estimate:
//     parameters:
//       - {name: joint.j1.damping}                         # shared
//       - {name: joint.j1.friction, per_configuration: true}  # one per configuration
//       - {name: link.hand.com.x, configurations: [payload]}  # only where it applies
//
// A configuration's `model`, `contact`, `params_file` and `data` replace
// the top-level ones; its `params` are added to the top-level `params`
// (its own values win). The joint parameter vector holds each shared
// parameter once and each per-configuration one once per configuration,
// named "<name>@<configuration>".
#pragma once

#include <string>
#include <vector>

#include "neuralsim/io/config.hpp"
#include "neuralsim/parameters/parameter_set.hpp"

namespace neuralsim {

struct ConfigurationEntry {
  std::string name;
  Config config;  // the root with the configuration's sections in place (Config::with_entries_of)
};

// The `configurations:` list of `root` (empty when absent). Checks: at
// least two entries, each a map with a unique plain `name` ([A-Za-z0-9_-],
// as it prefixes trajectory names in the outputs) and its own `data`, and
// no top-level `data`.
std::vector<ConfigurationEntry> read_configurations(const Config& root);

// The joint vector and where each configuration's parameters sit in it.
struct JointParameters {
  ParameterSet joint;
  std::vector<std::vector<int>> columns;  // per configuration: its entry i is joint variable columns[c][i]
  std::vector<int> shared;                // per joint variable: how many configurations use it
};

// Builds the joint vector from each configuration's own parameter set
// (read_parameter_set with its name, in the order of the configurations),
// following the entries of `est.parameters`. Refuses a configuration
// without a fitted parameter and configurations that share none (fit those
// one at a time). A shared parameter takes its initial value and bounds
// from the first configuration it applies to; a different model value in
// another configuration is a warning.
JointParameters joint_parameters(const Config& est, const std::vector<ConfigurationEntry>& configurations,
                                 const std::vector<const ParameterSet*>& local, std::vector<std::string>* warnings);

}  // namespace neuralsim
