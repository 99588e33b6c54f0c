// Writing an HDF5 file so that a failed write is an ordinary one-line error
// (atomic_file.hpp) and nothing else.
//
// HDF5 1.10 does not survive a write that fails on disk (a full disk, an
// I/O error): closing the file then fails as well and leaves the file's ID
// behind, so the C++ API's destructors crash, or HDF5's exit-time cleanup
// does (H5close from __cxa_finalize), after printing HDF5's error stack. So
// HDF5 never writes to disk here: the file is built in memory (the core
// driver without a backing store), its image taken (H5Fget_file_image), and
// the image written by write_text_atomic like every other output. The cost:
// the file's size in memory, twice while the image is copied out.
#pragma once

#include <H5Cpp.h>

#include <functional>
#include <string>

namespace neuralsim::hdf5 {

// Builds a new HDF5 file with `fill` and replaces `path` with it
// atomically. HDF5 exceptions thrown while filling (or taking the image)
// pass through, for the caller to name the object; every object `fill`
// opened is closed by then (in memory, closing cannot fail). A failed
// write is write_text_atomic's ConfigError.
void write_file_atomic(const std::string& path, const std::function<void(H5::H5File&)>& fill);

}  // namespace neuralsim::hdf5
