// Explicit instantiation of the contact layer for Jet4.
#include "neuralsim/contact/contact_system.hpp"

namespace neuralsim {
NEURALSIM_CONTACT_TEMPLATES(, Jet4)
}  // namespace neuralsim
