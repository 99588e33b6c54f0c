// Weight files (io/network_file): bit-exact round trips, several networks per
// file, atomic replacement, every class of bad file (built with the HDF5 C++
// API) rejected with a one-line DataError naming the file and the dataset,
// nothing printed by HDF5, and the layout readable by plain h5py.
#include <gtest/gtest.h>
#include <H5Cpp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/io/network_file.hpp"
#include "neuralsim/nn/mlp.hpp"
#include "support/files.hpp"

namespace neuralsim {
namespace {

namespace fs = std::filesystem;
using nn::Activation;
using nn::Index;
using nn::LayerSpec;
using nn::Mlp;

// ---------------------------------------------------------------- fixtures

std::uint64_t bits(double v) {
  std::uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

// A network with random weights, normalization and scaling, and a few
// values that a lossy writer would not preserve (-0, a subnormal, 1/3, π;
// with `extreme` also std = 1e-300 and an offset of −DBL_MAX, which keep the
// forward pass finite).
NamedNetwork make_network(const std::string& name, Index in, const std::vector<LayerSpec>& layers,
                          std::uint64_t seed, bool extreme) {
  Mlp net(in, layers);
  std::mt19937_64 rng(seed);
  net.initialize(nn::Init::kXavierNormal, rng);
  std::vector<double> p(static_cast<size_t>(net.num_parameters()));
  net.get_parameters(p.data());
  for (double& v : p) v += 0.01 * nn::random::uniform01(rng);  // non-zero biases too
  p[0] = -0.0;
  p[1] = 4.9406564584124654e-324;  // smallest subnormal
  p[2] = 1.0 / 3.0;
  p[3] = -2.5e-310;  // subnormal
  p[p.size() - 1] = 3.141592653589793;
  net.set_parameters(p.data());
  Eigen::VectorXd mean(in), stdev(in), scale(net.output_dim()), offset(net.output_dim());
  for (Index i = 0; i < in; ++i) {
    mean[i] = 10.0 * nn::random::uniform01(rng) - 5.0;
    stdev[i] = 0.1 + nn::random::uniform01(rng);
  }
  for (Index i = 0; i < net.output_dim(); ++i) {
    scale[i] = 1.0 + nn::random::uniform01(rng);
    offset[i] = nn::random::uniform01(rng) - 0.5;
  }
  if (extreme) {
    stdev[0] = 1e-300;
    offset[0] = -1.7976931348623157e308;
  }
  net.set_input_normalization(mean, stdev);
  net.set_output_scaling(scale, offset);
  NamedNetwork named;
  named.name = name;
  named.network = net;
  for (Index i = 0; i < in; ++i) named.input_names.push_back(name + "_in" + std::to_string(i));
  for (Index i = 0; i < net.output_dim(); ++i) named.output_names.push_back("force_" + std::to_string(i));
  return named;
}

// "drag": 6 -> 8 tanh -> 16 tanh -> 4 identity (so layer1/weight is (16, 8)).
NamedNetwork drag() {
  return make_network("drag", 6,
                      {{8, Activation::kTanh}, {16, Activation::kTanh}, {4, Activation::kIdentity}}, 1,
                      false);
}
// "friction": 3 -> 5 elu -> 4 sin -> 2 sigmoid, with the extreme values.
NamedNetwork friction() {
  return make_network("friction", 3,
                      {{5, Activation::kElu}, {4, Activation::kSin}, {2, Activation::kSigmoid}}, 2,
                      true);
}

void expect_bit_identical(const NamedNetwork& a, const NamedNetwork& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.input_names, b.input_names);
  EXPECT_EQ(a.output_names, b.output_names);
  const Mlp &x = a.network, &y = b.network;
  ASSERT_EQ(x.dims(), y.dims());
  for (Index l = 0; l < x.num_layers(); ++l) EXPECT_EQ(x.activation(l), y.activation(l));
  for (Index k = 0; k < x.num_parameters(); ++k) {
    EXPECT_EQ(bits(x.parameters()[k]), bits(y.parameters()[k])) << a.name << " parameter " << k;
  }
  auto same = [&](const Eigen::VectorXd& u, const Eigen::VectorXd& v, const char* what) {
    ASSERT_EQ(u.size(), v.size()) << what;
    for (Index i = 0; i < u.size(); ++i) EXPECT_EQ(bits(u[i]), bits(v[i])) << what << " " << i;
  };
  same(x.input_mean(), y.input_mean(), "input_mean");
  same(x.input_std(), y.input_std(), "input_std");
  same(x.output_scale(), y.output_scale(), "output_scale");
  same(x.output_offset(), y.output_offset(), "output_offset");
}

class NetworkFileTest : public testing::TempDirTest {
 protected:


  // A valid two-network file ("friction" written first, then "drag").
  std::string good_file(const std::string& name = "weights.h5") {
    const std::string p = path(name);
    write_networks(p, {friction(), drag()});
    return p;
  }

  // A fresh copy of the good file, changed by `mutate` through the HDF5 API.
  std::string bad_file(const std::string& name, const std::function<void(H5::H5File&)>& mutate) {
    const std::string p = path(name);
    write_networks(p, {friction(), drag()});
    H5::H5File f(p, H5F_ACC_RDWR);
    mutate(f);
    f.close();
    return p;
  }

};

// The one-line DataError message of read_networks(path); fails the test if
// there is none or if anything was printed on stderr.
std::string read_error(const std::string& path) {
  ::testing::internal::CaptureStderr();
  std::string message;
  try {
    read_networks(path);
  } catch (const DataError& e) {
    message = e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected DataError, got another exception: " << e.what();
  }
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(err, "") << "HDF5 or the reader printed to stderr";
  EXPECT_NE(message, "") << "no DataError for " << path;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  return message;
}

#define EXPECT_CONTAINS(haystack, needle) \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << "in: " << (haystack)

// ---------------------------------------------------------------- HDF5 mutations

void replace_dataset(H5::H5File& f, const std::string& group, const std::string& name,
                     const std::vector<hsize_t>& dims, const std::vector<double>* data = nullptr,
                     const H5::DataType& type = H5::PredType::IEEE_F64LE) {
  H5::Group g = f.openGroup(group);
  if (g.nameExists(name)) g.unlink(name);
  H5::DataSpace space = dims.empty() ? H5::DataSpace(H5S_SCALAR)
                                     : H5::DataSpace(static_cast<int>(dims.size()), dims.data());
  H5::DataSet ds = g.createDataSet(name, type, space);
  if (data) ds.write(data->data(), H5::PredType::NATIVE_DOUBLE);
}

// Overwrites one value of an existing float64 dataset.
void poke(H5::H5File& f, const std::string& dataset, hsize_t flat_index, double value) {
  H5::DataSet ds = f.openDataSet(dataset);
  const hssize_t n = ds.getSpace().getSimpleExtentNpoints();
  std::vector<double> v(static_cast<size_t>(n));
  ds.read(v.data(), H5::PredType::NATIVE_DOUBLE);
  v[flat_index] = value;
  ds.write(v.data(), H5::PredType::NATIVE_DOUBLE);
}

void set_string_attr(H5::H5File& f, const std::string& object, const char* name,
                     const std::string& value) {
  H5::Group g = f.openGroup(object);
  if (g.attrExists(name)) g.removeAttr(name);
  H5::StrType type(H5::PredType::C_S1, H5T_VARIABLE);
  g.createAttribute(name, type, H5::DataSpace(H5S_SCALAR)).write(type, value);
}

void set_int_attr(H5::H5File& f, const std::string& object, const char* name, long long value) {
  H5::Group g = f.openGroup(object);
  if (g.attrExists(name)) g.removeAttr(name);
  const std::int64_t v = value;
  g.createAttribute(name, H5::PredType::STD_I64LE, H5::DataSpace(H5S_SCALAR))
      .write(H5::PredType::NATIVE_INT64, &v);
}

void remove_attr(H5::H5File& f, const std::string& object, const char* name) {
  f.openGroup(object).removeAttr(name);
}

void remove_link(H5::H5File& f, const std::string& group, const std::string& name) {
  f.openGroup(group).unlink(name);
}

// ================================================================ round trip

TEST_F(NetworkFileTest, RoundTripIsBitExactForSeveralNetworksInWrittenOrder) {
  const std::vector<NamedNetwork> written = {friction(), drag()};
  const std::string p = path("weights.h5");
  write_networks(p, written);
  const std::vector<NamedNetwork> read = read_networks(p);
  ASSERT_EQ(read.size(), 2u);
  for (size_t i = 0; i < 2; ++i) expect_bit_identical(written[i], read[i]);
  EXPECT_EQ(network_names(p), (std::vector<std::string>{"friction", "drag"}));

  // And the networks compute the same.
  for (size_t i = 0; i < 2; ++i) {
    const Mlp &a = written[i].network, &b = read[i].network;
    nn::Workspace<double> wa(a), wb(b);
    std::vector<double> x(static_cast<size_t>(a.input_dim()), 0.25), ya(a.output_dim()), yb(b.output_dim());
    x[0] = 1e-300;
    a.forward(x.data(), ya.data(), wa);
    b.forward(x.data(), yb.data(), wb);
    for (size_t k = 0; k < ya.size(); ++k) EXPECT_EQ(bits(ya[k]), bits(yb[k]));
  }
}

TEST_F(NetworkFileTest, ReadsOneNetworkByNameAndNamesTheAvailableOnesWhenMissing) {
  const std::string p = good_file();
  expect_bit_identical(read_network(p, "drag"), drag());
  try {
    read_network(p, "lift");
    FAIL() << "no DataError";
  } catch (const DataError& e) {
    EXPECT_CONTAINS(e.what(), p + ":/networks/lift: network missing");
    EXPECT_CONTAINS(e.what(), "[friction, drag]");
  }
}

TEST_F(NetworkFileTest, WritesAtomicallyAndRefusesBadInputWithoutTouchingTheFile) {
  const std::string p = path("weights.h5");
  write_networks(p, {drag()});
  write_networks(p, {friction(), drag()});  // replaces the file
  EXPECT_EQ(read_networks(p).size(), 2u);
  std::vector<std::string> entries;
  for (const auto& e : fs::directory_iterator(dir_)) entries.push_back(e.path().filename().string());
  EXPECT_EQ(entries, std::vector<std::string>{"weights.h5"}) << "temp files left behind";

  std::ifstream in(p, std::ios::binary);
  const std::string before((std::istreambuf_iterator<char>(in)), {});
  NamedNetwork bad = drag();
  EXPECT_THROW(write_networks(p, {drag(), drag()}), InvalidArgument);  // duplicate name
  bad.name = "a/b";
  EXPECT_THROW(write_networks(p, {bad}), InvalidArgument);
  bad = drag();
  bad.input_names.pop_back();
  EXPECT_THROW(write_networks(p, {bad}), InvalidArgument);
  EXPECT_THROW(write_networks(p, {}), InvalidArgument);
  NamedNetwork empty;
  empty.name = "empty";
  EXPECT_THROW(write_networks(p, {empty}), InvalidArgument);
  std::ifstream again(p, std::ios::binary);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(again)), {}), before);

  try {
    write_networks(path("missing_dir/w.h5"), {drag()});
    FAIL() << "no ConfigError";
  } catch (const ConfigError& e) {  // an output that cannot be written (a bad --out): exit 2
    EXPECT_CONTAINS(e.what(), path("missing_dir/w.h5") + ": cannot write: directory");
  }
}

// ================================================================ bad files

struct BadCase {
  const char* what;
  std::function<void(H5::H5File&)> mutate;
  std::string object;    // expected after "<file>:"
  std::string message;   // expected after "<file>:<object>: "
};

TEST_F(NetworkFileTest, EveryBadDatasetIsADataErrorNamingFileAndDataset) {
  const std::string d = "/networks/drag";
  const std::vector<double> w16x9(16 * 9, 0.5), b15(15, 0.0), m5(5, 0.0), w8(8, 0.0);
  const std::vector<BadCase> cases = {
      {"consecutive layers disagree",
       [&](H5::H5File& f) { replace_dataset(f, d + "/layer1", "weight", {16, 9}, &w16x9); },
       d + "/layer1/weight", "expected shape (16, 8), got (16, 9)"},
      {"bias length differs from the weight's rows",
       [&](H5::H5File& f) { replace_dataset(f, d + "/layer1", "bias", {15}, &b15); },
       d + "/layer1/bias", "expected shape (16), got (15)"},
      {"bias of rank 2",
       [&](H5::H5File& f) { replace_dataset(f, d + "/layer2", "bias", {4, 1}); },
       d + "/layer2/bias", "expected shape (4), got (4, 1)"},
      {"weight of rank 1",
       [&](H5::H5File& f) { replace_dataset(f, d + "/layer0", "weight", {8}, &w8); },
       d + "/layer0/weight", "expected a rank-2 shape (out, in), got (8)"},
      {"weight of rank 3",
       [&](H5::H5File& f) { replace_dataset(f, d + "/layer1", "weight", {16, 8, 1}); },
       d + "/layer1/weight", "expected a rank-2 shape (out, 8), got (16, 8, 1)"},
      {"scalar weight",
       [&](H5::H5File& f) { replace_dataset(f, d + "/layer2", "weight", {}); },
       d + "/layer2/weight", "expected a rank-2 shape (out, 16), got ()"},
      {"zero rows", [&](H5::H5File& f) { replace_dataset(f, d + "/layer2", "weight", {0, 16}); },
       d + "/layer2/weight", "expected shape (out>=1, 16), got (0, 16)"},
      {"integer weights",
       [&](H5::H5File& f) { replace_dataset(f, d + "/layer0", "weight", {8, 6}, nullptr, H5::PredType::STD_I32LE); },
       d + "/layer0/weight", "expected a floating-point (float64) dataset"},
      {"NaN weight", [&](H5::H5File& f) { poke(f, d + "/layer1/weight", 8 * 3 + 5, NAN); },
       d + "/layer1/weight", "expected finite values, got nan at (3, 5)"},
      {"Inf bias", [&](H5::H5File& f) { poke(f, d + "/layer2/bias", 2, -INFINITY); },
       d + "/layer2/bias", "expected finite values, got -inf at 2"},
      {"NaN input mean", [&](H5::H5File& f) { poke(f, d + "/input_mean", 4, NAN); },
       d + "/input_mean", "expected finite values, got nan at 4"},
      {"zero input std", [&](H5::H5File& f) { poke(f, d + "/input_std", 1, 0.0); },
       d + "/input_std", "expected values > 0, got 0 at 1"},
      {"negative input std", [&](H5::H5File& f) { poke(f, d + "/input_std", 2, -1.0); },
       d + "/input_std", "expected values > 0, got -1 at 2"},
      {"Inf output scale", [&](H5::H5File& f) { poke(f, d + "/output_scale", 0, INFINITY); },
       d + "/output_scale", "expected finite values, got inf at 0"},
      {"input_mean length differs from the first layer's inputs",
       [&](H5::H5File& f) { replace_dataset(f, d, "input_mean", {5}, &m5); },
       d + "/input_mean", "expected shape (n_in=6), got (5)"},
      {"output_offset of rank 2",
       [&](H5::H5File& f) { replace_dataset(f, d, "output_offset", {4, 1}); },
       d + "/output_offset", "expected shape (n_out=4), got (4, 1)"},
      {"unknown activation", [&](H5::H5File& f) { set_string_attr(f, d + "/layer1", "activation", "swish"); },
       d + "/layer1/activation",
       "unknown activation 'swish' (valid: identity, tanh, relu, elu, softplus, sigmoid, sin)"},
      {"activation missing", [&](H5::H5File& f) { remove_attr(f, d + "/layer0", "activation"); },
       d + "/layer0/activation", "attribute missing"},
      {"activation not a string", [&](H5::H5File& f) {
         remove_attr(f, d + "/layer0", "activation");
         set_int_attr(f, d + "/layer0", "activation", 3);
       },
       d + "/layer0/activation", "expected a string attribute"},
      {"bias missing", [&](H5::H5File& f) { remove_link(f, d + "/layer0", "bias"); },
       d + "/layer0/bias", "dataset missing (expected shape (8))"},
      {"weight missing", [&](H5::H5File& f) { remove_link(f, d + "/layer2", "weight"); },
       d + "/layer2/weight", "dataset missing (expected shape (out, 16))"},
      {"input_std missing", [&](H5::H5File& f) { remove_link(f, d, "input_std"); },
       d + "/input_std", "dataset missing (expected shape (n_in=6))"},
      {"output_scale missing", [&](H5::H5File& f) { remove_link(f, d, "output_scale"); },
       d + "/output_scale", "dataset missing (expected shape (n_out=4))"},
      {"layer group missing", [&](H5::H5File& f) { remove_link(f, d, "layer2"); },
       d + "/layer2", "layer group missing (num_layers is 3)"},
      {"num_layers missing", [&](H5::H5File& f) { remove_attr(f, d, "num_layers"); },
       d + "/num_layers", "attribute missing"},
      {"num_layers says fewer layers than there are",
       [&](H5::H5File& f) { set_int_attr(f, d, "num_layers", 2); },
       d + "/layer2", "unexpected layer group: num_layers is 2"},
      {"num_layers zero", [&](H5::H5File& f) { set_int_attr(f, d, "num_layers", 0); },
       d + "/num_layers", "expected 1 to 1024 layers, got 0"},
      {"weight is a group", [&](H5::H5File& f) {
         remove_link(f, d + "/layer0", "weight");
         f.openGroup(d + "/layer0").createGroup("weight");
       },
       d + "/layer0/weight", "expected a dataset of shape (out, in), got a group"},
      {"input names of the wrong length", [&](H5::H5File& f) {
         H5::Group g = f.openGroup(d);
         g.removeAttr("input_names");
         H5::StrType type(H5::PredType::C_S1, H5T_VARIABLE);
         const char* names[2] = {"a", "b"};
         const hsize_t n[1] = {2};
         g.createAttribute("input_names", type, H5::DataSpace(1, n)).write(type, names);
       },
       d + "/input_names", "expected 6 names (or none), got 2: [a, b]"},
      {"a dataset among the network groups",
       [&](H5::H5File& f) { replace_dataset(f, "/networks", "stray", {3}); },
       "/networks/stray", "expected a network group, got a dataset"},
  };
  int n = 0;
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.what);
    const std::string p = bad_file("bad" + std::to_string(n++) + ".h5", c.mutate);
    const std::string msg = read_error(p);
    EXPECT_CONTAINS(msg, p + ":" + c.object + ": " + c.message);
  }
}

TEST_F(NetworkFileTest, DeclaredShapesAreCheckedAgainstTheLimitsBeforeAnyDataIsRead) {
  const std::string d = "/networks/drag";
  // Datasets declared huge but never written: HDF5 allocates no storage,
  // so the file stays small. Reading them would allocate gigabytes.
  const std::string wide = bad_file("wide.h5", [&](H5::H5File& f) {
    replace_dataset(f, d + "/layer0", "weight", {70000, 6});
  });
  EXPECT_LT(fs::file_size(wide), 100000u);
  EXPECT_CONTAINS(read_error(wide), wide + ":" + d +
                                        "/layer0/weight: expected shape (out, in) with every "
                                        "dimension <= 65536, got (70000, 6)");

  const std::string big = bad_file("big.h5", [&](H5::H5File& f) {
    replace_dataset(f, d + "/layer0", "weight", {4000, 6});
    replace_dataset(f, d + "/layer0", "bias", {4000});
    replace_dataset(f, d + "/layer1", "weight", {3000, 4000});
    replace_dataset(f, d + "/layer1", "bias", {3000});
    replace_dataset(f, d + "/layer2", "weight", {4, 3000});
  });
  EXPECT_LT(fs::file_size(big), 100000u);
  EXPECT_CONTAINS(read_error(big), big + ":" + d +
                                       "/layer1/weight: expected at most 10000000 parameters per "
                                       "network, got 12031000 up to this layer (3000, 4000)");
}

TEST_F(NetworkFileTest, FileLevelProblemsAreDataErrorsNamingTheFile) {
  const std::string missing = path("nope.h5");
  EXPECT_CONTAINS(read_error(missing), missing + ": weights file does not exist");
  EXPECT_CONTAINS(read_error(dir_.string()), dir_.string() + ": weights file is a directory, expected a regular file");
  const std::string fifo = path("fifo.h5");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_CONTAINS(read_error(fifo), fifo + ": weights file is a FIFO (named pipe)");  // refused, not opened (no block)

  const std::string text = path("text.h5");
  std::ofstream(text) << "not hdf5\n";
  EXPECT_CONTAINS(read_error(text), text + ":/: not an HDF5 file");

  // A truncated file: the HDF5 library itself fails; its error is converted.
  const std::string good = good_file();
  const std::string cut = path("cut.h5");
  {
    std::ifstream in(good, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), {});
    std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  }
  const std::string cut_msg = read_error(cut);
  EXPECT_CONTAINS(cut_msg, cut + ":/: ");
  EXPECT_CONTAINS(cut_msg, "HDF5 error");

  // Larger than any weights file may be (sparse, so it costs no disk).
  const std::string huge = path("huge.h5");
  fs::copy_file(good, huge);
  fs::resize_file(huge, (1ull << 30) + 1);
  EXPECT_CONTAINS(read_error(huge), huge + ": weights file is 1073741825 bytes, more than the 1024 MiB limit");

  const std::string no_format = bad_file("no_format.h5", [](H5::H5File& f) { remove_attr(f, "/", "format"); });
  EXPECT_CONTAINS(read_error(no_format), no_format + ":/format: attribute missing");
  const std::string other = bad_file("other.h5", [](H5::H5File& f) {
    set_string_attr(f, "/", "format", "neuralsim-trajectories");
  });
  EXPECT_CONTAINS(read_error(other),
                  other + ":/format: expected \"neuralsim-networks\", got \"neuralsim-trajectories\"");
  const std::string future = bad_file("future.h5", [](H5::H5File& f) { set_int_attr(f, "/", "format_version", 2); });
  EXPECT_CONTAINS(read_error(future), future + ":/format_version: unsupported version 2");
  const std::string no_group = bad_file("no_group.h5", [](H5::H5File& f) { remove_link(f, "/", "networks"); });
  EXPECT_CONTAINS(read_error(no_group), no_group + ":/networks: group missing");
  const std::string none = bad_file("none.h5", [](H5::H5File& f) {
    remove_link(f, "/networks", "drag");
    remove_link(f, "/networks", "friction");
  });
  EXPECT_CONTAINS(read_error(none), none + ":/networks: contains no networks");
}

// ================================================================ model checks

TEST_F(NetworkFileTest, CheckNetworkComparesAgainstTheModelsSizesAndNames) {
  const std::string p = good_file();
  const NamedNetwork net = read_network(p, "drag");
  NetworkExpectations ok;
  ok.inputs = 6;
  ok.outputs = 4;
  ok.input_names = net.input_names;
  EXPECT_NO_THROW(check_network(net, ok, p));

  NetworkExpectations wrong_in = ok;
  wrong_in.inputs = 8;
  try {
    check_network(net, wrong_in, p);
    FAIL() << "no DataError";
  } catch (const DataError& e) {
    EXPECT_CONTAINS(e.what(), p + ":/networks/drag: expected 8 inputs, got 6 "
                                  "(network 6 -> 8 tanh -> 16 tanh -> 4 identity)");
  }
  NetworkExpectations wrong_out = ok;
  wrong_out.outputs = 3;
  EXPECT_THROW(check_network(net, wrong_out, p), DataError);
  NetworkExpectations wrong_names = ok;
  wrong_names.input_names[2] = "qd_elbow";
  try {
    check_network(net, wrong_names, p);
    FAIL() << "no DataError";
  } catch (const DataError& e) {
    EXPECT_CONTAINS(e.what(), p + ":/networks/drag/input_names: expected [drag_in0, drag_in1, qd_elbow");
  }
}

// ================================================================ JSON

TEST_F(NetworkFileTest, JsonExportHasTheSameContentAndParsesBackExactly) {
  const NamedNetwork f = friction(), d = drag();
  const nlohmann::json j = nlohmann::json::parse(networks_to_json({f, d}).dump(2));
  EXPECT_EQ(j["format"], "neuralsim-networks");
  EXPECT_EQ(j["format_version"], 1);
  ASSERT_EQ(j["networks"].size(), 2u);
  const nlohmann::json& jd = j["networks"][1];
  EXPECT_EQ(jd["name"], "drag");
  EXPECT_EQ(jd["input_names"].get<std::vector<std::string>>(), d.input_names);
  ASSERT_EQ(jd["layers"].size(), 3u);
  for (Index l = 0; l < 3; ++l) {
    const nlohmann::json& jl = jd["layers"][l];
    EXPECT_EQ(jl["activation"], nn::activation_name(d.network.activation(l)));
    const auto W = d.network.weight(l);
    ASSERT_EQ(jl["weight"].size(), static_cast<size_t>(W.rows()));
    for (Index i = 0; i < W.rows(); ++i) {
      ASSERT_EQ(jl["weight"][i].size(), static_cast<size_t>(W.cols()));
      for (Index k = 0; k < W.cols(); ++k) {
        EXPECT_EQ(bits(jl["weight"][i][k].get<double>()), bits(W(i, k))) << l << " " << i << " " << k;
      }
    }
    for (Index i = 0; i < W.rows(); ++i) EXPECT_EQ(bits(jl["bias"][i].get<double>()), bits(d.network.bias(l)[i]));
  }
  const nlohmann::json& jf = j["networks"][0];
  EXPECT_EQ(jf["name"], "friction");
  EXPECT_EQ(bits(jf["input_std"][0].get<double>()), bits(1e-300));
  EXPECT_EQ(bits(jf["output_offset"][0].get<double>()), bits(-1.7976931348623157e308));
  EXPECT_EQ(jd["output_offset"].size(), 4u);

  const std::string p = path("weights.json");
  write_networks_json(p, {f, d});
  std::ifstream in(p);
  EXPECT_EQ(nlohmann::json::parse(in), j);
}

// ================================================================ h5py

// $NEURALSIM_PYTHON, else Debian's /usr/bin/python3 (which has h5py; the
// python3 first on PATH may not). Kept local: the library has no Python
// dependency (the app layer has its own python_interpreter()).
std::string python_interpreter() {
  const char* env = std::getenv("NEURALSIM_PYTHON");
  return env && *env ? env : "/usr/bin/python3";
}

using testing::h5py_available;

TEST_F(NetworkFileTest, PlainH5pyReadsTheLayoutAndReproducesTheForwardPass) {
  NEURALSIM_SKIP_WITHOUT_ORACLE(h5py_available(), "'" << python_interpreter() << "' has no h5py (set NEURALSIM_PYTHON)");
  const std::string p = good_file();
  const NamedNetwork d = drag();
  // The C++ forward pass at x, to be reproduced by numpy from the file alone.
  const std::vector<double> x = {0.5, -1.0, 2.0, 0.0, 3.0, -0.25};
  std::vector<double> y(4);
  nn::Workspace<double> ws(d.network);
  d.network.forward(x.data(), y.data(), ws);
  auto list = [](const std::vector<double>& v) {
    std::ostringstream os;
    os.precision(17);
    for (size_t i = 0; i < v.size(); ++i) os << (i ? "," : "") << v[i];
    return os.str();
  };
  std::ostringstream w25;
  w25.precision(17);
  w25 << d.network.weight(1)(2, 5);

  const std::string script = path("check.py");
  std::ofstream(script) << R"(import sys
import h5py
import numpy as np
f = h5py.File(sys.argv[1], "r")
assert f.attrs["format"] == "neuralsim-networks", f.attrs["format"]
assert int(f.attrs["format_version"]) == 1
assert sorted(f["networks"].keys()) == ["drag", "friction"], list(f["networks"].keys())
g = f["networks/drag"]
assert int(g.attrs["num_layers"]) == 3
assert list(g.attrs["input_names"]) == ["drag_in%d" % i for i in range(6)], g.attrs["input_names"]
assert g["layer1/weight"].shape == (16, 8), g["layer1/weight"].shape
assert g["layer1/weight"].dtype == np.float64
assert g["layer0/bias"].shape == (8,)
assert g["input_mean"].shape == (6,) and g["output_offset"].shape == (4,)
assert g["layer1"].attrs["activation"] == "tanh"
assert g["layer1/weight"][2, 5] == float(sys.argv[2]), (g["layer1/weight"][2, 5], sys.argv[2])
act = {"tanh": np.tanh, "identity": lambda z: z}
x = np.array([float(v) for v in sys.argv[3].split(",")])
a = (x - g["input_mean"][...]) / g["input_std"][...]
for l in range(3):
    L = g["layer%d" % l]
    a = act[L.attrs["activation"]](L["weight"][...] @ a + L["bias"][...])
y = g["output_scale"][...] * a + g["output_offset"][...]
expected = np.array([float(v) for v in sys.argv[4].split(",")])
assert np.allclose(y, expected, rtol=1e-12, atol=1e-12), (y, expected)
print("ok")
)";
  const std::string out_file = path("py.out");
  const std::string cmd = "'" + python_interpreter() + "' '" + script + "' '" + p + "' '" + w25.str() +
                          "' '" + list(x) + "' '" + list(y) + "' > '" + out_file + "' 2>&1";
  const int status = std::system(cmd.c_str());
  std::ifstream in(out_file);
  const std::string out((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(status, 0) << out;
  EXPECT_EQ(out, "ok\n");
}

TEST_F(NetworkFileTest, ReadsAFileWrittenByPlainH5py) {
  NEURALSIM_SKIP_WITHOUT_ORACLE(h5py_available(), "'" << python_interpreter() << "' has no h5py (set NEURALSIM_PYTHON)");
  // What a training script would write: float32 weights, numpy fixed-length
  // strings, no "index" attribute. numpy evaluates the network at x = 0.5.
  const std::string file = path("from_h5py.h5");
  const std::string script = path("write.py");
  std::ofstream(script) << R"(import sys
import h5py
import numpy as np
rng = np.random.default_rng(0)
W0 = rng.standard_normal((4, 3)).astype(np.float32)
W1 = rng.standard_normal((2, 4))
b1 = np.array([0.1, -0.2])
with h5py.File(sys.argv[1], "w") as f:
    f.attrs["format"] = np.bytes_("neuralsim-networks")
    f.attrs["format_version"] = np.int32(1)
    g = f.create_group("networks/lift")
    g.attrs["num_layers"] = 2
    g.attrs["input_names"] = np.array([b"a", b"b", b"c"])
    g["layer0/weight"] = W0
    g["layer0/bias"] = np.zeros(4, np.float32)
    g["layer0"].attrs["activation"] = "tanh"
    g["layer1/weight"] = W1
    g["layer1/bias"] = b1
    g["layer1"].attrs["activation"] = np.bytes_("identity")
    g["input_mean"] = np.zeros(3)
    g["input_std"] = np.ones(3)
    g["output_scale"] = np.ones(2)
    g["output_offset"] = np.zeros(2)
y = W1 @ np.tanh(W0.astype(np.float64) @ np.full(3, 0.5)) + b1
print("%.17g %.17g" % (y[0], y[1]))
)";
  const std::string out_file = path("py.out");
  const std::string cmd = "'" + python_interpreter() + "' '" + script + "' '" + file + "' > '" + out_file +
                          "' 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::ifstream in(out_file);
  double y_numpy[2] = {0, 0};
  in >> y_numpy[0] >> y_numpy[1];

  const NamedNetwork net = read_network(file, "lift");
  EXPECT_EQ(net.network.describe(), "3 -> 4 tanh -> 2 identity");
  EXPECT_EQ(net.input_names, (std::vector<std::string>{"a", "b", "c"}));
  nn::Workspace<double> ws(net.network);
  const double x[3] = {0.5, 0.5, 0.5};
  double y[2];
  net.network.forward(x, y, ws);
  EXPECT_NEAR(y[0], y_numpy[0], 1e-14);
  EXPECT_NEAR(y[1], y_numpy[1], 1e-14);
}

}  // namespace
}  // namespace neuralsim
