// The processes one run is spread over (MPI ranks under mpirun or srun), as
// the library sees them: an interface with no MPI in it. The tools' MPI
// module (apps/common/process_group.hpp) implements it; a null
// Communicator* means one process.
//
// Every call is collective: each process makes the same calls in the same
// order. The library spreads work by index (item i on rank i mod size), and
// gathers every result to every process, which then combines them in index
// order, exactly as one process would: results are the same, bit for bit,
// at any number of processes.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <Eigen/Core>

namespace neuralsim {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Every process's bytes, in rank order.
  virtual std::vector<std::string> all_gather(const std::string& bytes) const = 0;
  // True on every process when any process passes true.
  virtual bool any(bool flag) const = 0;
  // Bytes sent by this process so far (for the benchmarks' traffic figures).
  virtual std::uint64_t bytes_sent() const = 0;
  // The processes that pass the same color, ranked in this one's order (a
  // group that works on one task together).
  virtual std::unique_ptr<Communicator> split(int color) const = 0;
};

inline int rank_of(const Communicator* c) { return c ? c->rank() : 0; }
inline int size_of(const Communicator* c) { return c ? c->size() : 1; }
// Whether item i is this process's (item i on rank i mod size).
inline bool owns(const Communicator* c, long long i) { return !c || i % c->size() == c->rank(); }
inline bool any_of(const Communicator* c, bool flag) { return c ? c->any(flag) : flag; }

// Results packed for all_gather: numbers, strings and Eigen objects in a
// byte string, read back in the same order. Host byte order: the processes
// of one run share an architecture.
class ByteWriter {
 public:
  template <class T>
  void put(const T& v) {
    static_assert(std::is_trivially_copyable<T>::value, "ByteWriter::put: a plain value");
    bytes_.append(reinterpret_cast<const char*>(&v), sizeof(T));
  }
  void put_string(const std::string& s) {
    put<std::uint64_t>(s.size());
    bytes_ += s;
  }
  void put_doubles(const double* p, std::size_t n) {
    put<std::uint64_t>(n);
    bytes_.append(reinterpret_cast<const char*>(p), n * sizeof(double));
  }
  void put_vector(const std::vector<double>& v) { put_doubles(v.data(), v.size()); }
  // A dense Eigen matrix or vector of doubles, in its storage order.
  template <class M>
  void put_eigen(const M& m) {
    put<std::int64_t>(m.rows());
    put<std::int64_t>(m.cols());
    bytes_.append(reinterpret_cast<const char*>(m.data()), static_cast<std::size_t>(m.size()) * sizeof(double));
  }
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

class ByteReader {
 public:
  explicit ByteReader(const std::string& bytes) : bytes_(bytes) {}
  template <class T>
  T get() {
    T v;
    take(&v, sizeof(T));
    return v;
  }
  std::string get_string() {
    std::string s(get<std::uint64_t>(), '\0');
    take(s.data(), s.size());
    return s;
  }
  std::vector<double> get_vector() {
    std::vector<double> v(get<std::uint64_t>());
    take(v.data(), v.size() * sizeof(double));
    return v;
  }
  template <class M>
  M get_eigen() {
    const auto r = get<std::int64_t>(), c = get<std::int64_t>();
    M m(r, c);
    take(m.data(), static_cast<std::size_t>(m.size()) * sizeof(double));
    return m;
  }
  bool done() const { return at_ == bytes_.size(); }

 private:
  void take(void* out, std::size_t n) {
    if (at_ + n > bytes_.size()) throw std::logic_error("ByteReader: read past the end of a gathered message");
    if (n) std::memcpy(out, bytes_.data() + at_, n);
    at_ += n;
  }
  const std::string& bytes_;
  std::size_t at_ = 0;
};

// Gives every process every item of [0, count): the owner of item i (the
// rank that owns index first + i) writes it with pack(i, writer), the others
// read it with unpack(i, reader), in index order. Collective.
template <class Pack, class Unpack>
void exchange_owned(const Communicator& comm, std::size_t count, const Pack& pack, const Unpack& unpack,
                    long long first = 0) {
  ByteWriter w;
  for (std::size_t i = 0; i < count; ++i)
    if (owns(&comm, first + static_cast<long long>(i))) pack(i, w);
  const std::vector<std::string> all = comm.all_gather(w.bytes());
  std::vector<ByteReader> readers(all.begin(), all.end());
  for (std::size_t i = 0; i < count; ++i) {
    const int owner = static_cast<int>((first + static_cast<long long>(i)) % comm.size());
    if (owner != comm.rank()) unpack(i, readers[static_cast<std::size_t>(owner)]);
  }
}

}  // namespace neuralsim
