// The `augment:` section of an experiment config: a list of blueprints of
// neural augmentations (augment/blueprint.hpp), resolved against the model.
//
//   augment:
//     - name: drag                         # required, unique, no '/'
//       site: {link: segment0, quantity: drag_force, frame: world,
//              drag: {linear: 0.1, normal: 0.0, quadratic: 0.0}}
//       mode: replace                      # residual (default) | scale | replace
//       inputs: [link.segment0.linear_velocity, link.segment0.angle_of_attack]
//       hidden: [16, 16]                   # default [16, 16]; [] = a linear map
//       activation: tanh                   # hidden layers (default tanh)
//       output_activation: identity        # default identity
//       init: xavier_uniform               # | xavier_normal | he_uniform | he_normal
//       seed: 0                            # default: the entry's index
//       output_scale: 0.1                  # one number or one per output (default 1)
//       input_mean: [...]                  # optional normalization, one per input value
//       input_std: [...]                   # (without both: computed from the training data by train-augment)
//       zero_init_outputs: true            # output layer starts at zero (default: true for residual and
//                                          # scale sites whose output activation keeps 0, i.e. the hybrid
//                                          # starts at the analytical model; false otherwise)
//       weights: trained.h5                # optional, relative to the config file
//
// Sites, as a map with exactly one of joint / link / contact:
//   {joint: <joint>, quantity: torque | damping | friction | spring.stiffness | torque_offset}
//   {link: <link>, quantity: force | torque | drag_force | drag_coefficient,
//    frame: world | body (force, torque, drag_force), drag: {linear, normal, quadratic} (drag sites)}
//   {contact: all | <link>, quantity: normal_force | friction_force | friction_coefficient}
// or as a string: joint.<joint>.<quantity>, link.<link>.<quantity> (frame
// world, no analytical drag) or contact.<quantity> (every contact).
// Contact sites need the experiment's contact section with a force-level
// model (hunt_crossley or penalty).
//
// A weights file (io/network_file.hpp) must hold a network called <name>
// whose shape is the blueprint's: inputs, outputs, hidden widths and
// activations; its input names, when stored, must be the blueprint's
// (a k-valued input x is stored as x[0] … x[k-1]). The file gives the
// weights, the input normalization and the output scale: a trained model is
// replayed as trained, so an `output_scale` in the config that differs from
// the file's is a ConfigError naming the key (#38: an override silently
// changed the model).
//
// Errors: ConfigError with file:line:column and key for the config (unknown
// site, input, mode, activation, init, bad sizes), DataError naming the
// weights file and dataset for the file (wrong shape, NaN weights).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "neuralsim/augment/blueprint.hpp"
#include "neuralsim/contact/contact_settings.hpp"
#include "neuralsim/io/config.hpp"
#include "neuralsim/io/network_file.hpp"

namespace neuralsim {

// The blueprints of the root's `augment:` list (empty when absent).
// `contact` is the experiment's contact settings (null without contact).
std::vector<AugmentBlueprint> read_augment_section(const Config& root, const Model<double>& model,
                                                   const ContactSettings* contact);

// One list entry; `index` is its position (default seed).
AugmentBlueprint read_augment_blueprint(const Config& entry, const Model<double>& model,
                                        const ContactSettings* contact, int index);

// The site at `key` of `entry` (a string or a map, as above); ConfigError
// with the key's location for an unknown site or a contact site the
// experiment's contact model cannot serve.
AugmentSite read_augment_site(const Config& entry, const std::string& key, const Model<double>& model,
                              const ContactSettings* contact);
// ConfigError at `key` when `site` is a contact site that `contact` cannot serve.
void check_contact_site(const AugmentSite& site, const Config& entry, const std::string& key,
                        const ContactSettings* contact);
// A site in its string form (joint.<j>.<q>, link.<l>.<q>, contact.<q>), or nothing.
std::optional<AugmentSite> parse_augment_site(const std::string& text, const Model<double>& model);
// "valid sites: joint.<joint>.torque|..., ..." for messages.
std::string valid_augment_sites(const Model<double>& model);
// "unknown site 'x' (did you mean 'y'?); valid sites ...".
std::string unknown_site_message(const std::string& text, const Model<double>& model);

// The YAML of an `augment:` section holding `blueprints` (name, site, mode,
// inputs, architecture, seed, output scale; no weights): what discover hands
// to train-augment. read_augment_section reads it back to the same shapes.
std::string augment_section_yaml(const std::vector<AugmentBlueprint>& blueprints, const Model<double>& model,
                                 const std::string& comment);

// `init` of `entry`: xavier_uniform (default) | xavier_normal | he_uniform | he_normal.
nn::Init read_network_init(const Config& entry);

// The names a weights file stores for a blueprint's inputs (x, or x[0] … x[k-1]).
std::vector<std::string> augment_network_input_names(const AugmentBlueprint& blueprint);

// Replaces the blueprint's network by the one called blueprint.name in the
// weights file at `path`, after checking it against the blueprint's shape
// (DataError naming the file and dataset otherwise). `entry`, when given, is
// the blueprint's config entry: an output_scale there must be the file's.
void load_augment_weights(AugmentBlueprint& blueprint, const std::string& path, const Config* entry = nullptr);

// load_augment_weights for every blueprint from one file (`--weights`):
// each must find its network there. `root` (the config holding augment:)
// gives each blueprint's entry.
void load_augment_weights(std::vector<AugmentBlueprint>& blueprints, const std::string& path,
                          const Config* root = nullptr);

// Writes every blueprint's network (named after the blueprint, with its
// input names) to a weights file, atomically.
void write_augment_weights(const std::string& path, const std::vector<AugmentBlueprint>& blueprints);

}  // namespace neuralsim
