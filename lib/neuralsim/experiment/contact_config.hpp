// The `contact:` section of an experiment config (reference:
// docs/contact.md) read into ContactSettings.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "neuralsim/contact/contact_settings.hpp"
#include "neuralsim/io/config.hpp"

namespace neuralsim {

// The settings of the root's `contact:` section, or nothing when absent.
// ConfigError (file:line, key) for unknown keys, bad values, unknown bodies
// or parameter names. Appends a summary line (model, pairs, contacts) to
// `notes` and one line per unsupported shape pair to `warnings`.
std::optional<ContactSettings> read_contact_section(const Config& root, const Model<double>& model,
                                                    std::vector<std::string>& notes,
                                                    std::vector<std::string>& warnings);

// The section itself (no summary).
ContactSettings read_contact_settings(const Config& section, const Model<double>& model);

}  // namespace neuralsim
