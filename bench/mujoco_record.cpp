// Recordings from another engine (issue #38): simulates an MJCF model in
// MuJoCo under sinusoidal motor commands that change every MuJoCo step, and
// writes the samples of every `--record-every`-th step in our trajectory
// format (docs/data-format.md), as a log from a real robot or another
// simulator would arrive: the state at the recorded samples, and the
// command at each sample only (what happens between samples is for
// sim.controls to reconstruct; docs/data-format.md, "Control timing").
//
// Per trajectory (seeded; every draw is in the file's parameters):
//   u_a(t) = clamp(A_a sin(2π f t + φ0 − a λ)),  a = 0..nu−1 (a wave travelling down the chain),
//   f ~ U[f_lo, f_hi], λ ~ U[0.6, 1.4] rad, φ0 ~ U[0, 2π), A_a = amplitude · U[0.5, 1];
//   the root body's hinges start at U[−π, π), its slides at 0; other hinges
//   at U[−q0, q0] and hinge velocities at U[−qd0, qd0].
// The command is applied over each MuJoCo step from its value at the step's
// start (MuJoCo holds ctrl over a step).
//
// `--fluidshape ellipsoid` sets fluidshape="ellipsoid" on every geom
// (MuJoCo's ellipsoid fluid model: added mass, Kutta and Magnus lift; no
// counterpart in our model family); `--density` / `--viscosity` replace
// <option>'s. The MJCF MuJoCo simulated is written beside the output
// (OUT.xml), so the data names the exact model it came from.
//
// Usage: mujoco_record --model M.xml --out OUT.h5 [--count 10] [--samples 900]
//          [--record-every 5] [--seed 1] [--amplitude 1] [--frequency 0.5 1.5]
//          [--q0 0.5] [--qd0 1] [--density RHO] [--viscosity MU] [--fluidshape ellipsoid]
#include <mujoco/mujoco.h>
#include <tinyxml2.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "neuralsim/io/atomic_file.hpp"
#include "neuralsim/io/hdf5_trajectory.hpp"
#include "neuralsim/io/input_file.hpp"
#include "neuralsim/io/mjcf_model.hpp"

using namespace neuralsim;

namespace {

struct Settings {
  std::string model, out, fluidshape = "none";
  int count = 10, samples = 900, record_every = 5;
  unsigned long long seed = 1;
  double amplitude = 1, q0 = 0.5, qd0 = 1;
  std::vector<double> frequency = {0.5, 1.5};
  std::optional<double> density, viscosity;
};

[[noreturn]] void fail(const std::string& message) {
  std::cerr << "mujoco_record: " << message << "\n";
  std::exit(2);
}

// The model text MuJoCo simulates: the file with the replacements (an
// explicit geom attribute overrides the defaults').
std::string mujoco_text(const std::string& text, const Settings& s) {
  tinyxml2::XMLDocument doc;
  if (doc.Parse(text.c_str()) != tinyxml2::XML_SUCCESS) fail(s.model + ": " + doc.ErrorStr());
  tinyxml2::XMLElement* root = doc.RootElement();
  if (s.density || s.viscosity) {
    tinyxml2::XMLElement* option = root->FirstChildElement("option");
    if (!option) option = root->InsertFirstChild(doc.NewElement("option"))->ToElement();
    if (s.density) option->SetAttribute("density", *s.density);
    if (s.viscosity) option->SetAttribute("viscosity", *s.viscosity);
  }
  std::vector<tinyxml2::XMLElement*> stack = {root};
  while (!stack.empty() && s.fluidshape != "none") {
    tinyxml2::XMLElement* e = stack.back();
    stack.pop_back();
    if (std::string(e->Name()) == "geom") e->SetAttribute("fluidshape", s.fluidshape.c_str());
    for (tinyxml2::XMLElement* c = e->FirstChildElement(); c; c = c->NextSiblingElement()) stack.push_back(c);
  }
  tinyxml2::XMLPrinter printer;
  doc.Print(&printer);
  return printer.CStr();
}

}  // namespace

int record(int argc, char** argv) {
  Settings s;
  CLI::App app{"Record trajectories of an MJCF model simulated by MuJoCo, in NeuralSim's trajectory format"};
  app.add_option("--model", s.model, "MJCF file (hinge and slide joints, <motor> actuators)")->required();
  app.add_option("--out", s.out, "output trajectory file (.h5); the simulated MJCF is written beside it as .xml")->required();
  app.add_option("--count", s.count, "trajectories")->check(CLI::Range(1, 10000));
  app.add_option("--samples", s.samples, "recorded samples per trajectory")->check(CLI::Range(2, 1000000));
  app.add_option("--record-every", s.record_every, "MuJoCo steps per recorded sample")->check(CLI::Range(1, 10000));
  app.add_option("--seed", s.seed, "seed of every draw");
  app.add_option("--amplitude", s.amplitude, "largest command amplitude")->check(CLI::Range(0.0, 1e6));
  app.add_option("--frequency", s.frequency, "command frequency range (Hz): LO HI")->expected(2);
  app.add_option("--q0", s.q0, "initial hinge angles within ±q0 (rad), except the root's")->check(CLI::Range(0.0, 3.2));
  app.add_option("--qd0", s.qd0, "initial hinge velocities within ±qd0 (rad/s)")->check(CLI::Range(0.0, 1e3));
  app.add_option("--density", s.density, "replaces <option density> (kg/m³)")->check(CLI::Range(0.0, 1e5));
  app.add_option("--viscosity", s.viscosity, "replaces <option viscosity> (Pa·s)")->check(CLI::Range(0.0, 1e5));
  app.add_option("--fluidshape", s.fluidshape, "fluidshape of every geom")->check(CLI::IsMember({"none", "ellipsoid"}));
  CLI11_PARSE(app, argc, argv);
  if (!(s.frequency[0] > 0 && s.frequency[1] >= s.frequency[0] && std::isfinite(s.frequency[1])))
    fail("--frequency: expected 0 < LO <= HI, got " + std::to_string(s.frequency[0]) + " " + std::to_string(s.frequency[1]));
  if (std::filesystem::path(s.out).extension() != ".h5") fail("--out: expected a .h5 file, got '" + s.out + "'");

  // Ours, for the names and the coordinate map; MuJoCo's, to simulate.
  const std::string text = read_input_file(s.model, "MJCF model", InputError::kConfig, kMaxMjcfBytes);
  MjcfOptions ours;
  ours.density = s.density;
  ours.viscosity = s.viscosity;
  const MjcfModel loaded = parse_mjcf_model(text, s.model, ours);
  const Model<double>& model = loaded.model;
  const std::string xml_out = std::filesystem::path(s.out).replace_extension(".xml").string();
  // Includes resolve relative to the written copy (a model with includes needs them beside it; MuJoCo names a
  // missing one).
  write_text_atomic(xml_out, mujoco_text(text, s));
  char error[1000] = "";
  mjModel* m = mj_loadXML(xml_out.c_str(), nullptr, error, sizeof error);
  if (!m) fail(xml_out + ": MuJoCo: " + error);
  mjData* d = mj_makeData(m);
  if (m->nq != model.nq || m->nv != model.nv || m->nu != static_cast<int>(loaded.actuators.size()))
    fail(s.model + ": MuJoCo and NeuralSim disagree on the sizes (nq, nv, nu)");
  for (int j = 0; j < m->njnt; ++j)
    if (m->jnt_type[j] != mjJNT_HINGE && m->jnt_type[j] != mjJNT_SLIDE)
      fail(s.model + ": joint " + std::to_string(j) + ": expected hinge or slide joints only (q maps one to one)");

  std::mt19937_64 rng(s.seed);
  std::uniform_real_distribution<double> unit(0, 1);
  auto uniform = [&](double lo, double hi) { return lo + (hi - lo) * unit(rng); };
  const double pi = 3.14159265358979323846, dt = m->opt.timestep;
  TrajectorySet set;
  set.meta.model = model.name;
  set.meta.joint_names = model.velocity_names();
  set.meta.q_names = model.position_names();
  set.meta.generator = std::string("mujoco_record (MuJoCo ") + mj_versionString() + ")";
  set.meta.seed = static_cast<long long>(s.seed);
  nlohmann::json draws = nlohmann::json::array();
  for (int n = 0; n < s.count; ++n) {
    mj_resetData(m, d);
    for (int j = 0; j < m->njnt; ++j) {
      const bool root = m->jnt_bodyid[j] == m->jnt_bodyid[0];
      const int qa = m->jnt_qposadr[j], va = m->jnt_dofadr[j];
      if (m->jnt_type[j] == mjJNT_HINGE) {
        d->qpos[qa] = root ? uniform(-pi, pi) : uniform(-s.q0, s.q0);
        d->qvel[va] = root ? 0 : uniform(-s.qd0, s.qd0);
      }
    }
    const double f = uniform(s.frequency[0], s.frequency[1]), lag = uniform(0.6, 1.4), phase = uniform(0, 2 * pi);
    std::vector<double> amplitude(static_cast<size_t>(m->nu));
    for (double& a : amplitude) a = s.amplitude * uniform(0.5, 1);
    auto command = [&](int a, double t) {
      double u = amplitude[static_cast<size_t>(a)] * std::sin(2 * pi * f * t + phase - a * lag);
      if (m->actuator_ctrllimited[a]) u = std::clamp(u, m->actuator_ctrlrange[2 * a], m->actuator_ctrlrange[2 * a + 1]);
      return u;
    };
    Trajectory tr;
    tr.time.resize(s.samples);
    tr.q.resize(s.samples, m->nq);
    tr.qd.resize(s.samples, m->nv);
    tr.tau = RowMatrixXd::Zero(s.samples, m->nv);
    for (int k = 0; k < s.samples; ++k) {
      const double t = static_cast<double>(k) * s.record_every * dt;
      tr.time[k] = t;
      for (int i = 0; i < m->nq; ++i) tr.q(k, i) = d->qpos[i];
      for (int i = 0; i < m->nv; ++i) tr.qd(k, i) = d->qvel[i];
      for (int a = 0; a < m->nu; ++a)
        tr.tau(k, model.joints[static_cast<size_t>(loaded.actuators[static_cast<size_t>(a)].joint)].idx_v) = command(a, t);
      if (k + 1 == s.samples) break;
      for (int step = 0; step < s.record_every; ++step) {
        const double ts = t + step * dt;
        for (int a = 0; a < m->nu; ++a) d->ctrl[a] = command(a, ts);
        mj_step(m, d);
      }
      for (int i = 0; i < m->nv; ++i)
        if (!std::isfinite(d->qvel[i])) fail("trajectory " + std::to_string(n) + " diverged at t = " + std::to_string(t));
    }
    set.trajectories.push_back(std::move(tr));
    draws.push_back({{"frequency", f}, {"lag", lag}, {"phase", phase}, {"amplitude", amplitude}});
  }
  set.meta.parameters_json =
      nlohmann::json{{"mjcf", s.model},
                     {"simulated_mjcf", std::filesystem::path(xml_out).filename().string()},
                     {"density", m->opt.density},
                     {"viscosity", m->opt.viscosity},
                     {"fluidshape", s.fluidshape},
                     {"timestep", dt},
                     {"integrator", m->opt.integrator == mjINT_RK4 ? "RK4" : m->opt.integrator == mjINT_EULER ? "Euler" : "implicit"},
                     {"record_every", s.record_every},
                     {"command", "u_a(t) = A_a sin(2 pi f t + phase - a lag), held over each MuJoCo step"},
                     {"trajectories", draws}}
          .dump();
  write_trajectories(s.out, set);
  mj_deleteData(d);
  mj_deleteModel(m);
  std::cout << "wrote " << s.out << " (" << s.count << " x " << s.samples << " samples every "
            << s.record_every * dt << " s) and " << xml_out << "\n";
  return 0;
}

int main(int argc, char** argv) {
  try {
    return record(argc, argv);
  } catch (const std::exception& e) {  // bad input files, unwritable output: one line, exit 2
    fail(e.what());
  }
}
