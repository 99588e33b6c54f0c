// The three-algorithm check every model must pass: ABA, CRBA and RNEA are
// independent, so ABA(q, q̇, τ) = M⁻¹(τ - RNEA(q, q̇, 0)) and
// RNEA(q, q̇, ABA) = τ (with random external forces), and M is symmetric
// positive definite. Compiled once (algorithms_agree.cpp): the dense
// eigensolver and LDLT it uses cost seconds in every unit.
#pragma once

#include "neuralsim/model/model.hpp"

namespace neuralsim::testing {

// Non-fatal failures name the model; `trials` random states.
void expect_algorithms_agree(const Model<double>& model, int trials = 5);

}  // namespace neuralsim::testing
