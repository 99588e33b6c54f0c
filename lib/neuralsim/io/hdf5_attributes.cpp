#include "neuralsim/io/hdf5_attributes.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <thread>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>

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

void check_heap_ids(const H5::Attribute& attr, hssize_t n, const std::string& file, const std::string& object);

std::vector<std::string> read_vlen_strings(const H5::Attribute& attr, hssize_t n, const std::string& file,
                                           const std::string& object) {
  check_heap_ids(attr, n, file, object);
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

// The superblock (spec §II.A) at 0, 512, 1024, ... (a user block may
// precede it): sizes of offsets and lengths, and the base address that file
// addresses are relative to. Versions 0 and 1 keep the sizes at bytes 13-14
// and the base address at 24 (v0) or 28 (v1); versions 2 and 3 at 9-10 and 12.
struct Superblock {
  int offset_size = 8;
  int length_size = 8;
  unsigned long long base = 0;  // absolute file position of address 0
};

Superblock read_superblock(const MappedFile& m) {
  static const unsigned char kSignature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  auto valid = [](unsigned b) { return b == 2 || b == 4 || b == 8; };
  Superblock sb;
  for (size_t at = 0; at + 16 <= m.size(); at = at ? 2 * at : 512) {
    if (std::memcmp(m.data() + at, kSignature, 8) != 0) continue;
    const unsigned char* p = m.data() + at;
    const unsigned version = p[8];
    const unsigned offsets = version <= 1 ? p[13] : p[9];
    const unsigned lengths = version <= 1 ? p[14] : p[10];
    sb.offset_size = valid(offsets) ? static_cast<int>(offsets) : 8;
    sb.length_size = valid(lengths) ? static_cast<int>(lengths) : 8;
    const size_t base_at = version == 0 ? 24 : version == 1 ? 28 : 12;
    sb.base = at;
    if (at + base_at + sb.offset_size <= m.size()) {
      const unsigned long long declared = little_endian(p + base_at, sb.offset_size);
      if (declared <= at) sb.base = declared;
    }
    return sb;
  }
  return sb;
}

// One global heap collection as HDF5 reads it: its address and the data
// size of each object it holds (object 0, the free space, excluded).
struct Collection {
  unsigned long long address = 0;  // relative to the base address
  std::vector<long long> object_size;  // [index]: bytes of data; -1 = absent
};

struct GlobalHeapIndex {
  int offset_size = 8;
  std::vector<Collection> collections;  // sorted by address
  const Collection* find(unsigned long long address) const {
    auto it = std::lower_bound(collections.begin(), collections.end(), address,
                               [](const Collection& c, unsigned long long a) { return c.address < a; });
    return it != collections.end() && it->address == address ? &*it : nullptr;
  }
};

GlobalHeapIndex scan_global_heaps(const std::string& file) {
  GlobalHeapIndex index;
  const MappedFile m(file);
  if (!m.data()) return index;  // HDF5 reports unreadable files itself
  const Superblock sb = read_superblock(m);
  index.offset_size = sb.offset_size;
  const int L = sb.length_size;
  const size_t collection_header = 8 + L;  // "GCOL", version, 3 reserved, size
  const size_t object_header = 8 + L;      // index (2), references (2), reserved (4), size
  const unsigned char* begin = m.data();
  const unsigned char* end = begin + m.size();
  for (const unsigned char* at = begin;
       (at = static_cast<const unsigned char*>(memmem(at, end - at, "GCOL", 4))) != nullptr; ++at) {
    if (static_cast<size_t>(end - at) < collection_header || at[4] != 1) continue;
    const unsigned long long size = little_endian(at + 8, L);
    if (size < collection_header || size > static_cast<unsigned long long>(end - at)) continue;  // not one HDF5 reads
    Collection c;
    const auto position = static_cast<unsigned long long>(at - begin);
    c.address = position >= sb.base ? position - sb.base : ~0ULL;
    const unsigned char* p = at + collection_header;
    const unsigned char* const stop = at + size;
    // H5HG__cache_heap_deserialize's walk: object 0 is the free space and
    // its size counts its header; other objects are header + data padded to 8.
    while (p < stop && static_cast<size_t>(stop - p) >= object_header) {
      const unsigned object = static_cast<unsigned>(little_endian(p, 2));
      const unsigned long long object_size = little_endian(p + 8, L);
      const unsigned long long need = object > 0 ? object_header + ((object_size + 7) & ~7ULL) : object_size;
      if (need == 0) {
        fail(file, "/", "corrupt global heap collection at byte " + std::to_string(at - begin) +
                            ": an object of size 0 at byte " + std::to_string(p - begin) +
                            " (expected a size that advances)");
      }
      if (need > static_cast<unsigned long long>(stop - p)) {
        // HDF5 records such an object as it is and later copies it from
        // beyond the collection (fuzzer: memcpy out of the heap's buffer).
        if (object > 0)
          fail(file, "/", "corrupt global heap collection at byte " + std::to_string(at - begin) + ": object " +
                              std::to_string(object) + " at byte " + std::to_string(p - begin) + " declares " +
                              std::to_string(object_size) + " bytes, more than the " +
                              std::to_string(stop - p) + " left in its collection");
        break;
      }
      if (object > 0) {
        if (c.object_size.size() <= object) c.object_size.resize(object + 1, -1);
        c.object_size[object] = static_cast<long long>(object_size);
      }
      p += need;
    }
    index.collections.push_back(std::move(c));
  }
  std::sort(index.collections.begin(), index.collections.end(),
            [](const Collection& a, const Collection& b) { return a.address < b.address; });
  return index;
}

// The last file scanned, so that the attribute reads of one file share a scan.
std::shared_ptr<const GlobalHeapIndex> global_heaps_of(const std::string& file) {
  static std::mutex mutex;
  static std::string cached_file;
  static std::filesystem::file_time_type cached_time;
  static unsigned long long cached_size = 0;
  static std::shared_ptr<const GlobalHeapIndex> cached;
  std::error_code ec;
  const auto time = std::filesystem::last_write_time(file, ec);
  const unsigned long long size = file_bytes(file);
  const std::lock_guard<std::mutex> lock(mutex);
  if (!cached || cached_file != file || cached_time != time || cached_size != size) {
    cached = std::make_shared<const GlobalHeapIndex>(scan_global_heaps(file));
    cached_file = file;
    cached_time = time;
    cached_size = size;
  }
  return cached;
}

// A conversion that HDF5 applies from a variable-length string to an opaque
// type of the same size tagged kRawHeapIdTag, and that changes nothing: a
// read through it delivers the attribute's disk form, one heap ID per
// string (sequence length, collection address, object index; spec §III.E
// and the "Variable-length" datatype, §IV.A.2.d), without HDF5 following
// the IDs. Registered once per process (H5Tregister, a soft conversion).
constexpr const char* kRawHeapIdTag = "neuralsim: raw heap ID";

herr_t keep_disk_form(hid_t src, hid_t dst, H5T_cdata_t* cdata, size_t, size_t, size_t, void*, void*, hid_t) {
  if (cdata->command != H5T_CONV_INIT) return 0;  // CONV: equal sizes, the bytes stay; FREE: nothing held
  if (H5Tget_class(dst) != H5T_OPAQUE || H5Tis_variable_str(src) <= 0) return -1;
  char* tag = H5Tget_tag(dst);
  const bool ours = tag && std::strcmp(tag, kRawHeapIdTag) == 0;
  if (tag) H5free_memory(tag);
  if (!ours || H5Tget_size(src) != H5Tget_size(dst)) return -1;
  cdata->need_bkg = H5T_BKG_NO;
  return 0;
}

void register_disk_form_conversion() {
  static const bool registered = [] {
    const H5::StrType src(H5::PredType::C_S1, H5T_VARIABLE);
    const hid_t dst = H5Tcreate(H5T_OPAQUE, 16);
    H5Tset_tag(dst, kRawHeapIdTag);
    const herr_t status = H5Tregister(H5T_PERS_SOFT, "neuralsim_keep_disk_form", src.getId(), dst, keep_disk_form);
    H5Tclose(dst);
    return status >= 0;
  }();
  if (!registered) throw DataError("HDF5: cannot register the heap-ID conversion");
}

// Refuses heap IDs that H5HG_read would follow out of bounds: HDF5 1.10
// indexes the collection's object table with the ID's index unchecked
// (fuzzer: SEGV), and copies the object's size into a buffer of the
// string's declared length (an object larger than that overruns it).
void check_heap_ids(const H5::Attribute& attr, hssize_t n, const std::string& file, const std::string& object) {
  register_disk_form_conversion();
  const std::shared_ptr<const GlobalHeapIndex> heaps = global_heaps_of(file);
  const size_t O = static_cast<size_t>(heaps->offset_size);
  const size_t id_size = 4 + O + 4;
  const hsize_t stored = attr.getStorageSize();
  if (stored != static_cast<hsize_t>(n) * id_size)
    fail(file, object, "expected " + std::to_string(n) + " variable-length strings of " + std::to_string(id_size) +
                           " bytes on disk, the attribute holds " + std::to_string(stored));
  const hid_t raw = H5Tcreate(H5T_OPAQUE, id_size);
  H5Tset_tag(raw, kRawHeapIdTag);
  std::vector<unsigned char> ids(stored);
  const herr_t status = H5Aread(attr.getId(), raw, ids.data());
  H5Tclose(raw);
  if (status < 0) fail(file, object, "cannot read the variable-length strings' heap IDs");
  for (hssize_t i = 0; i < n; ++i) {
    const unsigned char* id = ids.data() + i * id_size;
    const unsigned long long length = little_endian(id, 4);
    const unsigned long long address = little_endian(id + 4, static_cast<int>(O));
    const unsigned long long index = little_endian(id + 4 + O, 4);
    if (address == 0) continue;  // a null string: HDF5 reads nothing
    const std::string which = "string " + std::to_string(i) + " refers to object " + std::to_string(index) +
                              " of the global heap at address " + std::to_string(address);
    const Collection* c = heaps->find(address);
    if (!c) fail(file, object, "corrupt file: " + which + ", where no readable heap collection starts");
    if (index >= c->object_size.size() || c->object_size[index] < 0)
      fail(file, object, "corrupt file: " + which + ", which that heap does not hold (it holds " +
                             std::to_string(std::count_if(c->object_size.begin(), c->object_size.end(),
                                                          [](long long s) { return s >= 0; })) +
                             " objects)");
    if (static_cast<unsigned long long>(c->object_size[index]) > length)
      fail(file, object, "corrupt file: " + which + ", of " + std::to_string(c->object_size[index]) +
                             " bytes, longer than the string's declared " + std::to_string(length));
  }
}

}  // namespace

void check_global_heaps(const std::string& file) { (void)global_heaps_of(file); }

namespace {
std::atomic<bool> isolated_trial_reads{true};
}  // namespace

// Sanitizer runtimes call this callback when they report an error; under
// libFuzzer it writes the input as a crash of the parent. Weak: absent
// without a sanitizer.
extern "C" void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

void set_isolated_trial_reads(bool enabled) { isolated_trial_reads = enabled; }

void read_in_isolation_first(const std::string& file, const std::function<void()>& read, double seconds) {
  if (!isolated_trial_reads) return;
  std::fflush(nullptr);  // nothing buffered is written twice
  const pid_t child = ::fork();
  if (child < 0) fail(file, "/", std::string("cannot start the isolated trial read (fork): ") + std::strerror(errno));
  if (child == 0) {
    // A fault must end the child by its signal, not through a handler that
    // reports it as this process's own (sanitizers, fuzzers, the tools).
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) std::signal(sig, SIG_DFL);
    if (__sanitizer_set_death_callback) __sanitizer_set_death_callback(nullptr);
    int code = 0;
    try {
      read();
    } catch (const DataError&) {
      code = 3;  // this process repeats the read and reports it
    } catch (const H5::Exception&) {
      code = 3;
    } catch (...) {
      code = 4;
    }
    ::_exit(code);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  int status = 0;
  for (;;) {
    const pid_t r = ::waitpid(child, &status, WNOHANG);
    if (r == child) break;
    if (r < 0 && errno != EINTR) fail(file, "/", std::string("isolated trial read: waitpid: ") + std::strerror(errno));
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(child, SIGKILL);
      ::waitpid(child, &status, 0);
      fail(file, "/", "corrupt file: HDF5 did not finish reading it within " + std::to_string(static_cast<int>(seconds)) +
                          " s (isolated trial read)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (WIFSIGNALED(status))
    fail(file, "/", "corrupt file: HDF5 crashes reading it (signal " + std::to_string(WTERMSIG(status)) +
                        " in an isolated trial read)");
  if (!WIFEXITED(status) || (WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 3))
    fail(file, "/", "corrupt file: HDF5 fails reading it (exit status " + std::to_string(WEXITSTATUS(status)) +
                        " of an isolated trial read)");
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

void read_format(const H5::H5File& h5, const std::string& file, const char* format, long long max_version,
                 const char* kind) {
  if (!has_attr(h5, "format", file, "/format")) {
    fail(file, "/format",
         std::string("attribute missing (expected \"") + format + "\"); not a neuralsim " + kind + " file");
  }
  const std::string found = read_string_attr(h5, "format", file, "/format");
  if (found != format) fail(file, "/format", std::string("expected \"") + format + "\", got \"" + found + "\"");
  if (!has_attr(h5, "format_version", file, "/format_version")) {
    fail(file, "/format_version", "attribute missing (expected an integer)");
  }
  const long long version = read_int_attr(h5, "format_version", file, "/format_version");
  if (version < 1 || version > max_version) {
    fail(file, "/format_version",
         "unsupported version " + std::to_string(version) + " (this build reads 1 to " + std::to_string(max_version) +
             ")");
  }
}

bool has_child(const H5::Group& group, const std::string& name, H5O_type_t type) {
  return group.nameExists(name) && group.childObjType(name) == type;
}

void write_doubles(H5::Group& group, const std::string& name, const double* data, hsize_t rows, hsize_t cols,
                   int rank) {
  constexpr hsize_t kCompressThreshold = 4096;
  constexpr hsize_t kChunkElements = 65536;
  constexpr int kGzipLevel = 4;
  const hsize_t dims[2] = {rows, cols};
  H5::DSetCreatPropList props;
  if (rows * cols > kCompressThreshold) {
    const hsize_t chunk_rows = std::clamp<hsize_t>(kChunkElements / std::max<hsize_t>(cols, 1), 1, rows);
    const hsize_t chunk[2] = {chunk_rows, cols};
    props.setChunk(rank, chunk);
    props.setShuffle();  // byte shuffling roughly doubles gzip's gain on doubles
    props.setDeflate(kGzipLevel);
  }
  H5::DataSet ds = group.createDataSet(name, H5::PredType::IEEE_F64LE, H5::DataSpace(rank, dims), props);
  if (rows * cols > 0) ds.write(data, H5::PredType::NATIVE_DOUBLE);
}

std::string bracketed_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i];
  return out + "]";
}

}  // namespace neuralsim::hdf5
