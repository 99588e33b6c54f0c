#include "support/algorithms_agree.hpp"

#include <gtest/gtest.h>

#include <Eigen/Dense>

#include "neuralsim/dynamics/aba.hpp"
#include "neuralsim/dynamics/crba.hpp"
#include "neuralsim/dynamics/rnea.hpp"
#include "support/dense_reference.hpp"
#include "support/test_models.hpp"

namespace neuralsim::testing {

void expect_algorithms_agree(const Model<double>& model, int trials) {
  ASSERT_GT(model.nv, 0) << model.name;
  std::mt19937 rng(42);
  Data<double> data(model);
  Eigen::VectorXd q, qd;
  for (int t = 0; t < trials; ++t) {
    random_state(model, rng, q, qd);
    const Eigen::VectorXd tau = Eigen::VectorXd::Random(model.nv);
    // Random external forces too: all three must treat them the same way.
    for (auto& f : data.f_ext) f = Vec6<double>::Random();

    aba(model, data, q, qd, tau);
    const Eigen::VectorXd qdd_aba = data.qdd;

    nonlinear_effects(model, data, q, qd);
    const Eigen::VectorXd bias = data.bias;
    crba(model, data, q);
    const Eigen::MatrixXd M = data.M;
    ASSERT_LT((M - M.transpose()).norm(), 1e-12) << model.name;
    ASSERT_GT(min_eigenvalue(M), 0.0) << model.name << ": M not positive definite";

    const Eigen::VectorXd qdd_crba = spd_solve(M, tau - bias);
    EXPECT_LT((qdd_aba - qdd_crba).norm() / (1.0 + qdd_crba.norm()), 1e-9) << model.name;

    rnea(model, data, q, qd, qdd_aba);
    EXPECT_LT((data.tau - tau).norm() / (1.0 + tau.norm()), 1e-9) << model.name;
  }
}

}  // namespace neuralsim::testing
