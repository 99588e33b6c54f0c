// summary.json's estimates beside the named parameters (docs/simid.md):
// each fitted link in physical coordinates, for an inverse-dynamics fit the
// base parameters with their estimates and standard errors, and the fitted
// starting states (residual.fit_initial_state, multiple shooting's segments).
#include "common/app.hpp"
#include "neuralsim/tools/identify.hpp"
#include "simid/simid_job.hpp"

namespace neuralsim {

void estimate_metrics(const IdentificationResult& r, nlohmann::json& m) {
  for (const InertialEstimate& e : r.inertials)
    for (size_t k = 0; k < 10; ++k)
      m["inertials"][e.link][InertialEstimate::coordinate_names()[k]] = {
          {"value", e.value[static_cast<int>(k)]}, {"std_error", finite_or_null(e.std_error[static_cast<int>(k)])}};
  for (const FittedStartStates& f : r.start_states) {
    nlohmann::json q = nlohmann::json::array(), qd = nlohmann::json::array();
    for (Eigen::Index k = 0; k < f.states.q.rows(); ++k) {
      q.push_back(std::vector<double>(f.states.q.row(k).data(), f.states.q.row(k).data() + f.states.q.cols()));
      qd.push_back(std::vector<double>(f.states.qd.row(k).data(), f.states.qd.row(k).data() + f.states.qd.cols()));
    }
    m["start_states"][f.name] = {{"samples", f.states.samples}, {"q", q}, {"qd", qd}};
  }
  const BaseParameterFit& b = r.base_parameters;
  if (b.links.empty()) return;
  nlohmann::json list = nlohmann::json::array();
  for (const BaseParameterEstimate& e : b.estimates)
    list.push_back({{"combination", e.expression}, {"value", e.value}, {"std_error", finite_or_null(e.std_error)}});
  m["base_parameters"] = {{"links", b.links},
                          {"standard_parameters", b.standard},
                          {"rank", b.base.rank},
                          {"rank_tolerance", b.base.tolerance},
                          {"estimates", list}};
}

}  // namespace neuralsim
