#pragma once
// SPDX-License-Identifier: MIT
/// @file fit/workload_build.hpp `spotdnn workload build`: a complete workload document from what the training
/// example measured, every figure with where it came from.
///
/// - S (param_bytes) and each type's compute time T_comp at the chosen precision and per-GPU batch come from
///   the training profiles (fit/training_profile.hpp), one per instance type, all of the same model.
/// - The loss model γ is fitted to the loss trace (fit/loss_fit.hpp).
/// - The contention α1, β1 (docs/model.md eq. (1)) and the bandwidth B_req (eq. (2)) are fitted to the throughput
///   trace (fit/throughput_fit.hpp) with the profiled compute times and the catalog's B_ps and PCIe bandwidths
///   held. When the trace cannot identify α1 and β1 (e.g. it has clusters of one size only) they are assumed
///   to be 0 (no contention: P = 0, the optimistic end) and B_req alone is fitted; the figures say so, with
///   the clusters to measure. A B_req given by the caller is held instead of fitted (then a trace that cannot
///   identify α1 and β1 leaves nothing to fit: contention assumed 0). Without a throughput trace, B_req must
///   be given and the contention is assumed 0 the same way.
/// - The compute times held in the throughput fit are those of the chosen per-GPU batch: give the batch the
///   traces' runs used (WorkloadBuildOptions::batch_per_gpu, per type batch_per_gpu_by_type).
/// - B_ps is the catalog's, held, unless WorkloadBuildOptions::fit_ps_bandwidth: then it is fitted with α1, β1
///   and B_req (a PS that serialises tensors in Python serves far less than its NIC carries), and
///   WorkloadBuild::catalog carries it (plan with that catalog). When the trace cannot identify all four,
///   the two limiting models are fitted, one bandwidth each, and the one with the lower cost (½·Σ relative
///   rate residual², the throughput fit's) is kept, its α1, β1 marked assumed (WorkloadBuild::throughput_fit
///   is the kept model's fit, or none when nothing was fitted):
///   - no cluster contends: P = 0, B_req fitted (held, when given: nothing left to fit);
///   - full contention: P = 1 (α1 = 0, β1 = 1), B_ps fitted; B_req held when given (then clusters with
///     B_ps/n above it still run at B_req), otherwise set to the fitted B_ps, the least value that gives
///     B_wk = B_ps/n at every n (eq. (2)), marked assumed.
///   Full contention is kept only when its cost is clearly lower (by the throughput fit's best-cost
///   tolerance); from a trace of one cluster size, which both fit equally, it is not tried.
///
/// Nothing is silently defaulted: WorkloadBuild::figures lists every number of the workload with its source
/// ("measured", "fitted", "given" or "assumed") and a note; WorkloadBuild::assumed() names the assumed ones.

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "spotdnn/catalog.hpp"
#include "spotdnn/detail/format.hpp"
#include "spotdnn/detail/validate.hpp"
#include "spotdnn/fit/fit_result.hpp"
#include "spotdnn/fit/loss_fit.hpp"
#include "spotdnn/fit/throughput_fit.hpp"
#include "spotdnn/fit/traces.hpp"
#include "spotdnn/fit/training_profile.hpp"
#include "spotdnn/limits.hpp"
#include "spotdnn/model/performance_model.hpp"
#include "spotdnn/workload.hpp"

namespace spotdnn {

struct WorkloadBuildOptions {
  std::string name;                 ///< the workload's name; empty: the profiles' model
  std::string precision = "fp32";   ///< which measurements of the profiles to use
  /// Which per-GPU batch: the one the traces' runs used (their compute times are what the throughput fit
  /// holds). 0: per type, the largest measured at the precision; batch_per_gpu_by_type overrides it per type.
  int batch_per_gpu = 0;
  std::map<std::string, int, std::less<>> batch_per_gpu_by_type;
  /// B_req to hold (bytes/s); unset: fitted to the throughput trace (which is then required).
  std::optional<double> required_bandwidth_bytes_per_s;
  /// Fit B_ps (the parameter server's bandwidth) to the throughput trace too, instead of holding the catalog's.
  bool fit_ps_bandwidth = false;
  LossFitOptions loss;              ///< the loss fit's options (form, starts, robust loss, ...)
  int throughput_grid_points_per_axis = 10;
};

/// One number of the built workload and where it came from.
struct WorkloadFigure {
  std::string field;    ///< its key path in the workload document, e.g. profiles["g4dn.xlarge"].compute_time_s
  double value = 0;
  std::string source;   ///< "measured", "fitted", "given" or "assumed"
  std::string note;     ///< which file, measurement or fit, and for a fitted one its standard error
};

struct WorkloadBuild {
  FitStatus status = FitStatus::failure;  ///< converged: workload is complete and valid
  std::string message;
  Workload workload;
  /// The catalog the workload was fitted with: the given one, with the fitted B_ps when fit_ps_bandwidth.
  Catalog catalog;
  std::vector<WorkloadFigure> figures;
  LossFitResult loss_fit;
  std::optional<ThroughputFitResult> throughput_fit;  ///< the fit whose figures the workload holds, if any
  /// A first throughput fit with α1 and β1 free that could not identify them (kept for the report).
  std::optional<ThroughputFitResult> contention_attempt;

  [[nodiscard]] bool ok() const { return status == FitStatus::converged; }

  /// The fields whose values are assumed, not measured, fitted or given.
  [[nodiscard]] std::vector<std::string> assumed() const {
    std::vector<std::string> fields;
    for (const WorkloadFigure& f : figures) {
      if (f.source == "assumed") fields.push_back(f.field);
    }
    return fields;
  }
};

namespace detail {

inline std::string fitted_note(const FitResult& fit, const FitParameter& p, const std::string& what) {
  std::string note = what + ", standard error " + format_readable(p.standard_error);
  if (p.uncertain()) note += " (uncertain: larger than the estimate)";
  if (p.at_bound) note += " (at its bound)";
  if (std::isfinite(fit.r_squared)) note += ", R² " + format_readable(fit.r_squared);
  return note;
}

/// ½·Σ ((predicted − measured)/measured)² over the trace's clusters: the throughput fit's cost
/// (fit/throughput_fit.hpp), for a model with nothing left to fit. The rates are the model's (eq. (4)),
/// whatever the target loss.
inline double throughput_cost(const ThroughputTrace& trace, const Workload& workload, const Catalog& catalog) {
  const PerformanceModel model(workload, catalog);
  double cost = 0;
  for (const ThroughputSample& sample : trace.samples) {
    const double rate = model.estimate(model.counts_of(sample.cluster), 0.0).iterations_per_s;
    const double r = (rate - sample.iterations_per_s) / sample.iterations_per_s;
    cost += 0.5 * r * r;
  }
  return cost;
}

/// Validates the built workload and sets the status and the message naming every assumed figure.
inline void finish_build(WorkloadBuild& build, std::size_t profiles) {
  build.workload.validate();
  build.status = FitStatus::converged;
  const std::vector<std::string> assumed = build.assumed();
  build.message = "built from " + std::to_string(profiles) + " profile(s)" +
                  (assumed.empty() ? ", every figure measured, fitted or given" : "; assumed, not measured: ");
  for (std::size_t i = 0; i < assumed.size(); ++i) build.message += (i == 0 ? "" : ", ") + assumed[i];
}

}  // namespace detail

/// Builds the workload (see the file comment). Throws spotdnn::invalid_argument for bad input: no profile,
/// profiles of different models or sizes, a type profiled twice, a precision or batch a profile lacks, a type
/// the catalog lacks, no throughput trace and no B_req. A fit without an answer is a status with the reason.
[[nodiscard]] inline WorkloadBuild build_workload(const std::vector<TrainingProfile>& profiles, const LossTable& loss_trace,
                                                  const ThroughputTrace* throughput_trace, const Catalog& catalog,
                                                  const WorkloadBuildOptions& options) {
  constexpr std::string_view fn = "build_workload";
  if (profiles.empty()) detail::fail(fn, "profiles", "none", "give at least one training profile (ps_train.py --profile)");
  if (profiles.size() > std::size_t(kMaxTrainingProfiles)) {
    detail::fail(fn, "profiles", std::to_string(profiles.size()) + " profiles", "at most " + std::to_string(kMaxTrainingProfiles));
  }
  if (!is_training_precision(options.precision)) {
    detail::fail(fn, "options.precision", detail::quoted(options.precision), "expected fp32, tf32, bf16 or fp16");
  }
  if (options.batch_per_gpu < 0 || options.batch_per_gpu > kMaxBatchPerGpu) {
    detail::fail(fn, "options.batch_per_gpu", options.batch_per_gpu, "must be from 1 to " + std::to_string(kMaxBatchPerGpu) + " (0: the largest measured)");
  }
  for (const auto& entry : options.batch_per_gpu_by_type) {
    const std::string& type = entry.first;
    if (entry.second < 1 || entry.second > kMaxBatchPerGpu) {
      detail::fail(fn, "options.batch_per_gpu_by_type[\"" + type + "\"]", entry.second, "must be from 1 to " + std::to_string(kMaxBatchPerGpu));
    }
    if (std::none_of(profiles.begin(), profiles.end(), [&](const TrainingProfile& p) { return p.instance_type == type; })) {
      detail::fail(fn, "options.batch_per_gpu_by_type", detail::quoted(type), "no profile of this type is given");
    }
  }
  if (options.required_bandwidth_bytes_per_s) {
    detail::require_positive(fn, "options.required_bandwidth_bytes_per_s", *options.required_bandwidth_bytes_per_s);
  } else if (throughput_trace == nullptr) {
    detail::fail(fn, "throughput trace", "none",
                 "B_req (required_bandwidth_bytes_per_s) is fitted to a throughput trace: give one, or give B_req");
  }
  catalog.validate();

  WorkloadBuild build;
  build.catalog = catalog;
  Workload& w = build.workload;
  const TrainingProfile& first = profiles.front();
  w.name = options.name.empty() ? first.model : options.name;
  w.param_bytes = first.param_bytes;
  build.figures.push_back({"param_bytes", w.param_bytes, "measured", "the model's parameter bytes (profile of " + first.instance_type + ")"});
  for (std::size_t i = 0; i < profiles.size(); ++i) {
    const TrainingProfile& p = profiles[i];
    const std::string field = "profiles[" + std::to_string(i) + "]";
    p.validate();
    if (p.model != first.model || p.param_bytes != first.param_bytes) {
      detail::fail(fn, field, p.instance_type + ": " + p.model + ", " + detail::format_number(p.param_bytes) + " bytes",
                   "every profile must be of the same model (profiles[0], " + first.instance_type + ": " + first.model + ", " +
                       detail::format_number(first.param_bytes) + " bytes)");
    }
    if (w.profiles.count(p.instance_type) != 0) {
      detail::fail(fn, field + ".instance_type", detail::quoted(p.instance_type), "profiled twice: give one profile per instance type");
    }
    if (!catalog.index_of(p.instance_type)) {
      detail::fail(fn, field + ".instance_type", detail::quoted(p.instance_type),
                   "the catalog has no such type (it has: " + catalog.type_names() + "); give a catalog with it");
    }
    const auto by_type = options.batch_per_gpu_by_type.find(p.instance_type);
    const int batch = by_type != options.batch_per_gpu_by_type.end() ? by_type->second : options.batch_per_gpu;
    const ComputeMeasurement* m = p.find(options.precision, batch);
    if (m == nullptr) {
      detail::fail(fn, field, p.instance_type,
                   "no measurement at " + (batch > 0 ? "batch " + std::to_string(batch) + " " : std::string()) + options.precision +
                       " (it has: " + p.measured_list() + ")");
    }
    TypeProfile profile;
    profile.batch_per_gpu = m->batch_per_gpu;
    profile.compute_time_s = m->compute_time_s;
    w.profiles.emplace(p.instance_type, profile);
    const std::string where = p.device == "cuda" ? (p.gpu_name.empty() ? "a GPU" : p.gpu_name) : "the CPU (not a GPU)";
    build.figures.push_back({"profiles[\"" + p.instance_type + "\"].compute_time_s", m->compute_time_s, "measured",
                             "median of " + std::to_string(m->iterations) + " iterations, batch " + std::to_string(m->batch_per_gpu) +
                                 " per GPU, " + m->precision + ", on " + where + (p.framework.empty() ? "" : ", " + p.framework)});
  }

  // The loss model.
  build.loss_fit = fit_loss_model(loss_trace, options.loss);
  if (!build.loss_fit.ok()) {
    build.status = build.loss_fit.status;
    build.message = "the loss fit did not answer: " + build.loss_fit.message;
    return build;
  }
  w.loss_model = build.loss_fit.model;
  for (std::size_t k = 0; k < w.loss_model.gamma.size(); ++k) {
    const std::string name = "gamma" + std::to_string(k + 1);
    const FitParameter* p = build.loss_fit.find(name);
    build.figures.push_back({"loss_model.gamma[" + std::to_string(k) + "]", w.loss_model.gamma[k], "fitted",
                             p != nullptr ? detail::fitted_note(build.loss_fit, *p, std::string(to_string(w.loss_model.form)) + " form, loss trace")
                                          : std::string("loss trace")});
  }

  // Contention and B_req.
  const bool hold_b_req = options.required_bandwidth_bytes_per_s.has_value();
  double min_compute_s = std::numeric_limits<double>::infinity();
  for (const auto& [type, profile] : w.profiles) min_compute_s = std::min(min_compute_s, *profile.compute_time_s);
  // Held B_req, or the fit's start: the bandwidth at which moving the model twice takes one compute time.
  w.required_bandwidth_bytes_per_s = hold_b_req ? *options.required_bandwidth_bytes_per_s : 2 * w.param_bytes / min_compute_s;
  auto assume_no_contention = [&](const std::string& why) {
    w.contention = Contention{0.0, 0.0};
    build.figures.push_back({"contention.alpha1", 0.0, "assumed", why});
    build.figures.push_back({"contention.beta1", 0.0, "assumed", "with alpha1 = 0: P = 0, no PS contention (the optimistic end)"});
  };
  auto add_fitted = [&](const ThroughputFitResult& fit, const char* name, const std::string& field, double value) {
    const FitParameter* p = fit.find(name);
    build.figures.push_back({field, value, "fitted", p != nullptr ? detail::fitted_note(fit, *p, "throughput trace") : "throughput trace"});
  };
  auto add_held_b_req = [&] {
    build.figures.push_back({"required_bandwidth_bytes_per_s", w.required_bandwidth_bytes_per_s, "given", "held (--required-bandwidth)"});
  };
  auto add_held_ps_bandwidth = [&] {
    build.figures.push_back({"catalog.parameter_server.bandwidth_bytes_per_s", catalog.parameter_server.bandwidth_bytes_per_s,
                             "given", "the catalog's, held: the no-contention model says nothing about it"});
  };
  if (throughput_trace == nullptr) {
    assume_no_contention("no throughput trace given: measure clusters of two or more sizes (the example's runs write one)");
    add_held_b_req();
  } else {
    ThroughputFitOptions fit_options;
    fit_options.grid_points_per_axis = options.throughput_grid_points_per_axis;
    fit_options.free_parameters = {"alpha1", "beta1"};
    if (!hold_b_req) fit_options.free_parameters.push_back("required_bandwidth_bytes_per_s");
    if (options.fit_ps_bandwidth) fit_options.free_parameters.push_back("ps_bandwidth_bytes_per_s");
    w.contention = Contention{0.8, -1.0};  // a start inside the contended region; the grid covers the rest
    ThroughputFitResult fit = fit_throughput(*throughput_trace, w, catalog, fit_options);
    // With α1 and β1 not identifiable, the limiting model the workload holds instead.
    enum class Limiting { none_fitted, no_contention, full_contention } limiting = Limiting::none_fitted;
    std::string no_contention_note;       // the assumed α1's note when the no-contention model is kept
    std::string full_contention_failure;  // why the full-contention fit did not answer, when it did not
    if (fit.status == FitStatus::not_identifiable) {
      // α1 and β1 need clusters of several sizes in the contended regime: fit a limiting model instead.
      build.contention_attempt = std::move(fit);
      const std::string why = "the throughput trace cannot identify it (" + build.contention_attempt->message + ")";
      // No cluster contends: P = 0, B_req fitted (when held, nothing is left to fit).
      w.contention = Contention{0.0, 0.0};
      std::optional<ThroughputFitResult> none;
      if (!hold_b_req) {
        fit_options.free_parameters = {"required_bandwidth_bytes_per_s"};
        none = fit_throughput(*throughput_trace, w, catalog, fit_options);
      }
      // Full contention: P = 1, B_ps fitted; only when asked to fit B_ps (otherwise the catalog's is the PS's
      // bandwidth and this model has nothing to fit) and from two or more cluster sizes (at one size the two
      // models are one family, B_wk = B_req or B_ps/n a constant either way, and tie up to solver noise).
      std::set<int> sizes;
      for (const ThroughputSample& sample : throughput_trace->samples) sizes.insert(sample.cluster.total_workers());
      const bool one_size = sizes.size() < 2;
      std::optional<ThroughputFitResult> every;
      if (options.fit_ps_bandwidth && !one_size) {
        Workload all = w;
        all.contention = Contention{0.0, 1.0};
        // During the fit a B_req above every B_ps/n makes B_wk = B_ps/n at every n (eq. (2)); afterwards
        // B_req = B_ps gives the same B_wk at every n >= 1.
        if (!hold_b_req) all.required_bandwidth_bytes_per_s = 1e6 * catalog.parameter_server.bandwidth_bytes_per_s;
        fit_options.free_parameters = {"ps_bandwidth_bytes_per_s"};
        every = fit_throughput(*throughput_trace, all, catalog, fit_options);
        if (!every->ok()) full_contention_failure = std::string(to_string(every->status)) + ": " + every->message;
      }
      const double none_cost = !every ? std::numeric_limits<double>::quiet_NaN()  // nothing to compare
                               : none   ? (none->ok() ? none->final_cost : std::numeric_limits<double>::infinity())
                                        : detail::throughput_cost(*throughput_trace, w, catalog);
      const double every_cost = every && every->ok() ? every->final_cost : std::numeric_limits<double>::infinity();
      auto cost_text = [](const std::optional<ThroughputFitResult>& fit, double cost) {
        return fit && !fit->ok() ? "no answer (" + std::string(to_string(fit->status)) + ")" : detail::format_readable(cost);
      };
      const std::string contended = hold_b_req ? "full contention" : "every cluster contending";
      const std::string costs = "; cost with no cluster contending " + cost_text(none, none_cost) + ", with " + contended + " " +
                                cost_text(every, every_cost);
      // Full contention only when it fits clearly better (by the fit's own best-cost tolerance).
      const double clearly_below = none_cost * (1.0 - fit_options.best_cost_tolerance) - 1e-12 * double(throughput_trace->samples.size());
      no_contention_note = why + ": measure clusters of several sizes to fit it" + (every ? costs : std::string()) +
                           (options.fit_ps_bandwidth && one_size
                                ? " (one cluster size fits both equally: no contention kept, full contention not tried)"
                                : "");
      if (every && every->ok() && every_cost < clearly_below) {
        limiting = Limiting::full_contention;
        fit = std::move(*every);
        w.contention = Contention{0.0, 1.0};
        const double ps = fit.catalog.parameter_server.bandwidth_bytes_per_s;
        if (!hold_b_req) {  // the report shows the B_req the workload holds, not the fit's stand-in
          for (FitParameter& parameter : fit.parameters) {
            if (parameter.name == "required_bandwidth_bytes_per_s") parameter.value = ps;
          }
          fit.workload.required_bandwidth_bytes_per_s = ps;
        }
        build.figures.push_back(
            {"contention.alpha1", 0.0, "assumed",
             why + ": " + (hold_b_req ? "full contention (P = 1, the pessimistic end: B_wk = B_ps/n wherever that is below the held B_req)"
                                      : "every cluster contends (P = 1, the pessimistic end)") +
                 ", the limiting model that fits the trace better" + costs});
        build.figures.push_back({"contention.beta1", 1.0, "assumed", "with alpha1 = 0: P = 1 at every cluster size"});
      } else if (none) {
        limiting = Limiting::no_contention;
        fit = std::move(*none);
      } else {  // B_req held and the no-contention model kept: nothing was fitted
        assume_no_contention(no_contention_note);
        if (options.fit_ps_bandwidth) add_held_ps_bandwidth();
        add_held_b_req();
        detail::finish_build(build, profiles.size());
        return build;
      }
    }
    if (!fit.ok()) {
      build.status = fit.status;
      build.message = "the throughput fit did not answer: " + fit.message +
                      (full_contention_failure.empty() ? "" : "; nor did the full-contention fit (" + full_contention_failure + ")");
      build.throughput_fit = std::move(fit);
      return build;
    }
    if (limiting == Limiting::none_fitted) {
      w.contention = fit.workload.contention;
      add_fitted(fit, "alpha1", "contention.alpha1", w.contention.alpha1);
      add_fitted(fit, "beta1", "contention.beta1", w.contention.beta1);
    } else if (limiting == Limiting::no_contention) {
      assume_no_contention(no_contention_note);
    }
    if (options.fit_ps_bandwidth && limiting != Limiting::no_contention) {
      build.catalog.parameter_server.bandwidth_bytes_per_s = fit.catalog.parameter_server.bandwidth_bytes_per_s;
      add_fitted(fit, "ps_bandwidth_bytes_per_s", "catalog.parameter_server.bandwidth_bytes_per_s",
                 build.catalog.parameter_server.bandwidth_bytes_per_s);
    } else if (options.fit_ps_bandwidth) {
      add_held_ps_bandwidth();
    }
    if (hold_b_req) {
      add_held_b_req();
    } else if (limiting == Limiting::full_contention) {
      w.required_bandwidth_bytes_per_s = build.catalog.parameter_server.bandwidth_bytes_per_s;
      build.figures.push_back({"required_bandwidth_bytes_per_s", w.required_bandwidth_bytes_per_s, "assumed",
                               "set to the fitted B_ps: with every cluster contending the trace says only that B_req >= B_ps; "
                               "the least value that gives the same B_wk at every n (eq. (2))"});
    } else {
      w.required_bandwidth_bytes_per_s = fit.workload.required_bandwidth_bytes_per_s;
      add_fitted(fit, "required_bandwidth_bytes_per_s", "required_bandwidth_bytes_per_s", w.required_bandwidth_bytes_per_s);
    }
    build.throughput_fit = std::move(fit);
  }
  detail::finish_build(build, profiles.size());
  return build;
}

}  // namespace spotdnn
