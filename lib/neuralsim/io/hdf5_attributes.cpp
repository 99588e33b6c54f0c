#include "neuralsim/io/hdf5_attributes.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
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

// Frees HDF5's variable-length buffers on every path, a failed read
// included (a conversion that fails half-way leaves some strings allocated).
struct VlenBuffer {
  VlenBuffer(const H5::StrType& type, const H5::DataSpace& space, size_t n)
      : type(type), space(space), pointers(n, nullptr) {}
  ~VlenBuffer() { H5Dvlen_reclaim(type.getId(), space.getId(), H5P_DEFAULT, pointers.data()); }
  VlenBuffer(const VlenBuffer&) = delete;
  VlenBuffer& operator=(const VlenBuffer&) = delete;
  const H5::StrType& type;
  const H5::DataSpace& space;
  std::vector<char*> pointers;
};

std::vector<std::string> read_vlen_strings(const H5::Attribute& attr, hssize_t n, const std::string& file,
                                           const std::string& object) {
  const H5::StrType type = attr.getStrType();
  const H5::DataSpace space = attr.getSpace();
  VlenBuffer buffer(type, space, static_cast<size_t>(n));
  read_capped(file, object, [&] { attr.read(type, buffer.pointers.data()); });
  std::vector<std::string> values;
  for (char* s : buffer.pointers) values.emplace_back(s ? s : "");
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

namespace {

// A read-only mapping of a whole file, unmapped on every path.
class MappedFile {
 public:
  explicit MappedFile(const std::string& file) {
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st {};
    if (::fstat(fd, &st) == 0 && st.st_size > 0) {
      void* p = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
      if (p != MAP_FAILED) {
        data_ = static_cast<const unsigned char*>(p);
        size_ = static_cast<size_t>(st.st_size);
      }
    }
    ::close(fd);
  }
  ~MappedFile() {
    if (data_) ::munmap(const_cast<unsigned char*>(data_), size_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  const unsigned char* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  const unsigned char* data_ = nullptr;
  size_t size_ = 0;
};

unsigned long long little_endian(const unsigned char* p, int bytes) {
  unsigned long long v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// "Size of lengths" from the superblock (spec §II.A): byte 14 in versions
// 0 and 1, byte 10 in versions 2 and 3. The superblock sits at 0, 512,
// 1024, ... (a user block may precede it). 8 when it cannot be read.
int length_size(const MappedFile& m) {
  static const unsigned char kSignature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  for (size_t at = 0; at + 16 <= m.size(); at = at ? 2 * at : 512) {
    if (std::memcmp(m.data() + at, kSignature, 8) != 0) continue;
    const unsigned version = m.data()[at + 8];
    const unsigned bytes = version <= 1 ? m.data()[at + 14] : m.data()[at + 10];
    return (bytes == 2 || bytes == 4 || bytes == 8) ? static_cast<int>(bytes) : 8;
  }
  return 8;
}

}  // namespace

void check_global_heaps(const std::string& file) {
  const MappedFile m(file);
  if (!m.data()) return;  // HDF5 reports unreadable files itself
  const int L = length_size(m);
  const size_t collection_header = 8 + L;  // "GCOL", version, 3 reserved, size
  const size_t object_header = 8 + L;      // index (2), references (2), reserved (4), size
  const unsigned char* begin = m.data();
  const unsigned char* end = begin + m.size();
  for (const unsigned char* at = begin;
       (at = static_cast<const unsigned char*>(memmem(at, end - at, "GCOL", 4))) != nullptr; ++at) {
    if (static_cast<size_t>(end - at) < collection_header || at[4] != 1) continue;
    const unsigned long long size = little_endian(at + 8, L);
    if (size < collection_header || size > static_cast<unsigned long long>(end - at)) continue;  // not one HDF5 reads
    const unsigned char* p = at + collection_header;
    const unsigned char* const stop = at + size;
    // H5HG__cache_heap_deserialize's walk: object 0 is the free space and
    // its size counts its header; other objects are header + data padded to 8.
    while (p < stop && static_cast<size_t>(stop - p) >= object_header) {
      const unsigned index = static_cast<unsigned>(little_endian(p, 2));
      const unsigned long long object_size = little_endian(p + 8, L);
      const unsigned long long need = index > 0 ? object_header + ((object_size + 7) & ~7ULL) : object_size;
      if (need == 0) {
        fail(file, "/", "corrupt global heap collection at byte " + std::to_string(at - begin) +
                            ": an object of size 0 at byte " + std::to_string(p - begin) +
                            " (expected a size that advances)");
      }
      if (need > static_cast<unsigned long long>(stop - p)) {
        // HDF5 records such an object as it is and later copies it from
        // beyond the collection (fuzzer: memcpy out of the heap's buffer).
        if (index > 0)
          fail(file, "/", "corrupt global heap collection at byte " + std::to_string(at - begin) + ": object " +
                              std::to_string(index) + " at byte " + std::to_string(p - begin) + " declares " +
                              std::to_string(object_size) + " bytes, more than the " +
                              std::to_string(stop - p) + " left in its collection");
        break;
      }
      p += need;
    }
  }
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
    // Not H5::Attribute::read(type, std::string&): it calls strlen on a
    // null variable-length string, which HDF5 allows (fuzzer crash).
    return type.isVariableStr() ? read_vlen_strings(attr, 1, file, object).front()
                                : read_fixed_strings(attr, 1).front();
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
