// discover: find where a model needs an augmentation and which physical
// quantities it reads, by training candidate augmentations under a sparsity
// penalty. See docs/discover.md.
#include "discover/discover_job.hpp"

int main(int argc, char** argv) {
  neuralsim::Tool tool(
      {"discover",
       "Find which candidate augmentation sites and inputs explain recorded trajectories (group lasso path).",
       "Continue from OUT/checkpoint.json (written after every path point); the result is the same as an "
       "uninterrupted run's"});
  return tool.run(argc, argv, neuralsim::run_discover);
}
