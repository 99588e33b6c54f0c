#include "neuralsim/io/hdf5_attributes.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>

// GCC defines __SANITIZE_ADDRESS__, clang answers __has_feature.
#if defined(__SANITIZE_ADDRESS__)
#define NEURALSIM_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NEURALSIM_UNDER_ASAN 1
#endif
#endif
#ifndef NEURALSIM_UNDER_ASAN
#define NEURALSIM_UNDER_ASAN 0
#endif

namespace neuralsim::hdf5 {
namespace {

unsigned long long file_bytes(const std::string& file) {
  std::error_code ec;
  const auto n = std::filesystem::file_size(file, ec);
  return ec ? 0 : static_cast<unsigned long long>(n);
}

// The address space this process maps now (VmSize), in bytes.
unsigned long long mapped_bytes() {
  std::ifstream in("/proc/self/statm");
  unsigned long long pages = 0;
  in >> pages;
  return pages * static_cast<unsigned long long>(sysconf(_SC_PAGESIZE));
}

// A variable-length read of a `file`'s attribute needs at most a few times
// the file; anything beyond is a corrupt length.
unsigned long long vlen_budget(const std::string& file) { return (256ULL << 20) + 16ULL * file_bytes(file); }

// Runs a variable-length read under the address-space cap; a failure there
// is most likely a corrupt length, which the message says.
template <class F>
void read_capped(const std::string& file, const std::string& object, F&& read) {
  const unsigned long long budget = vlen_budget(file);
  try {
    const AddressSpaceCap cap(budget);
    read();
  } catch (const H5::Exception& e) {
    fail(file, object, error_text(e) + " (a variable-length string asks for more than " +
                           std::to_string(budget >> 20) + " MiB: corrupt length?)");
  }
}

std::vector<std::string> read_vlen_strings(const H5::Attribute& attr, hssize_t n, const std::string& file,
                                           const std::string& object) {
  const H5::StrType type = attr.getStrType();
  const H5::DataSpace space = attr.getSpace();
  std::vector<char*> buffer(static_cast<size_t>(n), nullptr);
  read_capped(file, object, [&] { attr.read(type, buffer.data()); });
  std::vector<std::string> values;
  for (char* s : buffer) values.emplace_back(s ? s : "");
  H5Dvlen_reclaim(type.getId(), space.getId(), H5P_DEFAULT, buffer.data());
  return values;
}

std::vector<std::string> read_fixed_strings(const H5::Attribute& attr, hssize_t n) {
  const H5::StrType type = attr.getStrType();
  const size_t len = type.getSize();
  std::vector<char> buffer(static_cast<size_t>(n) * len);
  attr.read(type, buffer.data());
  std::vector<std::string> values;
  for (hssize_t i = 0; i < n; ++i) {
    const char* begin = buffer.data() + i * len;
    values.emplace_back(begin, strnlen(begin, len));
  }
  return values;
}

}  // namespace

void fail(const std::string& file, const std::string& object, const std::string& what) {
  std::string msg = file + ":" + object + ": " + what;
  std::replace(msg.begin(), msg.end(), '\n', ' ');
  throw DataError(msg);
}

std::string error_text(const H5::Exception& e) {
  return "HDF5 error in " + e.getFuncName() + ": " + e.getDetailMsg();
}

std::string shape_string(const std::vector<hsize_t>& dims) {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + ")";
}

AddressSpaceCap::AddressSpaceCap(unsigned long long extra_bytes) {
#if !NEURALSIM_UNDER_ASAN
  rlimit old{};
  if (getrlimit(RLIMIT_AS, &old) != 0) return;
  const unsigned long long wanted = mapped_bytes() + extra_bytes;
  if (old.rlim_cur != RLIM_INFINITY && old.rlim_cur <= wanted) return;  // already tighter
  rlimit cap = old;
  cap.rlim_cur = static_cast<rlim_t>(wanted);
  if (setrlimit(RLIMIT_AS, &cap) != 0) return;
  old_soft_ = old.rlim_cur;
  old_hard_ = old.rlim_max;
  active_ = true;
#else
  (void)extra_bytes;
#endif
}

AddressSpaceCap::~AddressSpaceCap() {
  if (!active_) return;
  rlimit old{};
  old.rlim_cur = static_cast<rlim_t>(old_soft_);
  old.rlim_max = static_cast<rlim_t>(old_hard_);
  setrlimit(RLIMIT_AS, &old);
}

bool has_attr(const H5::H5Object& obj, const char* name, const std::string& file, const std::string& object) {
  return with_context(file, object, [&] { return obj.attrExists(name); });
}

std::string read_string_attr(const H5::H5Object& obj, const char* name, const std::string& file,
                             const std::string& object) {
  if (!has_attr(obj, name, file, object)) fail(file, object, "attribute missing (expected a string)");
  return with_context(file, object, [&] {
    H5::Attribute attr = obj.openAttribute(name);
    if (attr.getTypeClass() != H5T_STRING) fail(file, object, "expected a string attribute");
    if (attr.getSpace().getSimpleExtentNpoints() != 1) fail(file, object, "expected a scalar string attribute");
    const H5::StrType type = attr.getStrType();
    if (!type.isVariableStr() && type.getSize() > file_bytes(file))
      fail(file, object, "declares a string longer than the file");
    std::string value;
    if (type.isVariableStr()) {
      read_capped(file, object, [&] { attr.read(type, value); });
    } else {
      attr.read(type, value);
    }
    return value;
  });
}

std::vector<std::string> read_string_array_attr(const H5::H5Object& obj, const char* name, hssize_t max_count,
                                                const std::string& file, const std::string& object) {
  return with_context(file, object, [&] {
    H5::Attribute attr = obj.openAttribute(name);
    if (attr.getTypeClass() != H5T_STRING) fail(file, object, "expected a string array");
    const H5::DataSpace space = attr.getSpace();
    if (space.getSimpleExtentNdims() > 1)
      fail(file, object, "expected a rank-1 string array, got rank " + std::to_string(space.getSimpleExtentNdims()));
    const hssize_t n = space.getSimpleExtentNpoints();
    if (n > max_count)
      fail(file, object, "expected at most " + std::to_string(max_count) + " names, got " + std::to_string(n));
    if (n <= 0) return std::vector<std::string>{};
    const H5::StrType type = attr.getStrType();
    if (!type.isVariableStr() &&
        static_cast<long double>(n) * type.getSize() > static_cast<long double>(file_bytes(file)) + 4096.0L)
      fail(file, object, "declares " + std::to_string(n) + " strings, more than the file can hold");
    return type.isVariableStr() ? read_vlen_strings(attr, n, file, object) : read_fixed_strings(attr, n);
  });
}

long long read_int_attr(const H5::H5Object& obj, const char* name, const std::string& file,
                        const std::string& object) {
  return with_context(file, object, [&] {
    H5::Attribute attr = obj.openAttribute(name);
    if (attr.getTypeClass() != H5T_INTEGER || attr.getSpace().getSimpleExtentNpoints() != 1)
      fail(file, object, "expected a scalar integer attribute");
    std::int64_t v = 0;
    attr.read(H5::PredType::NATIVE_INT64, &v);
    return static_cast<long long>(v);
  });
}

H5::StrType vlen_string_type() {
  H5::StrType type(H5::PredType::C_S1, H5T_VARIABLE);
  type.setCset(H5T_CSET_UTF8);
  return type;
}

void write_string_attr(H5::H5Object& obj, const char* name, const std::string& value) {
  const H5::StrType type = vlen_string_type();
  H5::Attribute attr = obj.createAttribute(name, type, H5::DataSpace(H5S_SCALAR));
  attr.write(type, value);
}

void write_string_array_attr(H5::H5Object& obj, const char* name, const std::vector<std::string>& values) {
  std::vector<const char*> pointers;
  for (const std::string& v : values) pointers.push_back(v.c_str());
  const hsize_t dims[1] = {values.size()};
  const H5::StrType type = vlen_string_type();
  H5::Attribute attr = obj.createAttribute(name, type, H5::DataSpace(1, dims));
  if (!pointers.empty()) attr.write(type, pointers.data());
}

void write_int_attr(H5::H5Object& obj, const char* name, long long value) {
  const std::int64_t v = value;
  H5::Attribute attr = obj.createAttribute(name, H5::PredType::STD_I64LE, H5::DataSpace(H5S_SCALAR));
  attr.write(H5::PredType::NATIVE_INT64, &v);
}

}  // namespace neuralsim::hdf5
