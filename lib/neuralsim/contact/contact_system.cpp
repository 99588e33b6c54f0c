#include "neuralsim/contact/contact_system.hpp"

#include <spdlog/spdlog.h>

namespace neuralsim {

std::shared_ptr<ContactSystem<double>> install_contact(const ContactSettings& settings, const Model<double>& model,
                                                       Stepper<double>& stepper) {
  auto system = std::make_shared<ContactSystem<double>>(stepper.model(), model, settings);
  ContactSystem<double>::install_shared(stepper, system);
  return system;
}

std::shared_ptr<ContactSystem<double>> install_contact(const Config& contact_section, const Model<double>& model,
                                                       Stepper<double>& stepper) {
  const ContactSettings settings = read_contact_settings(contact_section, model);
  auto system = install_contact(settings, model, stepper);
  for (const std::string& pair : system->geometry().skipped_pairs())
    spdlog::warn("contact: ignoring {}", pair);
  return system;
}

}  // namespace neuralsim

namespace neuralsim {

std::optional<ContactSettings> contact_settings_from(const Config& root, const Model<double>& model) {
  if (!root.has("contact")) return std::nullopt;
  ContactSettings settings = read_contact_settings(root.at("contact"), model);
  const ContactGeometry<double> geometry(model, settings);
  spdlog::info("contact: model {}, {} pairs, up to {} contacts", contact_model_name(settings.model),
               geometry.pairs().size(), geometry.max_contacts());
  for (const std::string& pair : geometry.skipped_pairs()) spdlog::warn("contact: ignoring {}", pair);
  return settings;
}

}  // namespace neuralsim
