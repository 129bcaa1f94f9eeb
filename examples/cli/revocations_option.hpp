#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/revocations_option.hpp --revocations MODEL.json: the fitted revocation model a simulation draws
/// from, which pool each worker type uses, and the calibration statement every printed probability carries.
///
/// Pools for a worker type: with --zone, the type's pool in that zone; without it, the type's only pool, or
/// all of its pools with the workers spread over them round-robin (as `replay` spreads workers over traces),
/// which the command says in a warning. A type without a fitted pool keeps the constant-rate model and the
/// result says it is uncalibrated.

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <spotdnn/io/json.hpp>
#include <spotdnn/io/revocation_model_json.hpp>
#include <spotdnn/model/performance_model.hpp>
#include <spotdnn/revocation/interruption.hpp>
#include <spotdnn/revocation/revocation_model.hpp>
#include <spotdnn/revocation/simulate.hpp>

#include "command.hpp"

namespace spotdnn::cli {

/// What a probability rests on: a fitted model for every type in use, or the constant-rate model's
/// assumptions (for every type, or for the types without a fitted pool).
struct CalibrationNote {
  bool calibrated = false;
  std::string model;  ///< "fitted (FILE)" or "constant-rate"
  std::vector<std::string> uncalibrated_types;
  std::vector<std::string> assumptions;

  /// One line for tables.
  [[nodiscard]] std::string line() const {
    if (calibrated) return "calibrated: drawn from the revocation model fitted to traces, " + model;
    std::string types;
    for (const std::string& t : uncalibrated_types) types += (types.empty() ? "" : ", ") + t;
    return "UNCALIBRATED (" + (types.empty() ? std::string("every type") : types) +
           "): constant-rate revocations, not fitted to any trace; fit one with spotdnn revocations fit and pass --revocations";
  }

  [[nodiscard]] io::Json to_json() const {
    io::Json j = io::Json::object();
    j["calibrated"] = calibrated;
    j["model"] = model;
    j["uncalibrated_types"] = uncalibrated_types;
    j["assumptions"] = assumptions;
    return j;
  }
};

/// The constant-rate model's assumptions, in the words a user checks them by.
inline std::vector<std::string> constant_rate_assumptions(const InterruptionModel& interruption) {
  std::vector<std::string> a;
  a.push_back(interruption.weibull_shape() == 1.0
                  ? "every instance is revoked at a constant rate, whatever its age (real hazards fall with age)"
                  : "lifetimes are Weibull with one shape for every type, not fitted to a trace");
  a.push_back("instances are revoked independently of one another (real preemptions come in bursts)");
  a.push_back("the first instances are obtained at once, and a replacement always comes, after the fixed join delay");
  bool band = false;
  for (const TypeInterruption& t : interruption.types()) band = band || t.source == HazardSource::catalog_band;
  if (band) {
    a.push_back("a Spot Advisor band is a monthly share of interrupted instances turned into a constant hazard: at best a "
                "prior for a pool without a trace (real GPU pools show 100x more per hour)");
  }
  return a;
}

/// The mean hazard (preemptions per instance-hour over the traces) of the model's `pools`, together: what a
/// constant-rate model at their own rate would use. 0 when they saw no instance-time.
[[nodiscard]] inline double mean_hazard_per_hour(const RevocationModel& model, const std::vector<int>& pools) {
  double events = 0, exposure_s = 0;
  for (int p : pools) {
    events += model.pools.at(std::size_t(p)).preemptions;
    exposure_s += model.pools.at(std::size_t(p)).exposure_s;
  }
  return exposure_s > 0 ? events / (exposure_s / 3600) : 0.0;
}

/// --revocations FILE.
struct RevocationsCliOption {
  std::string path;

  void add_to(CLI::App& app) {
    app.add_option("--revocations", path,
                   "a revocation model fitted to traces (spotdnn revocations fit): instance age, bursts, waits to obtain "
                   "an instance; without it the constant-rate model is used and every probability says it is uncalibrated")
        ->check(non_empty_path());
  }

  [[nodiscard]] bool given() const { return !path.empty(); }

  /// The model read from the file (null without --revocations).
  [[nodiscard]] std::shared_ptr<const RevocationModel> load() const {
    if (path.empty()) return nullptr;
    return std::make_shared<const RevocationModel>(io::read_revocation_model_file(path));
  }
};

/// Which pools each worker type of `model` draws from under `revocations` in `zone` (empty: every pool of
/// the type). `warnings` receives the spreads. Types with count 0 in `in_use` are left empty.
inline FittedRevocations fitted_revocations(const std::shared_ptr<const RevocationModel>& revocations, const PerformanceModel& model,
                                            const std::string& zone, const std::vector<bool>& in_use,
                                            std::vector<std::string>* warnings = nullptr) {
  FittedRevocations f;
  if (!revocations) return f;  // the constant-rate model: no pools at all
  f.model = revocations;
  f.type_pools.assign(model.worker_types().size(), {});
  for (std::size_t k = 0; k < model.worker_types().size(); ++k) {
    const std::string& type = model.worker_types()[k].name;
    if (model.worker_types()[k].market == Market::on_demand) continue;  // never revoked
    std::vector<int> pools;
    std::string zones;
    for (std::size_t p = 0; p < revocations->pools.size(); ++p) {
      const PoolModel& pool = revocations->pools[p];
      if (pool.pool.type != type || (!zone.empty() && pool.pool.zone != zone)) continue;
      pools.push_back(int(p));
      zones += (zones.empty() ? "" : ", ") + pool.pool.zone;
    }
    if (pools.size() > 1 && warnings != nullptr && k < in_use.size() && in_use[k]) {
      warnings->push_back(type + " has fitted pools in " + std::to_string(pools.size()) + " zones (" + zones +
                          "): its workers are spread over them round-robin, as replay does; give --zone to use one");
    }
    f.type_pools[k] = std::move(pools);
  }
  return f;
}

/// The calibration statement of a simulation of the types `in_use` under `fitted` (model may be null).
inline CalibrationNote calibration_note(const FittedRevocations& fitted, const PerformanceModel& model,
                                        const InterruptionModel& interruption, const std::vector<bool>& in_use,
                                        const std::string& path) {
  CalibrationNote note;
  for (std::size_t k = 0; k < model.worker_types().size() && k < in_use.size(); ++k) {
    if (!in_use[k] || model.worker_types()[k].market == Market::on_demand) continue;
    const bool fitted_type = fitted.model && k < fitted.type_pools.size() && !fitted.type_pools[k].empty();
    if (!fitted_type) note.uncalibrated_types.push_back(model.worker_types()[k].name);
  }
  note.calibrated = fitted.model != nullptr && note.uncalibrated_types.empty();
  note.model = fitted.model ? "fitted (" + path + ")" : std::string("constant-rate");
  if (fitted.model) {
    for (const std::string& a : fitted.model->assumptions) note.assumptions.push_back(a);
  }
  if (!note.uncalibrated_types.empty()) {
    for (std::string& a : constant_rate_assumptions(interruption)) note.assumptions.push_back(std::move(a));
  }
  return note;
}

}  // namespace spotdnn::cli
