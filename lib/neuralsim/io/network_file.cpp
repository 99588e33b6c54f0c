#include "neuralsim/core/format.hpp"
#include "neuralsim/io/network_file.hpp"

#include <H5Cpp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <utility>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/io/atomic_file.hpp"
#include "neuralsim/io/hdf5_attributes.hpp"
#include "neuralsim/io/hdf5_output.hpp"
#include "neuralsim/io/input_file.hpp"
#include "neuralsim/io/lstm_file.hpp"

namespace neuralsim {
namespace {

namespace fs = std::filesystem;
using nn::Index;
using hdf5::bracketed_list;
using hdf5::fail;
using hdf5::has_child;
using hdf5::read_format;
using hdf5::write_doubles;
using hdf5::has_attr;
using hdf5::read_int_attr;
using hdf5::read_string_array_attr;
using hdf5::read_string_attr;
using hdf5::shape_string;
using hdf5::with_context;
using hdf5::write_int_attr;
using hdf5::write_string_array_attr;
using hdf5::write_string_attr;

// ---------------------------------------------------------------- messages

std::string network_path(const std::string& name) { return "/networks/" + name; }
std::string layer_name(Index l) { return "layer" + std::to_string(l); }

// ---------------------------------------------------------------- writing

void write_vector(H5::Group& group, const std::string& name, const Eigen::VectorXd& v) {
  write_doubles(group, name, v.data(), static_cast<hsize_t>(v.size()), 1, 1);
}

// `object` tracks what is being written, for the error message.
void write_network(H5::Group& parent, const NamedNetwork& net, size_t index, std::string& object) {
  const nn::Mlp& mlp = net.network;
  const std::string base = network_path(net.name);
  object = base;
  H5::Group group = parent.createGroup(net.name);
  write_int_attr(group, "num_layers", mlp.num_layers());
  write_int_attr(group, "index", static_cast<long long>(index));
  write_string_array_attr(group, "input_names", net.input_names);
  write_string_array_attr(group, "output_names", net.output_names);
  if (net.zero_init_outputs) write_int_attr(group, "zero_init_outputs", *net.zero_init_outputs ? 1 : 0);
  object = base + "/input_mean";
  write_vector(group, "input_mean", mlp.input_mean());
  object = base + "/input_std";
  write_vector(group, "input_std", mlp.input_std());
  object = base + "/output_scale";
  write_vector(group, "output_scale", mlp.output_scale());
  object = base + "/output_offset";
  write_vector(group, "output_offset", mlp.output_offset());
  for (Index l = 0; l < mlp.num_layers(); ++l) {
    object = base + "/" + layer_name(l);
    H5::Group layer = group.createGroup(layer_name(l));
    write_string_attr(layer, "activation", nn::activation_name(mlp.activation(l)));
    const hsize_t out = static_cast<hsize_t>(mlp.layer_output_dim(l));
    const hsize_t in = static_cast<hsize_t>(mlp.layer_input_dim(l));
    object = base + "/" + layer_name(l) + "/weight";
    write_doubles(layer, "weight", mlp.parameters() + mlp.weight_offset(l), out, in, 2);
    object = base + "/" + layer_name(l) + "/bias";
    write_doubles(layer, "bias", mlp.parameters() + mlp.bias_offset(l), out, 1, 1);
  }
}

bool valid_link_name(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos;
}

void validate_for_write(const std::vector<NamedNetwork>& networks, const std::string& path) {
  const std::string where = "write_networks(" + path + "): ";
  if (networks.empty()) throw InvalidArgument(where + "no networks to write");
  std::set<std::string> seen;
  for (const NamedNetwork& net : networks) {
    if (!valid_link_name(net.name)) {
      throw InvalidArgument(where + "invalid network name '" + net.name +
                            "' (must be non-empty, without '/', not '.' or '..')");
    }
    if (!seen.insert(net.name).second) {
      throw InvalidArgument(where + "duplicate network name '" + net.name + "'");
    }
    const nn::Mlp& mlp = net.network;
    if (mlp.num_layers() == 0) {
      throw InvalidArgument(where + "network '" + net.name + "' has no layers");
    }
    if (!net.input_names.empty() &&
        static_cast<Index>(net.input_names.size()) != mlp.input_dim()) {
      throw InvalidArgument(where + "network '" + net.name + "' has " +
                            std::to_string(mlp.input_dim()) + " inputs but " +
                            std::to_string(net.input_names.size()) + " input names");
    }
    if (!net.output_names.empty() &&
        static_cast<Index>(net.output_names.size()) != mlp.output_dim()) {
      throw InvalidArgument(where + "network '" + net.name + "' has " +
                            std::to_string(mlp.output_dim()) + " outputs but " +
                            std::to_string(net.output_names.size()) + " output names");
    }
  }
}

// ---------------------------------------------------------------- reading: attributes

// ---------------------------------------------------------------- reading: datasets

// The declared shape of a floating-point dataset, without reading it. Each
// dimension is checked against the limit here, so the callers' products
// cannot overflow.
std::vector<hsize_t> dataset_shape(const H5::Group& group, const std::string& name,
                                   const std::string& expected_shape, const std::string& file,
                                   const std::string& object) {
  const bool exists = with_context(file, object, [&] { return group.nameExists(name); });
  if (!exists) fail(file, object, "dataset missing (expected shape " + expected_shape + ")");
  return with_context(file, object, [&] {
    if (group.childObjType(name) != H5O_TYPE_DATASET) {
      fail(file, object, "expected a dataset of shape " + expected_shape + ", got a group");
    }
    const H5::DataSet ds = group.openDataSet(name);
    if (ds.getTypeClass() != H5T_FLOAT) {
      fail(file, object, "expected a floating-point (float64) dataset, got HDF5 type class " +
                             std::to_string(static_cast<int>(ds.getTypeClass())));
    }
    const H5::DataSpace space = ds.getSpace();
    if (space.getSimpleExtentType() == H5S_NULL) {
      fail(file, object, "expected shape " + expected_shape + ", got an empty (null) dataspace");
    }
    std::vector<hsize_t> dims(static_cast<size_t>(std::max(space.getSimpleExtentNdims(), 0)));
    if (!dims.empty()) space.getSimpleExtentDims(dims.data());
    for (hsize_t d : dims) {
      if (d > static_cast<hsize_t>(NetworkLimits::kMaxDim)) {
        fail(file, object, "expected shape " + expected_shape + " with every dimension <= " +
                               std::to_string(NetworkLimits::kMaxDim) + ", got " +
                               shape_string(dims));
      }
    }
    return dims;
  });
}

// Reads `count` doubles (the shape was checked by dataset_shape) and checks
// they are finite; `cols` > 0 reports matrix indices.
std::vector<double> read_values(const H5::Group& group, const std::string& name, hsize_t count,
                                hsize_t cols, const std::string& file, const std::string& object) {
  std::vector<double> values(static_cast<size_t>(count));
  with_context(file, object, [&] {
    const H5::DataSet ds = group.openDataSet(name);
    ds.read(values.data(), H5::PredType::NATIVE_DOUBLE);
  });
  for (size_t k = 0; k < values.size(); ++k) {
    if (std::isfinite(values[k])) continue;
    const std::string at = cols > 0 ? "(" + std::to_string(k / cols) + ", " +
                                          std::to_string(k % cols) + ")"
                                    : std::to_string(k);
    fail(file, object, "expected finite values, got " + format_number(values[k]) + " at " + at);
  }
  return values;
}

// A rank-1 dataset of exactly `n` values.
std::vector<double> read_vector(const H5::Group& group, const std::string& name, hsize_t n,
                                const std::string& meaning, const std::string& file,
                                const std::string& base) {
  const std::string object = base + "/" + name;
  const std::string expected = "(" + meaning + "=" + std::to_string(n) + ")";
  const std::vector<hsize_t> dims = dataset_shape(group, name, expected, file, object);
  if (dims.size() != 1 || dims[0] != n) {
    fail(file, object, "expected shape " + expected + ", got " + shape_string(dims));
  }
  return read_values(group, name, n, 0, file, object);
}

// A 0/1 integer attribute.
bool network_flag_attr(const H5::H5Object& obj, const char* name, const std::string& file, const std::string& object) {
  const long long v = read_int_attr(obj, name, file, object);
  if (v != 0 && v != 1) fail(file, object, "expected 0 or 1, got " + std::to_string(v));
  return v == 1;
}

struct LayerShape {
  Index in = 0, out = 0;
  nn::Activation activation = nn::Activation::kIdentity;
};

NamedNetwork read_network_group(const H5::Group& networks, const std::string& name,
                                const std::string& file) {
  const std::string base = network_path(name);
  const H5::Group group = with_context(file, base, [&] { return networks.openGroup(name); });

  if (!has_attr(group, "num_layers", file, base + "/num_layers")) {
    fail(file, base + "/num_layers", "attribute missing (expected the number of layer groups)");
  }
  const long long num_layers = read_int_attr(group, "num_layers", file, base + "/num_layers");
  if (num_layers < 1 || num_layers > NetworkLimits::kMaxLayers) {
    fail(file, base + "/num_layers",
         "expected 1 to " + std::to_string(NetworkLimits::kMaxLayers) + " layers, got " +
             std::to_string(num_layers));
  }
  // A layer group beyond num_layers means the attribute and the groups disagree.
  with_context(file, base, [&] {
    for (hsize_t i = 0; i < group.getNumObjs(); ++i) {
      const std::string child = group.getObjnameByIdx(i);
      if (child.size() <= 5 || child.compare(0, 5, "layer") != 0) continue;
      const std::string digits = child.substr(5);
      if (digits.find_first_not_of("0123456789") != std::string::npos) continue;
      if (digits.size() > 9 || std::stoll(digits) >= num_layers) {
        fail(file, base + "/" + child,
             "unexpected layer group: num_layers is " + std::to_string(num_layers) +
                 " (layers layer0 to layer" + std::to_string(num_layers - 1) + ")");
      }
    }
  });

  // Pass 1: every shape and activation, before any data is read.
  std::vector<LayerShape> layers(static_cast<size_t>(num_layers));
  std::vector<H5::Group> layer_groups;
  Index prev_out = -1;  // n_in is whatever layer0 declares; input_mean must agree
  long long total = 0;
  for (Index l = 0; l < num_layers; ++l) {
    const std::string lbase = base + "/" + layer_name(l);
    if (!with_context(file, lbase, [&] { return has_child(group, layer_name(l), H5O_TYPE_GROUP); })) {
      fail(file, lbase,
           "layer group missing (num_layers is " + std::to_string(num_layers) + ")");
    }
    layer_groups.push_back(with_context(file, lbase, [&] { return group.openGroup(layer_name(l)); }));
    const H5::Group& lg = layer_groups.back();

    const std::string act_name = read_string_attr(lg, "activation", file, lbase + "/activation");
    try {
      layers[l].activation = nn::parse_activation(act_name);
    } catch (const InvalidArgument& e) {
      fail(file, lbase + "/activation", e.what());
    }

    const std::string in_hint = prev_out < 0 ? "in" : std::to_string(prev_out);
    const std::vector<hsize_t> w =
        dataset_shape(lg, "weight", "(out, " + in_hint + ")", file, lbase + "/weight");
    if (w.size() != 2) {
      fail(file, lbase + "/weight",
           "expected a rank-2 shape (out, " + in_hint + "), got " + shape_string(w));
    }
    const Index out = static_cast<Index>(w[0]), in = static_cast<Index>(w[1]);
    if (out < 1 || in < 1 || (prev_out >= 0 && in != prev_out)) {
      const std::string expected_out = out < 1 ? "out>=1" : std::to_string(out);
      const std::string expected_in = prev_out >= 0 ? std::to_string(prev_out) : "in>=1";
      fail(file, lbase + "/weight",
           "expected shape (" + expected_out + ", " + expected_in + "), got " + shape_string(w));
    }
    const std::vector<hsize_t> b =
        dataset_shape(lg, "bias", "(" + std::to_string(out) + ")", file, lbase + "/bias");
    if (b.size() != 1 || b[0] != w[0]) {
      fail(file, lbase + "/bias",
           "expected shape (" + std::to_string(out) + "), got " + shape_string(b));
    }
    total += static_cast<long long>(out) * (in + 1);
    if (total > NetworkLimits::kMaxParameters) {
      fail(file, lbase + "/weight",
           "expected at most " + std::to_string(NetworkLimits::kMaxParameters) +
               " parameters per network, got " + std::to_string(total) + " up to this layer " +
               shape_string(w));
    }
    layers[l].in = in;
    layers[l].out = out;
    prev_out = out;
  }
  const Index n_in = layers.front().in, n_out = layers.back().out;

  // Pass 2: the data.
  std::vector<nn::LayerSpec> specs;
  for (const LayerShape& s : layers) specs.push_back({s.out, s.activation});
  nn::Mlp mlp(n_in, specs);
  std::vector<double> flat(static_cast<size_t>(mlp.num_parameters()));
  for (Index l = 0; l < num_layers; ++l) {
    const std::string lbase = base + "/" + layer_name(l);
    const LayerShape& s = layers[l];
    const std::vector<double> w =
        read_values(layer_groups[l], "weight", s.out * s.in, s.in, file, lbase + "/weight");
    const std::vector<double> b = read_values(layer_groups[l], "bias", s.out, 0, file, lbase + "/bias");
    std::copy(w.begin(), w.end(), flat.begin() + mlp.weight_offset(l));
    std::copy(b.begin(), b.end(), flat.begin() + mlp.bias_offset(l));
  }
  mlp.set_parameters(flat.data());

  auto as_vector = [](const std::vector<double>& v) {
    return Eigen::Map<const Eigen::VectorXd>(v.data(), static_cast<Index>(v.size())).eval();
  };
  const std::vector<double> mean = read_vector(group, "input_mean", n_in, "n_in", file, base);
  const std::vector<double> stdev = read_vector(group, "input_std", n_in, "n_in", file, base);
  for (size_t i = 0; i < stdev.size(); ++i) {
    if (!(stdev[i] > 0.0)) {
      fail(file, base + "/input_std",
           "expected values > 0, got " + format_number(stdev[i]) + " at " + std::to_string(i));
    }
  }
  const std::vector<double> scale = read_vector(group, "output_scale", n_out, "n_out", file, base);
  const std::vector<double> offset =
      read_vector(group, "output_offset", n_out, "n_out", file, base);
  mlp.set_input_normalization(as_vector(mean), as_vector(stdev));
  mlp.set_output_scaling(as_vector(scale), as_vector(offset));

  NamedNetwork net;
  net.name = name;
  auto names = [&](const char* attr, Index n, std::vector<std::string>& out) {
    const std::string object = base + "/" + attr;
    if (!has_attr(group, attr, file, object)) return;
    out = read_string_array_attr(group, attr, NetworkLimits::kMaxDim, file, object);
    if (!out.empty() && static_cast<Index>(out.size()) != n) {
      fail(file, object,
           "expected " + std::to_string(n) + " names (or none), got " +
               std::to_string(out.size()) + ": " + bracketed_list(out));
    }
  };
  names("input_names", n_in, net.input_names);
  names("output_names", n_out, net.output_names);
  if (has_attr(group, "zero_init_outputs", file, base + "/zero_init_outputs"))
    net.zero_init_outputs = network_flag_attr(group, "zero_init_outputs", file, base + "/zero_init_outputs");
  net.network = std::move(mlp);
  return net;
}

// The network group names in written order: by `index`, groups without one
// (written by other tools) after those, by name.
std::vector<std::string> ordered_network_names(const H5::Group& networks,
                                               const std::string& file) {
  const hsize_t count = with_context(file, "/networks", [&] { return networks.getNumObjs(); });
  if (count == 0) fail(file, "/networks", "contains no networks (expected at least 1, got 0)");
  if (count > static_cast<hsize_t>(NetworkLimits::kMaxNetworks)) {
    fail(file, "/networks",
         "expected at most " + std::to_string(NetworkLimits::kMaxNetworks) + " networks, got " +
             std::to_string(count));
  }
  std::vector<std::pair<long long, std::string>> entries;
  for (hsize_t i = 0; i < count; ++i) {
    const std::string name =
        with_context(file, "/networks", [&] { return networks.getObjnameByIdx(i); });
    const std::string path = network_path(name);
    const bool is_group = with_context(file, path, [&] {
      return networks.childObjType(name) == H5O_TYPE_GROUP;
    });
    if (!is_group) fail(file, path, "expected a network group, got a dataset or other object");
    const H5::Group child = with_context(file, path, [&] { return networks.openGroup(name); });
    const long long index = has_attr(child, "index", file, path + "/index")
                                ? read_int_attr(child, "index", file, path + "/index")
                                : std::numeric_limits<long long>::max();
    entries.emplace_back(index, name);
  }
  std::sort(entries.begin(), entries.end());
  std::vector<std::string> names;
  for (auto& entry : entries) names.push_back(std::move(entry.second));
  return names;
}

// Opens a weights file after the file-level checks; then `fn(h5, networks)`.
template <class F>
auto with_weights_file(const std::string& path, F&& fn) -> decltype(fn(std::declval<H5::H5File&>(),
                                                                        std::declval<H5::Group&>())) {
  H5::Exception::dontPrint();
  check_input_file(path, "weights file", InputError::kData, static_cast<std::uintmax_t>(NetworkLimits::kMaxFileBytes));
  try {
    if (!H5::H5File::isHdf5(path)) fail(path, "/", "not an HDF5 file");
    auto open_and_read = [&] {
      H5::H5File h5(path, H5F_ACC_RDONLY);
      read_format(h5, path, kNetworkFormat, kNetworkFormatVersion, "weights");
      if (!with_context(path, "/networks", [&] { return has_child(h5, "networks", H5O_TYPE_GROUP); })) {
        fail(path, "/networks", "group missing (expected one subgroup per network)");
      }
      H5::Group networks = with_context(path, "/networks", [&] { return h5.openGroup("networks"); });
      return fn(h5, networks);
    };
    hdf5::check_global_heaps(path);
    hdf5::read_in_isolation_first(path, [&] { (void)open_and_read(); });
    return open_and_read();
  } catch (const H5::Exception& e) {
    fail(path, "/", "cannot read: " + hdf5::error_text(e));
  }
}

}  // namespace

// ================================================================ public

void write_networks(const std::string& path, const std::vector<NamedNetwork>& networks,
                    const WeightsFileModel& model) {
  validate_for_write(networks, path);
  if (!model.model.empty() && model.model != "hybrid" && model.model != "mlp-delta" && model.model != "mlp-direct")
    throw InvalidArgument("write_networks: unknown model '" + model.model + "'");
  const fs::path parent = fs::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty() && !fs::is_directory(parent, ec))
    throw ConfigError(cannot_write(path, "directory '" + parent.string() + "' does not exist"));
  std::string object = "/";
  try {
    hdf5::write_file_atomic(path, [&](H5::H5File& h5) {
      write_string_attr(h5, "format", kNetworkFormat);
      write_int_attr(h5, "format_version", kNetworkFormatVersion);
      if (!model.model.empty()) write_string_attr(h5, "model", model.model);
      if (model.use_controls) write_int_attr(h5, "use_controls", *model.use_controls ? 1 : 0);
      object = "/networks";
      H5::Group group = h5.createGroup("networks");
      for (size_t i = 0; i < networks.size(); ++i) write_network(group, networks[i], i, object);
      object = "/";
    });
  } catch (const H5::Exception& e) {
    // An output that cannot be written is reported like every other (bad --out).
    throw ConfigError(cannot_write(path + ":" + object, hdf5::error_text(e)));
  }
}

std::vector<NamedNetwork> read_networks(const std::string& path) {
  return with_weights_file(path, [&](H5::H5File&, H5::Group& networks) {
    std::vector<NamedNetwork> out;
    for (const std::string& name : ordered_network_names(networks, path)) {
      out.push_back(read_network_group(networks, name, path));
    }
    return out;
  });
}

NamedNetwork read_network(const std::string& path, const std::string& name) {
  return with_weights_file(path, [&](H5::H5File&, H5::Group& networks) {
    const std::vector<std::string> names = ordered_network_names(networks, path);
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      fail(path, network_path(name), "network missing (the file has " + bracketed_list(names) + ")");
    }
    return read_network_group(networks, name, path);
  });
}

WeightsFileModel read_weights_file_model(const std::string& path) {
  return with_weights_file(path, [&](H5::H5File& h5, H5::Group&) {
    WeightsFileModel m;
    if (has_attr(h5, "model", path, "/model")) {
      m.model = read_string_attr(h5, "model", path, "/model");
      if (m.model != "hybrid" && m.model != "mlp-delta" && m.model != "mlp-direct")
        fail(path, "/model", "expected \"hybrid\", \"mlp-delta\" or \"mlp-direct\", got \"" + m.model + "\"");
    }
    if (has_attr(h5, "use_controls", path, "/use_controls")) m.use_controls = network_flag_attr(h5, "use_controls", path, "/use_controls");
    return m;
  });
}

std::string trained_model_kind(const std::string& path) {
  // HDF5's signature (HDF5 spec, "Format Signature") at offset 0, the only
  // place train-augment's files have it; anything else must be an LSTM file.
  check_input_file(path, "weights file", InputError::kData, static_cast<std::uintmax_t>(NetworkLimits::kMaxFileBytes));
  std::string head(8, '\0');
  std::ifstream in(path, std::ios::binary);
  in.read(head.data(), 8);
  head.resize(static_cast<size_t>(in.gcount()));
  if (head == std::string("\x89HDF\r\n\x1a\n", 8)) return read_weights_file_model(path).model;
  return read_lstm_file(path).model;
}

std::vector<std::string> network_names(const std::string& path) {
  return with_weights_file(path, [&](H5::H5File&, H5::Group& networks) {
    return ordered_network_names(networks, path);
  });
}

void check_network(const NamedNetwork& net, const NetworkExpectations& expect,
                   const std::string& source_path) {
  const std::string object = network_path(net.name);
  const nn::Mlp& mlp = net.network;
  if (expect.inputs >= 0 && mlp.input_dim() != expect.inputs) {
    fail(source_path, object,
         "expected " + std::to_string(expect.inputs) + " inputs, got " +
             std::to_string(mlp.input_dim()) + " (network " + mlp.describe() + ")");
  }
  if (expect.outputs >= 0 && mlp.output_dim() != expect.outputs) {
    fail(source_path, object,
         "expected " + std::to_string(expect.outputs) + " outputs, got " +
             std::to_string(mlp.output_dim()) + " (network " + mlp.describe() + ")");
  }
  if (!expect.input_names.empty() && !net.input_names.empty() &&
      expect.input_names != net.input_names) {
    fail(source_path, object + "/input_names",
         "expected " + bracketed_list(expect.input_names) + ", got " + bracketed_list(net.input_names));
  }
  if (!expect.output_names.empty() && !net.output_names.empty() &&
      expect.output_names != net.output_names) {
    fail(source_path, object + "/output_names",
         "expected " + bracketed_list(expect.output_names) + ", got " + bracketed_list(net.output_names));
  }
}

nlohmann::json networks_to_json(const std::vector<NamedNetwork>& networks) {
  using nlohmann::json;
  auto vec = [](const Eigen::VectorXd& v) { return std::vector<double>(v.data(), v.data() + v.size()); };
  json list = json::array();
  for (const NamedNetwork& net : networks) {
    const nn::Mlp& mlp = net.network;
    json j;
    j["name"] = net.name;
    j["input_names"] = net.input_names;
    j["output_names"] = net.output_names;
    j["input_mean"] = vec(mlp.input_mean());
    j["input_std"] = vec(mlp.input_std());
    j["output_scale"] = vec(mlp.output_scale());
    j["output_offset"] = vec(mlp.output_offset());
    json layers = json::array();
    for (Index l = 0; l < mlp.num_layers(); ++l) {
      json layer;
      layer["activation"] = nn::activation_name(mlp.activation(l));
      const auto W = mlp.weight(l);
      json rows = json::array();
      for (Index i = 0; i < W.rows(); ++i) {
        rows.push_back(std::vector<double>(W.data() + i * W.cols(), W.data() + (i + 1) * W.cols()));
      }
      layer["weight"] = std::move(rows);
      layer["bias"] = vec(mlp.bias(l));
      layers.push_back(std::move(layer));
    }
    j["layers"] = std::move(layers);
    list.push_back(std::move(j));
  }
  json out;
  out["format"] = kNetworkFormat;
  out["format_version"] = kNetworkFormatVersion;
  out["networks"] = std::move(list);
  return out;
}

void write_networks_json(const std::string& path, const std::vector<NamedNetwork>& networks) {
  write_text_atomic(path, networks_to_json(networks).dump(2) + "\n");
}

}  // namespace neuralsim
