#include "common/process_group.hpp"

#include <cstdlib>
#include <memory>
#include <utility>
#include <string>

#include "neuralsim/core/errors.hpp"

#ifdef NEURALSIM_WITH_MPI
// The C API only: Open MPI's deprecated C++ bindings need a library we do
// not link.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace neuralsim {
namespace {

// The number of processes a launcher announced (0: not started by one).
int launched_size() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "SLURM_NTASKS"}) {
    const char* v = std::getenv(name);
    if (v && *v && (std::string(name) != "SLURM_NTASKS" || std::getenv("PMIX_RANK") || std::getenv("PMI_RANK")))
      return std::atoi(v);
  }
  return std::getenv("PMIX_RANK") ? 1 : 0;
}

#ifdef NEURALSIM_WITH_MPI
class MpiCommunicator final : public Communicator {
 public:
  // Owns `comm` unless it is MPI_COMM_WORLD. A group split from another
  // adds its traffic to the same count.
  MpiCommunicator(MPI_Comm comm, std::shared_ptr<std::uint64_t> sent) : comm_(comm), sent_(std::move(sent)) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  ~MpiCommunicator() override {
    if (comm_ != MPI_COMM_WORLD) MPI_Comm_free(&comm_);
  }
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;
  std::unique_ptr<Communicator> split(int color) const override {
    MPI_Comm group = MPI_COMM_NULL;
    MPI_Comm_split(comm_, color, rank_, &group);
    return std::make_unique<MpiCommunicator>(group, sent_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::vector<std::string> all_gather(const std::string& bytes) const override {
    const long long mine = static_cast<long long>(bytes.size());
    std::vector<long long> sizes(static_cast<std::size_t>(size_));
    MPI_Allgather(&mine, 1, MPI_LONG_LONG, sizes.data(), 1, MPI_LONG_LONG, comm_);
    std::vector<int> counts(static_cast<std::size_t>(size_)), offsets(static_cast<std::size_t>(size_));
    long long total = 0;
    for (int r = 0; r < size_; ++r) {
      if (sizes[static_cast<std::size_t>(r)] > (1LL << 30) || total > (1LL << 30))
        throw NumericalError("MPI: a gathered message exceeds 1 GiB");
      counts[static_cast<std::size_t>(r)] = static_cast<int>(sizes[static_cast<std::size_t>(r)]);
      offsets[static_cast<std::size_t>(r)] = static_cast<int>(total);
      total += sizes[static_cast<std::size_t>(r)];
    }
    std::string all(static_cast<std::size_t>(total), '\0');
    MPI_Allgatherv(bytes.data(), static_cast<int>(mine), MPI_BYTE, all.data(), counts.data(), offsets.data(), MPI_BYTE,
                   comm_);
    *sent_ += static_cast<std::uint64_t>(mine) * static_cast<std::uint64_t>(size_ - 1) + 8ULL * (size_ - 1);
    std::vector<std::string> out;
    for (int r = 0; r < size_; ++r)
      out.push_back(all.substr(static_cast<std::size_t>(offsets[static_cast<std::size_t>(r)]),
                               static_cast<std::size_t>(counts[static_cast<std::size_t>(r)])));
    return out;
  }
  bool any(bool flag) const override {
    int mine = flag ? 1 : 0, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LOR, comm_);
    *sent_ += 4ULL * (size_ - 1);
    return all != 0;
  }
  std::uint64_t bytes_sent() const override { return *sent_; }

 private:
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  std::shared_ptr<std::uint64_t> sent_;
};
#endif

}  // namespace

int ProcessGroup::launcher_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"}) {
    const char* v = std::getenv(name);
    if (v && *v) return std::atoi(v);
  }
  return 0;
}

bool ProcessGroup::available() {
#ifdef NEURALSIM_WITH_MPI
  return true;
#else
  return false;
#endif
}

ProcessGroup::ProcessGroup(int* argc, char*** argv) {
  const int launched = launched_size();
  if (launched == 0) return;
#ifdef NEURALSIM_WITH_MPI
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  initialized_ = true;
  // A rank that loses its peers ends the job (the launcher reports it)
  // instead of waiting in a collective.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size > 1) communicator_ = std::make_unique<MpiCommunicator>(MPI_COMM_WORLD, std::make_shared<std::uint64_t>(0));
#else
  (void)argc;
  (void)argv;
  if (launched > 1)
    throw ConfigError("started by an MPI launcher with " + std::to_string(launched) +
                      " processes, but this build has no MPI (install libopenmpi-dev and rebuild; docs/cluster.md)");
#endif
}

ProcessGroup::~ProcessGroup() {
#ifdef NEURALSIM_WITH_MPI
  if (initialized_) {
    communicator_.reset();
    MPI_Finalize();
  }
#endif
}

}  // namespace neuralsim
