// Reading and writing a tool's checkpoint (JSON), shared by identify and
// the training loop (train-augment, distill-mpc). A checkpoint is input like any other: its
// size is bounded before it is parsed, and every value is checked, with a
// DataError "PATH: invalid checkpoint: WHAT" naming the key (exit 3). A
// checkpoint written for another run (other fingerprint) is a ConfigError
// naming what changed (exit 2).
#pragma once

#include <Eigen/Core>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "neuralsim/tools/fingerprint.hpp"
#include "neuralsim/tools/run_context.hpp"

namespace neuralsim::checkpoint_json {

using nlohmann::json;

[[noreturn]] void bad(const std::string& path, const std::string& what);

// The checkpoint in `store`, parsed, after checking that there is one (else
// DataError "no checkpoint to resume from"), that it holds at most
// `max_bytes` (`capacity` says what that bound is, for the message), and
// that it has the tool's `format` and `version`.
json read_document(const CheckpointStore& store, const char* format, int version, double max_bytes,
                   const std::string& capacity);

// Throws ConfigError when the stored `fingerprint` differs from this run's.
void check_fingerprint(const json& document, const Fingerprint& expected, const std::string& path);

// JSON has no NaN or inf: number() stores them as "nan", "inf", "-inf";
// read_number() reads them back unless `finite`.
json number(double v);
double read_number(const json& j, const std::string& path, const std::string& where, bool finite);

const json& member(const json& j, const char* key, const std::string& path, const std::string& where);
long long integer(const json& j, const char* key, const std::string& path, const std::string& where, long long lo,
                  long long hi);
double finite_number(const json& j, const char* key, const std::string& path, const std::string& where);

// A checkpoint's size bound follows from what its writer writes: each
// reader serializes, with its writer's own code, the largest state the
// writer can be handed for the run (every number as long as a double's
// text gets, every integer as wide as the reader allows), small, and scales
// it up to the run's counts (extrapolate). Never a hand count of bytes.
//
// The longest text of a double (a sign, 17 significant digits and a
// three-digit exponent: 24 characters).
inline constexpr double kLongestNumber = -2.2250738585072014e-308;
// The size of a document holding `count` items of a list, from the
// writer's documents holding none and one of them. Exact or above: a JSON
// list's first item costs at least what each further one does (its
// brackets' line breaks and indentation).
double extrapolate(std::size_t none, std::size_t one, double count);

json vector_json(const Eigen::VectorXd& v);
// Exactly n finite numbers at `key` (or an empty list when may_be_empty).
Eigen::VectorXd read_vector(const json& j, const char* key, Eigen::Index n, bool may_be_empty, const std::string& path);

}  // namespace neuralsim::checkpoint_json
