// summary.json's estimates of link inertias (docs/simid.md): each fitted
// link in physical coordinates, and for an inverse-dynamics fit the base
// parameters with their estimates and standard errors.
#include "common/app.hpp"
#include "neuralsim/tools/identify.hpp"
#include "simid/simid_job.hpp"

namespace neuralsim {

void inertial_metrics(const IdentificationResult& r, nlohmann::json& m) {
  for (const InertialEstimate& e : r.inertials)
    for (size_t k = 0; k < 10; ++k)
      m["inertials"][e.link][InertialEstimate::coordinate_names()[k]] = {
          {"value", e.value[static_cast<int>(k)]}, {"std_error", finite_or_null(e.std_error[static_cast<int>(k)])}};
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
