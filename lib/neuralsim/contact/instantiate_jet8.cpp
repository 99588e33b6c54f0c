// Explicit instantiation of the contact layer for Jet8.
#include "neuralsim/contact/contact_system.hpp"

namespace neuralsim {
NEURALSIM_CONTACT_TEMPLATES(, Jet8)
}  // namespace neuralsim
