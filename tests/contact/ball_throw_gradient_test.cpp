// Degrave et al.'s ball throw (configs/rollout_ball_throw.yaml): the
// gradient of the ball's final position w.r.t. its 6 initial velocity
// components, by forward-mode AD (ceres::Jet) through the Hunt–Crossley
// contact, equals central finite differences. The trajectory bounces and
// rolls; no contact switches between the perturbed runs, which the check
// itself confirms (the gradients agree to ~3e-5 relative).
#include <ceres/jet.h>
#include <gtest/gtest.h>

#include "neuralsim/contact/contact_system.hpp"
#include "neuralsim/experiment/experiment.hpp"
#include "support/test_models.hpp"

namespace neuralsim {
namespace {

// Six derivatives in the explicitly instantiated Jet8 (core/scalar.hpp),
// so this test does not instantiate the engine again.
using J = Jet8;

struct Throw {
  // The shipped config, damping included. Its friction_velocity (0.1 m/s)
  // matters: regularized Coulomb friction has slope μ f_n / ε, and during an
  // impact f_n is ~100 m g, so with ε = 0.01 m/s its explicit integration
  // chatters from step to step. The final position is then rough at the
  // 1e-6 scale and AD and central differences disagree by ~1 %.
  Config cfg = Config::load(testing::source_path("configs/rollout_ball_throw.yaml"), {});
  Experiment experiment = load_experiment(cfg);
  const Model<double>& model = experiment.model;
  StepOptions options = experiment.step;
  ContactSettings contact = *experiment.contact;
  Eigen::VectorXd q0, qd0;
  long long steps = std::llround(cfg.get<double>("sim.duration") / options.dt);
  Throw() {
    std::mt19937_64 rng(1);
    const InitialState s = read_initial_states(cfg.at("initial_states"), model, rng, 1).front();
    q0 = s.q;
    qd0 = s.qd;
  }

  template <class S>
  Vec3<S> final_position(const Model<S>& m, const VecX<S>& qd_init, int* bounces = nullptr) const {
    Stepper<S> stepper(m, options);
    const ContactSystem<S>& system = *install_contact(contact, model, stepper);
    VecX<S> q = q0.cast<S>(), qd = qd_init, u = VecX<S>::Zero(m.nv);
    bool touching = false;
    for (long long k = 0; k < steps; ++k) {
      stepper.step(q, qd, u, k * options.dt);
      const bool now = system.num_contacts() > 0 && system.contacts()[0].normal_force > S(0);
      if (bounces && now && !touching) ++*bounces;
      touching = now;
    }
    return q.template head<3>();
  }
};

TEST(BallThrow, FinalPositionGradientMatchesFiniteDifferences) {
  const Throw th;
  const Model<J> mj = th.model.cast<J>();
  VecX<J> qd(6);
  for (int i = 0; i < 6; ++i) qd[i] = J(th.qd0[i], i);
  int bounces = 0;
  const Vec3<J> p = th.final_position(mj, qd, &bounces);
  EXPECT_GE(bounces, 2);  // it does bounce
  Eigen::Matrix<double, 3, 6> ad, fd;
  for (int r = 0; r < 3; ++r) ad.row(r) = p[r].v.head<6>().transpose();
  const double eps = 1e-6;
  for (int i = 0; i < 6; ++i) {
    Eigen::VectorXd plus = th.qd0, minus = th.qd0;
    plus[i] += eps;
    minus[i] -= eps;
    fd.col(i) = (th.final_position(th.model, plus) - th.final_position(th.model, minus)) / (2 * eps);
  }
  std::printf("[ ball throw ] %d bounces, final position %.4f %.4f %.4f, |AD - FD| / |FD| = %.2e\n", bounces,
              p[0].a, p[1].a, p[2].a, (ad - fd).norm() / fd.norm());
  for (int r = 0; r < 3; ++r)
    for (int i = 0; i < 6; ++i)
      EXPECT_NEAR(ad(r, i), fd(r, i), 3e-4 * fd.norm()) << "d p" << r << " / d qd" << i;
  // Central differences carry O(eps^2) truncation and O(1e-16/eps) rounding
  // errors, amplified by the sensitivities of three bounces: 3e-4 of |FD|
  // bounds their accuracy (measured: 3.4e-5).
  EXPECT_LT((ad - fd).norm(), 3e-4 * fd.norm());
}

}  // namespace
}  // namespace neuralsim
