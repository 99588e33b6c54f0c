// Where a result came from: recorded in every summary.json (and output file
// attributes) so that any number in a report can be traced back to the code,
// libraries, machine and command line that produced it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace neuralsim {

// {version, git_revision, compiler, build, libraries{...}, hostname,
//  timestamp_utc, command_line, working_directory, pid, threads,
//  threads_requested, hardware_threads}.
// `argv` is the command line as given; `threads_requested` is --threads
// (0 = all cores); "threads" is the parallelism TBB will actually use now.
nlohmann::json provenance(const std::vector<std::string>& argv = {}, int threads_requested = 0);

// "0.1.0 (rev 0123abcd4567)": short form for log lines and file attributes.
std::string version_string();

// Current UTC time as ISO-8601, e.g. "2024-05-01T12:34:56Z".
std::string utc_timestamp();

}  // namespace neuralsim
