// HDF5 building blocks shared by the trajectory and the network files: error
// context (every HDF5 failure becomes a DataError naming the file and the
// object), and attribute readers and writers that believe what a hostile
// file declares only within limits.
//
// Variable-length strings need care: HDF5 1.10 allocates (and fills) a
// string's declared length before it reads it (H5T__conv_vlen), so a corrupt
// length field in a small file asks for gigabytes. Its public API has no
// memory bound for attribute reads, so they run under a temporary cap on
// the process's address space (AddressSpaceCap): the allocation fails and
// HDF5 reports an error instead. The cap is process-wide while it lasts;
// the tools read their data before any worker thread starts.
#pragma once

#include <H5Cpp.h>

#include <functional>
#include <string>
#include <vector>

#include "neuralsim/core/errors.hpp"

namespace neuralsim::hdf5 {

// DataError "<file>:<object>: <what>" (one line).
[[noreturn]] void fail(const std::string& file, const std::string& object, const std::string& what);

// "HDF5 error in <function>: <detail>".
std::string error_text(const H5::Exception& e);

// Runs `fn`, turning HDF5 exceptions into a DataError that names the object.
template <class F>
auto with_context(const std::string& file, const std::string& object, F&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const H5::Exception& e) {
    fail(file, object, error_text(e));
  }
}

std::string shape_string(const std::vector<hsize_t>& dims);  // "(2, 3)"

// While alive, new allocations of this process beyond `extra_bytes` more
// address space fail (RLIMIT_AS). Not applied under AddressSanitizer, whose
// shadow memory this would break (the fuzz targets bound allocations
// themselves there).
class AddressSpaceCap {
 public:
  explicit AddressSpaceCap(unsigned long long extra_bytes);
  ~AddressSpaceCap();
  AddressSpaceCap(const AddressSpaceCap&) = delete;
  AddressSpaceCap& operator=(const AddressSpaceCap&) = delete;

 private:
  bool active_ = false;
  unsigned long long old_soft_ = 0, old_hard_ = 0;
};

// HDF5 1.10's global-heap decoder (H5HG__cache_heap_deserialize) advances
// through a collection by each object's declared size and loops forever on
// a free-space object of size 0 (fuzzer: a 16 KB file hung the reader, not
// interruptible from inside HDF5). Variable-length data lives in those
// collections, so every reader calls this before HDF5 reads the file: it
// walks each global heap collection ("GCOL", HDF5 File Format Specification
// v3, §III.E) by the same rule and refuses, as a DataError, one that would
// not advance, or one with an object that extends beyond its collection
// (HDF5 would copy it from outside the heap's buffer). One linear pass over
// the file (memory-mapped).
//
// The scan is kept (for the last file) and the string readers below check
// every variable-length string's heap ID against it before HDF5 follows
// the ID: H5HG_read indexes a collection's object table with it unchecked.
void check_global_heaps(const std::string& file);

// HDF5 1.10 has memory-safety bugs on corrupt metadata that no check at our
// entry points can anticipate (fuzzer: a use-after-free in the metadata
// cache under H5Aexists, after the heap checks above). So every reader first
// runs its whole read of an untrusted file once in a forked child process:
// a child that dies by a signal, exits abnormally or runs past `seconds` is
// a DataError naming the file; otherwise this process reads the file itself
// (a child that found a DataError makes the same read fail again here, with
// its message). The child touches nothing but the file and ends with
// _exit(). Costs one fork and a second read.
void read_in_isolation_first(const std::string& file, const std::function<void()>& read, double seconds = 120);

// Turns the trial read off (the fuzz targets, which must see HDF5's faults
// in-process to find faults of their own); on by default.
void set_isolated_trial_reads(bool enabled);

bool has_attr(const H5::H5Object& obj, const char* name, const std::string& file, const std::string& object);
// A scalar string attribute (fixed or variable length), at most as long as the file.
std::string read_string_attr(const H5::H5Object& obj, const char* name, const std::string& file,
                             const std::string& object);
// A rank-1 string array (variable or fixed length, as h5py and numpy write
// them) of at most `max_count` entries, no larger than the file.
std::vector<std::string> read_string_array_attr(const H5::H5Object& obj, const char* name, hssize_t max_count,
                                                const std::string& file, const std::string& object);
long long read_int_attr(const H5::H5Object& obj, const char* name, const std::string& file,
                        const std::string& object);

H5::StrType vlen_string_type();  // UTF-8, variable length
void write_string_attr(H5::H5Object& obj, const char* name, const std::string& value);
void write_string_array_attr(H5::H5Object& obj, const char* name, const std::vector<std::string>& values);
void write_int_attr(H5::H5Object& obj, const char* name, long long value);

// The format attributes every neuralsim HDF5 file carries: "/format" must be
// `format` and "/format_version" an integer in 1..`max_version`; `kind`
// names the file in the message ("trajectory", "weights").
void read_format(const H5::H5File& h5, const std::string& file, const char* format, long long max_version,
                 const char* kind);
// Whether `group` has a child `name` of the given type (dataset, group).
bool has_child(const H5::Group& group, const std::string& name, H5O_type_t type);
// Row-major `rows x cols` doubles (rank 1: a vector of `rows`), stored as
// IEEE little-endian; more than 4096 values are chunked by whole rows (a
// time window touches few chunks), byte-shuffled and deflated.
void write_doubles(H5::Group& group, const std::string& name, const double* data, hsize_t rows, hsize_t cols,
                   int rank);
// "[a, b, c]", for messages.
std::string bracketed_list(const std::vector<std::string>& items);

}  // namespace neuralsim::hdf5
