// The processes one tool run is spread over: the MPI world when the tool
// was started by an MPI launcher (mpirun, mpiexec, srun) and built with MPI
// (Open MPI, `libopenmpi-dev`), else this process alone. This module is the
// only code that sees MPI: the library gets a Communicator
// (core/communicator.hpp) and spreads its work through it.
//
// Detection: MPI is initialized only when the environment says a launcher
// started the process (OMPI_COMM_WORLD_SIZE, PMI_SIZE or PMIX_RANK), so a
// tool run by hand or by the tests starts as fast as without MPI. Started
// by a launcher in a build without MPI, with more than one process, the
// tool refuses to run (ConfigError: every process would do the whole run).
#pragma once

#include <memory>

#include "neuralsim/core/communicator.hpp"

namespace neuralsim {

class ProcessGroup {
 public:
  // Initializes MPI if the launcher started this process (MPI_Init_thread,
  // funneled: only the main thread communicates); finalizes it on
  // destruction.
  ProcessGroup(int* argc, char*** argv);
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  // Null with one process.
  const Communicator* communicator() const { return communicator_.get(); }
  int rank() const { return rank_of(communicator_.get()); }
  int size() const { return size_of(communicator_.get()); }

  // Whether this build can run under MPI.
  static bool available();
  // This process's rank as the launcher announced it in the environment
  // (0 without a launcher): known before MPI is initialized.
  static int launcher_rank();

 private:
  std::unique_ptr<Communicator> communicator_;
  bool initialized_ = false;
};

}  // namespace neuralsim
