// The version and source revision of this build, from one generated source
// file (cmake/write_version.cmake), so that a new revision relinks the
// tools instead of rebuilding the library.
#pragma once

namespace neuralsim {

const char* version();       // "0.1.0"
const char* git_revision();  // "0123abcd4567", "…-dirty" with local changes, or "unknown"

}  // namespace neuralsim
