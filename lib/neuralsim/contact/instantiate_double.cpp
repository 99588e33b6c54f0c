// Explicit instantiation of the contact layer for double.
#include "neuralsim/contact/contact_system.hpp"

namespace neuralsim {
NEURALSIM_CONTACT_TEMPLATES(, double)
}  // namespace neuralsim
