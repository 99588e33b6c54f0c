// NeuralSim vs MuJoCo on the same robot (Laikago, floating base, 18 DoF), in
// the same process and from the same random state.
//
// Before timing, the program checks that the two engines describe the same
// robot: total mass, and the accelerations each computes for the same state
// (MuJoCo's qacc converted to our coordinates). A mismatch is printed and
// makes the program fail, since the timings would then compare different
// robots.
//
// State conventions:
//   ours:   free joint q = [x y z qx qy qz qw], v = body-frame [ω; v_o]
//           (v_o: velocity of the body origin in body coordinates), τ dual.
//   MuJoCo: free joint qpos = [x y z qw qx qy qz], qvel = [world v_o; body ω],
//           qfrc dual to qvel.
// With R the body->world rotation: qvel_lin = R v_o, qvel_ang = ω,
// qfrc_lin = R f_o, qfrc_ang = n, and qacc_lin = R (v̇_o + ω × v_o).
//
// What is timed on the MuJoCo side:
//   mj_forward            everything MuJoCo does per evaluation with default
//                         options (kinematics, CRB + factorization, RNE,
//                         collision detection, constraint assembly and
//                         solver, sensors...). The model has no floor, so no
//                         contacts are found: the collision and solver stages
//                         run but are cheap.
//   mj_forward_noconstr   mj_forward with mjDSBL_CONTACT | mjDSBL_CONSTRAINT.
//   mj_smooth_dynamics    only the stages needed for the unconstrained
//                         acceleration M⁻¹(τ - c): mj_kinematics, mj_comPos,
//                         mj_crb, mj_factorM, mj_comVel, mj_passive, mj_rne,
//                         mj_fwdAcceleration -> qacc_smooth. This is the
//                         closest MuJoCo counterpart of our ABA (same inputs,
//                         same output) that the public API offers.
//   mj_step               mj_forward + Euler integration, dt = 1 ms.
// and ours: aba() (kinematics + ABA) and Stepper::step (semi-implicit Euler).
#include <mujoco/mujoco.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "bench_common.hpp"
#include "neuralsim/step/stepper.hpp"

namespace neuralsim::bench {
namespace {

constexpr int kResetEvery = 1000;
constexpr double kDt = 1e-3;

struct MjDeleter {
  void operator()(mjModel* m) const { mj_deleteModel(m); }
  void operator()(mjData* d) const { mj_deleteData(d); }
};
using MjModelPtr = std::unique_ptr<mjModel, MjDeleter>;
using MjDataPtr = std::unique_ptr<mjData, MjDeleter>;

struct Setup {
  Model<double> model;
  State state;
  MjModelPtr mj;
  bool ok = false;
};

Setup& setup() {
  static Setup s;
  return s;
}

// Copies our state (and generalized force) into MuJoCo's qpos/qvel/qfrc_applied.
void to_mujoco(const Model<double>& model, const State& s, const mjModel* m, mjData* d) {
  for (int jm = 0; jm < m->njnt; ++jm) {
    const int qa = m->jnt_qposadr[jm], va = m->jnt_dofadr[jm];
    if (m->jnt_type[jm] == mjJNT_FREE) {
      const Joint<double>& j = model.joints[0];  // the URDF root's floating_base
      const double* q = s.q.data() + j.idx_q;
      const Eigen::Quaterniond quat(q[6], q[3], q[4], q[5]);
      const Eigen::Matrix3d R = quat.normalized().toRotationMatrix();  // body -> world
      for (int k = 0; k < 3; ++k) d->qpos[qa + k] = q[k];
      d->qpos[qa + 3] = q[6];
      d->qpos[qa + 4] = q[3];
      d->qpos[qa + 5] = q[4];
      d->qpos[qa + 6] = q[5];
      const Eigen::Vector3d w = s.qd.segment<3>(j.idx_v), vo = s.qd.segment<3>(j.idx_v + 3);
      const Eigen::Vector3d n = s.tau.segment<3>(j.idx_v), fo = s.tau.segment<3>(j.idx_v + 3);
      Eigen::Map<Eigen::Vector3d>(d->qvel + va) = R * vo;
      Eigen::Map<Eigen::Vector3d>(d->qvel + va + 3) = w;
      Eigen::Map<Eigen::Vector3d>(d->qfrc_applied + va) = R * fo;
      Eigen::Map<Eigen::Vector3d>(d->qfrc_applied + va + 3) = n;
    } else {
      const char* name = mj_id2name(m, mjOBJ_JOINT, jm);
      const int ji = name ? model.joint_index(name) : -1;
      if (ji < 0 || model.joints[ji].nv != 1)
        throw std::runtime_error(std::string("MuJoCo joint '") + (name ? name : "?") +
                                 "' has no 1-DoF counterpart in the URDF model");
      const Joint<double>& j = model.joints[ji];
      d->qpos[qa] = s.q[j.idx_q];
      d->qvel[va] = s.qd[j.idx_v];
      d->qfrc_applied[va] = s.tau[j.idx_v];
    }
  }
}

// MuJoCo's acceleration `qacc` in our coordinates (see the header comment).
VecX<double> from_mujoco_acc(const Model<double>& model, const State& s, const mjModel* m,
                             const mjtNum* qacc) {
  VecX<double> out = VecX<double>::Zero(model.nv);
  for (int jm = 0; jm < m->njnt; ++jm) {
    const int va = m->jnt_dofadr[jm];
    if (m->jnt_type[jm] == mjJNT_FREE) {
      const Joint<double>& j = model.joints[0];
      const double* q = s.q.data() + j.idx_q;
      const Eigen::Matrix3d R = Eigen::Quaterniond(q[6], q[3], q[4], q[5]).normalized().toRotationMatrix();
      const Eigen::Vector3d w = s.qd.segment<3>(j.idx_v), vo = s.qd.segment<3>(j.idx_v + 3);
      const Eigen::Vector3d a_lin_world(qacc[va], qacc[va + 1], qacc[va + 2]);
      out.segment<3>(j.idx_v) = Eigen::Vector3d(qacc[va + 3], qacc[va + 4], qacc[va + 5]);
      out.segment<3>(j.idx_v + 3) = R.transpose() * a_lin_world - w.cross(vo);
    } else {
      const Joint<double>& j = model.joints[model.joint_index(mj_id2name(m, mjOBJ_JOINT, jm))];
      out[j.idx_v] = qacc[va];
    }
  }
  return out;
}

void mj_smooth_dynamics(const mjModel* m, mjData* d) {
  mj_kinematics(m, d);
  mj_comPos(m, d);
  mj_crb(m, d);
  mj_factorM(m, d);
  mj_comVel(m, d);
  mj_passive(m, d);
  mj_rne(m, d, 0, d->qfrc_bias);
  mj_fwdAcceleration(m, d);
}

// Loads both models and compares them. Returns false on a mismatch.
bool prepare() {
  Setup& su = setup();
  su.model = laikago_model();
  su.state = random_state(su.model);
  char err[1000] = "";
  const std::string xml = shared_model_path("laikago/laikago_floating_mujoco.xml");
  su.mj.reset(mj_loadXML(xml.c_str(), nullptr, err, sizeof err));
  if (!su.mj) {
    std::fprintf(stderr, "mj_loadXML(%s): %s\n", xml.c_str(), err);
    return false;
  }
  mjModel* m = su.mj.get();
  m->opt.timestep = kDt;
  std::printf("MuJoCo %s; model %s: nq %d nv %d nbody %d | NeuralSim: nq %d nv %d bodies %d\n",
              mj_versionString(), xml.c_str(), m->nq, m->nv, m->nbody, su.model.nq, su.model.nv,
              su.model.num_bodies());
  bool ok = m->nq == su.model.nq && m->nv == su.model.nv;

  double mj_mass = 0;
  for (int b = 0; b < m->nbody; ++b) mj_mass += m->body_mass[b];
  const double our_mass = su.model.total_mass();
  std::printf("total mass: MuJoCo %.6f kg, NeuralSim %.6f kg (difference %.2e)\n", mj_mass, our_mass,
              mj_mass - our_mass);
  ok = ok && std::abs(mj_mass - our_mass) < 1e-6 * our_mass;

  // Same state in both engines -> same accelerations?
  MjDataPtr d(mj_makeData(m));
  to_mujoco(su.model, su.state, m, d.get());
  mj_forward(m, d.get());
  const VecX<double> qacc_mj = from_mujoco_acc(su.model, su.state, m, d->qacc);
  Data<double> data(su.model);
  aba(su.model, data, su.state.q, su.state.qd, su.state.tau);
  const double diff = (qacc_mj - data.qdd).cwiseAbs().maxCoeff();
  const double scale = data.qdd.cwiseAbs().maxCoeff();
  std::printf("accelerations for the same random state: max |q̈_MuJoCo - q̈_NeuralSim| = %.3e "
              "(max |q̈| = %.3f, MuJoCo contacts: %d)\n", diff, scale, d->ncon);
  // The XML was converted from the URDF with ~6 significant digits
  // (rpy 1.57079 vs quat 0.500003...), so agreement is to ~1e-4 relative.
  ok = ok && diff < 1e-3 * std::max(1.0, scale) && d->ncon == 0;

  MjDataPtr d2(mj_makeData(m));
  to_mujoco(su.model, su.state, m, d2.get());
  mj_smooth_dynamics(m, d2.get());
  double diff_smooth = 0;
  for (int i = 0; i < m->nv; ++i) diff_smooth = std::max(diff_smooth, std::abs(d2->qacc_smooth[i] - d->qacc[i]));
  std::printf("MuJoCo smooth-dynamics path vs mj_forward: max |Δqacc| = %.3e\n", diff_smooth);
  ok = ok && diff_smooth < 1e-9 * std::max(1.0, scale);
  char buf[256];
  std::snprintf(buf, sizeof buf, "mass MuJoCo %.6f / NeuralSim %.6f kg; max |dqacc| %.3e (max |qacc| %.3f)",
                mj_mass, our_mass, diff, scale);
  benchmark::AddCustomContext("model_check", std::string(ok ? "OK: " : "MISMATCH: ") + buf);
  benchmark::AddCustomContext("mujoco_version", mj_versionString());
  if (!ok) std::printf("MISMATCH: the two models are not the same robot; timings are not comparable\n");
  su.ok = ok;
  return ok;
}

template <void (*Fn)(const mjModel*, mjData*)>
void BM_Mj(benchmark::State& state, int disable_flags) {
  const Setup& su = setup();
  // A private model copy so the option flags do not leak between benchmarks.
  MjModelPtr m(mj_copyModel(nullptr, su.mj.get()));
  m->opt.disableflags |= disable_flags;
  MjDataPtr d(mj_makeData(m.get()));
  to_mujoco(su.model, su.state, m.get(), d.get());
  for (auto _ : state) {
    Fn(m.get(), d.get());
    benchmark::DoNotOptimize(d->qacc);
    benchmark::ClobberMemory();
  }
  label_model(state, "laikago (MuJoCo)", su.model);
}

void BM_MjStep(benchmark::State& state) {
  const Setup& su = setup();
  const mjModel* m = su.mj.get();
  MjDataPtr d(mj_makeData(m));
  to_mujoco(su.model, su.state, m, d.get());
  MjDataPtr d0(mj_makeData(m));
  mj_copyData(d0.get(), m, d.get());
  int k = 0;
  for (auto _ : state) {
    mj_step(m, d.get());
    benchmark::DoNotOptimize(d->qpos);
    benchmark::ClobberMemory();
    if (++k == kResetEvery) {
      k = 0;
      d->time = 0;
      mju_copy(d->qpos, d0->qpos, m->nq);
      mju_copy(d->qvel, d0->qvel, m->nv);
    }
  }
  label_model(state, "laikago (MuJoCo, Euler, dt 1 ms)", su.model);
}

void BM_OurABA(benchmark::State& state) {
  const Setup& su = setup();
  Data<double> data(su.model);
  for (auto _ : state) {
    aba(su.model, data, su.state.q, su.state.qd, su.state.tau);
    benchmark::DoNotOptimize(data.qdd.data());
    benchmark::ClobberMemory();
  }
  label_model(state, "laikago (NeuralSim)", su.model);
}

void BM_OurStep(benchmark::State& state) {
  const Setup& su = setup();
  StepOptions opt;
  opt.dt = kDt;
  Stepper<double> stepper(su.model, opt);
  VecX<double> q = su.state.q, qd = su.state.qd;
  int k = 0;
  double t = 0;
  for (auto _ : state) {
    stepper.step(q, qd, su.state.tau, t);
    t += kDt;
    benchmark::DoNotOptimize(q.data());
    benchmark::ClobberMemory();
    if (++k == kResetEvery) {
      k = 0;
      t = 0;
      q = su.state.q;
      qd = su.state.qd;
    }
  }
  label_model(state, "laikago (NeuralSim, semi-implicit Euler, dt 1 ms)", su.model);
}

void register_all() {
  configure(benchmark::RegisterBenchmark("MuJoCo/mj_forward", BM_Mj<mj_forward>, 0));
  configure(benchmark::RegisterBenchmark("MuJoCo/mj_forward_noconstr", BM_Mj<mj_forward>,
                                         int(mjDSBL_CONTACT | mjDSBL_CONSTRAINT)));
  configure(benchmark::RegisterBenchmark("MuJoCo/mj_smooth_dynamics", BM_Mj<mj_smooth_dynamics>, 0));
  configure(benchmark::RegisterBenchmark("MuJoCo/mj_step", BM_MjStep));
  configure(benchmark::RegisterBenchmark("NeuralSim/aba", BM_OurABA));
  configure(benchmark::RegisterBenchmark("NeuralSim/step_euler", BM_OurStep));
}

void summary(const RecordingReporter& rep) {
  const double aba_ns = rep.ns("NeuralSim/aba");
  const double step_ns = rep.ns("NeuralSim/step_euler");
  std::printf("\nSummary, Laikago 18 DoF (min CPU time over the repetitions, ns per call):\n");
  std::printf("  %-40s %10s %10s\n", "", "CPU", "real");
  for (const auto& [name, t] : rep.all())
    std::printf("  %-40s %10.1f %10.1f\n", name.c_str(), t.cpu_ns, t.real_ns);
  std::printf("\nRatios (> 1: NeuralSim is faster):\n");
  print_ratio("mj_forward / NeuralSim aba", rep.ns("MuJoCo/mj_forward"), aba_ns);
  print_ratio("mj_forward (no contact/constraint) / NeuralSim aba", rep.ns("MuJoCo/mj_forward_noconstr"), aba_ns);
  print_ratio("mj smooth dynamics (CRB+RNE+solve) / NeuralSim aba", rep.ns("MuJoCo/mj_smooth_dynamics"), aba_ns);
  print_ratio("mj_step / NeuralSim Stepper::step (Euler)", rep.ns("MuJoCo/mj_step"), step_ns);
  const double r = aba_ns > 0 ? rep.ns("MuJoCo/mj_forward") / aba_ns : 0;
  if (r > 0)
    std::printf("\nTarget: NeuralSim ABA >= 2x faster than mj_forward: %.2fx -> %s\n", r,
                r >= 2 ? "MET" : "MISSED");
  if (!setup().ok) std::printf("WARNING: the model check failed (see the top of the output)\n");
}

}  // namespace
}  // namespace neuralsim::bench

int main(int argc, char** argv) {
  return neuralsim::bench::bench_main(
      argc, argv, "bench_mujoco",
      [] {
        if (!neuralsim::bench::prepare()) return false;
        neuralsim::bench::register_all();
        return true;
      },
      neuralsim::bench::summary);
}
