// Explicit instantiation of the contact layer for Jet2.
#include "neuralsim/contact/contact_system.hpp"

namespace neuralsim {
NEURALSIM_CONTACT_TEMPLATES(, Jet2)
}  // namespace neuralsim
