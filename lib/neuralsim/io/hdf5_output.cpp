#include "neuralsim/io/hdf5_output.hpp"

#include <atomic>

#include "neuralsim/io/atomic_file.hpp"

namespace neuralsim::hdf5 {

namespace {

// The core driver grows its buffer by this much at a time.
constexpr size_t kCoreIncrement = size_t{1} << 20;

std::string image_of(const std::function<void(H5::H5File&)>& fill) {
  // The name only identifies the file inside HDF5 (no backing store);
  // unique, so two files being built never meet.
  static std::atomic<unsigned long> counter{0};
  H5::FileAccPropList access;
  access.setCore(kCoreIncrement, false);
  H5::H5File file("neuralsim-in-memory-" + std::to_string(counter++) + ".h5", H5F_ACC_TRUNC,
                  H5::FileCreatPropList::DEFAULT, access);
  fill(file);
  file.flush(H5F_SCOPE_GLOBAL);
  const ssize_t size = H5Fget_file_image(file.getId(), nullptr, 0);
  if (size < 0) throw H5::FileIException("H5Fget_file_image", "cannot take the file's image");
  std::string image(static_cast<size_t>(size), '\0');
  if (H5Fget_file_image(file.getId(), image.data(), image.size()) != size)
    throw H5::FileIException("H5Fget_file_image", "cannot copy the file's image");
  file.close();
  return image;
}

}  // namespace

void write_file_atomic(const std::string& path, const std::function<void(H5::H5File&)>& fill) {
  H5::Exception::dontPrint();  // errors are ours to report, in one line
  write_text_atomic(path, image_of(fill));
}

}  // namespace neuralsim::hdf5
