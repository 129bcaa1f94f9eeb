#pragma once
// SPDX-License-Identifier: MIT
/// @file revocation/interruption.hpp How often spot instances are revoked: per-type hazards (given
/// directly or from an AWS Spot Advisor band), exponential or Weibull lifetimes, and lifetime sampling.
///
/// Conversion of a monthly interruption share r (the Spot Advisor's "frequency of interruption") into a
/// hazard: if a share r of instances is interrupted within one month of 720 h under a constant hazard λ,
/// then 1 − r = exp(−λ·720 h), so
///
///     λ = −ln(1 − r) / 720 h.
///
/// Each band is represented by its midpoint: <5% → 2.5%, 5–10% → 7.5%, 10–15% → 12.5%, 15–20% → 17.5%.
/// The open band >20% is represented by 25% (the midpoint of 20–30%, i.e. as if the band had the width of
/// the next two bands together; the Spot Advisor does not say how far above 20% a type goes, so a user who
/// knows better gives `revocation_hazard_per_hour` directly). For example "5-10%" gives
/// λ = −ln(0.925)/720 h = 1.0828e-4 per hour, a mean lifetime of 9235 h.
///
/// Lifetimes are exponential (constant hazard) by default. A Weibull shape k ≠ 1 keeps the same share of
/// instances interrupted within the reference horizon t_ref = 720 h (so a band keeps its meaning) and
/// redistributes the hazard over time: the cumulative hazard is H(t) = λ·t_ref·(t/t_ref)^k, the survival
/// S(t) = exp(−H(t)); k < 1 means young instances are revoked more often (infant mortality), k > 1 that
/// old ones are. With k = 1, H(t) = λ·t exactly.
///
/// A type may have no hazard at all (the catalog gives neither a hazard nor a band, and no override or
/// fallback applies): the model records it as HazardSource::missing. That is an error only where the type
/// is used: require_hazards() names it, and simulate() and plan_with_confidence() call it for the types a
/// cluster (or a replacement) may run, so a catalog with types nobody uses needs no hazard for them.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spotdnn/catalog.hpp"
#include "spotdnn/detail/validate.hpp"
#include "spotdnn/model/performance_model.hpp"
#include "spotdnn/units.hpp"

namespace spotdnn {

/// Hours in the month the Spot Advisor's interruption shares refer to (30 days).
inline constexpr double kHoursPerMonth = 720.0;

/// One AWS Spot Advisor band: the share of instances interrupted per month, and the share spotdnn uses.
struct InterruptionBand {
  std::string_view name;          ///< as in kInterruptionBands, e.g. "5-10%"
  double lower_monthly_share = 0;  ///< fraction, e.g. 0.05
  double upper_monthly_share = 0;  ///< fraction; the open band >20% has 1
  double representative_monthly_share = 0;  ///< the r converted into a hazard (midpoint; 0.25 for >20%)
};

/// The five bands, in the order of kInterruptionBands.
inline constexpr InterruptionBand kInterruptionBandTable[] = {
    {"<5%", 0.00, 0.05, 0.025},
    {"5-10%", 0.05, 0.10, 0.075},
    {"10-15%", 0.10, 0.15, 0.125},
    {"15-20%", 0.15, 0.20, 0.175},
    {">20%", 0.20, 1.00, 0.25},
};

/// The band called `name` (one of kInterruptionBands; "5–10%" with an en dash is accepted too).
/// Throws spotdnn::invalid_argument for any other text.
[[nodiscard]] inline const InterruptionBand& interruption_band(std::string_view name) {
  std::string normalized(name);
  for (std::size_t at = normalized.find("\xE2\x80\x93"); at != std::string::npos; at = normalized.find("\xE2\x80\x93")) {
    normalized.replace(at, 3, "-");  // en dash → hyphen
  }
  for (const InterruptionBand& band : kInterruptionBandTable) {
    if (band.name == normalized) return band;
  }
  detail::fail("interruption_band", "band", detail::quoted(name), "expected one of <5%, 5-10%, 10-15%, 15-20%, >20%");
}

/// λ = −ln(1 − r)/720 h: the constant hazard (per hour) under which a share r of instances is interrupted
/// within a month. Throws unless 0 ≤ r < 1.
[[nodiscard]] inline double hazard_per_hour_from_monthly_share(double monthly_share) {
  detail::require_finite("hazard_per_hour_from_monthly_share", "monthly_share", monthly_share);
  if (monthly_share < 0 || monthly_share >= 1) {
    detail::fail("hazard_per_hour_from_monthly_share", "monthly_share", monthly_share, "must be in [0, 1)");
  }
  return -std::log1p(-monthly_share) / kHoursPerMonth;
}

/// The hazard (per hour) spotdnn uses for a Spot Advisor band: its representative share converted by
/// hazard_per_hour_from_monthly_share.
[[nodiscard]] inline double hazard_per_hour_from_band(std::string_view band) {
  return hazard_per_hour_from_monthly_share(interruption_band(band).representative_monthly_share);
}

/// Share of instances interrupted within `horizon_s` under a constant hazard: 1 − exp(−λ·t).
[[nodiscard]] inline double interrupted_share(double hazard_per_hour, double horizon_s) {
  return -std::expm1(-hazard_per_hour * units::s_to_hours(horizon_s));
}

/// Where a type's hazard came from.
enum class HazardSource {
  catalog_hazard,  ///< InstanceType::revocation_hazard_per_hour
  catalog_band,    ///< InstanceType::interruption_band
  fallback,        ///< InterruptionOptions::fallback_hazard_per_hour (the catalog says nothing)
  override_value,  ///< InterruptionOptions::hazard_overrides
  on_demand,       ///< the type is bought on demand: never revoked (hazard 0)
  missing,         ///< nothing gives a hazard: the type may not be simulated (see require_hazards)
};

constexpr std::string_view to_string(HazardSource source) {
  switch (source) {
    case HazardSource::catalog_hazard: return "catalog hazard";
    case HazardSource::catalog_band: return "catalog band";
    case HazardSource::fallback: return "fallback";
    case HazardSource::override_value: return "override";
    case HazardSource::on_demand: return "on-demand";
    case HazardSource::missing: return "missing";
  }
  return "fallback";
}

/// A per-type hazard given by the caller instead of the catalog (e.g. from the command line).
struct HazardOverride {
  std::string type;
  double hazard_per_hour = 0;
};

/// How to build an InterruptionModel from a catalog.
struct InterruptionOptions {
  /// Hazard (per hour) of types whose catalog entry gives neither a hazard nor a band. Without it such a
  /// type has no hazard (HazardSource::missing), which is an error wherever the type is used: spotdnn does
  /// not invent revocation rates silently.
  std::optional<double> fallback_hazard_per_hour;
  /// Hazards that replace the catalog's, by type name.
  std::vector<HazardOverride> hazard_overrides;
  /// Weibull shape k of every lifetime; 1 = exponential (constant hazard).
  double weibull_shape = 1.0;
  /// The horizon t_ref over which a Weibull lifetime interrupts the same share as the constant hazard (s).
  double reference_horizon_s = units::hours_to_s(kHoursPerMonth);
};

/// The lifetime law of one worker type.
struct TypeInterruption {
  std::string type;
  double hazard_per_hour = 0;  ///< λ_k; 0 = never revoked; NaN when `source` is missing
  HazardSource source = HazardSource::fallback;

  [[nodiscard]] bool has_hazard() const { return source != HazardSource::missing; }
};

/// Per-type revocation hazards, in PerformanceModel::worker_types() order, and the lifetime shape.
class InterruptionModel {
 public:
  InterruptionModel() = default;

  /// Hazards in `model.worker_types()` order: an override if given, else 0 for a type bought on demand,
  /// else the catalog's
  /// `revocation_hazard_per_hour`, else its `interruption_band` (see the file comment for the conversion),
  /// else `options.fallback_hazard_per_hour`; a type with none of them is recorded as missing (an error
  /// only where it is used, see require_hazards). Throws for a bad option.
  InterruptionModel(const PerformanceModel& model, const InterruptionOptions& options = {}) {
    constexpr std::string_view fn = "InterruptionModel";
    set_shape(options.weibull_shape, options.reference_horizon_s);
    if (options.fallback_hazard_per_hour) {
      detail::require_non_negative(fn, "fallback_hazard_per_hour", *options.fallback_hazard_per_hour);
    }
    for (const HazardOverride& o : options.hazard_overrides) {
      if (!model.worker_type_index(o.type)) {
        detail::fail(fn, "hazard_overrides", detail::quoted(o.type),
                     "not a worker type of the model (known: " + model.catalog().type_names() + ")");
      }
      detail::require_non_negative(fn, "hazard_overrides[\"" + o.type + "\"]", o.hazard_per_hour);
    }
    for (const WorkerType& w : model.worker_types()) {
      const InstanceType& type = model.catalog().at(w.name);
      TypeInterruption t;
      t.type = w.name;
      const HazardOverride* found = nullptr;
      for (const HazardOverride& o : options.hazard_overrides) {
        if (o.type == w.name) found = &o;
      }
      if (found) {
        t.hazard_per_hour = found->hazard_per_hour;
        t.source = HazardSource::override_value;
      } else if (w.market == Market::on_demand) {
        t.hazard_per_hour = 0.0;
        t.source = HazardSource::on_demand;
      } else if (type.revocation_hazard_per_hour) {
        t.hazard_per_hour = *type.revocation_hazard_per_hour;
        t.source = HazardSource::catalog_hazard;
      } else if (type.interruption_band) {
        t.hazard_per_hour = hazard_per_hour_from_band(*type.interruption_band);
        t.source = HazardSource::catalog_band;
      } else if (options.fallback_hazard_per_hour) {
        t.hazard_per_hour = *options.fallback_hazard_per_hour;
        t.source = HazardSource::fallback;
      } else {
        t.hazard_per_hour = std::numeric_limits<double>::quiet_NaN();
        t.source = HazardSource::missing;
      }
      types_.push_back(std::move(t));
    }
  }

  /// Explicit hazards (per hour), one per worker type of the model it will be used with.
  static InterruptionModel from_hazards(const std::vector<double>& hazards_per_hour, double weibull_shape = 1.0,
                                        double reference_horizon_s = units::hours_to_s(kHoursPerMonth)) {
    InterruptionModel m;
    m.set_shape(weibull_shape, reference_horizon_s);
    for (std::size_t k = 0; k < hazards_per_hour.size(); ++k) {
      detail::require_non_negative("InterruptionModel::from_hazards", "hazards_per_hour[" + std::to_string(k) + "]",
                                   hazards_per_hour[k]);
      m.types_.push_back({"type " + std::to_string(k), hazards_per_hour[k], HazardSource::override_value});
    }
    return m;
  }

  [[nodiscard]] const std::vector<TypeInterruption>& types() const { return types_; }
  /// λ of `type` (per hour); throws (require_hazard) when the type has none.
  [[nodiscard]] double hazard_per_hour(std::size_t type) const {
    require_hazard(type, "InterruptionModel::hazard_per_hour", "the hazard was asked for");
    return types_[type].hazard_per_hour;
  }
  [[nodiscard]] bool has_hazard(std::size_t type) const { return types_.at(type).has_hazard(); }

  /// Throws spotdnn::invalid_argument when `type` has no hazard, naming it, saying `why` it is needed (e.g.
  /// "the cluster uses it") and how to give one. `function` names the caller.
  void require_hazard(std::size_t type, std::string_view function, std::string_view why) const {
    const TypeInterruption& t = types_.at(type);
    if (t.has_hazard()) return;
    detail::fail(function, "hazard of " + detail::quoted(t.type), "missing",
                 std::string(why) + ", and the catalog gives it no revocation_hazard_per_hour or interruption_band: give one "
                 "(--hazard " + t.type + "=RATE, or a band with --fallback-band BAND, or --fallback-hazard RATE; in the "
                 "library InterruptionOptions::hazard_overrides or fallback_hazard_per_hour, or the catalog's fields)");
  }

  /// require_hazard() for every type with `used[k]` true (one entry per type).
  void require_hazards(const std::vector<bool>& used, std::string_view function, std::string_view why) const {
    if (used.size() != types_.size()) {
      detail::fail(function, "used.size()", double(used.size()),
                   "must equal the number of worker types (" + std::to_string(types_.size()) + ")");
    }
    for (std::size_t k = 0; k < used.size(); ++k) {
      if (used[k]) require_hazard(k, function, why);
    }
  }
  [[nodiscard]] double weibull_shape() const { return shape_; }
  [[nodiscard]] double reference_horizon_s() const { return reference_horizon_s_; }

  /// P(an instance of `type` is still running `age_s` after launch) = exp(−H(t)).
  [[nodiscard]] double survival(std::size_t type, double age_s) const {
    return std::exp(-cumulative_hazard(hazard_per_hour(type), age_s));
  }

  /// Mean lifetime (s) of an instance of `type`: 1/λ for exponential lifetimes, t_ref·(λ·t_ref)^(−1/k)·Γ(1 + 1/k)
  /// for Weibull; infinity when λ = 0.
  [[nodiscard]] double mean_lifetime_s(std::size_t type) const {
    const double lambda_per_s = hazard_per_hour(type) / units::kSecondsPerHour;
    if (!(lambda_per_s > 0)) return std::numeric_limits<double>::infinity();
    if (shape_ == 1.0) return 1.0 / lambda_per_s;
    return weibull_mean_s(lambda_per_s);
  }

  /// Mean time (s) until the first revocation among `counts[k]` fresh instances of each type, for
  /// exponential lifetimes 1/Σ_k counts[k]·λ_k (the cluster's MTTI, the input of checkpoint.hpp).
  /// Weibull lifetimes (one shape for all types): the first revocation is Weibull with the summed λ, so
  /// the mean-lifetime formula applies to λ_total. Infinity when nothing is revoked. Types with a count of
  /// 0 need no hazard; a counted type without one throws.
  [[nodiscard]] double mean_time_to_interruption_s(const std::vector<int>& counts) const {
    if (counts.size() != types_.size()) {
      detail::fail("InterruptionModel::mean_time_to_interruption_s", "counts.size()", double(counts.size()),
                   "must equal the number of worker types (" + std::to_string(types_.size()) + ")");
    }
    double total_per_hour = 0;
    for (std::size_t k = 0; k < counts.size(); ++k) {
      if (counts[k] == 0) continue;
      require_hazard(k, "InterruptionModel::mean_time_to_interruption_s", "it has a count of " + std::to_string(counts[k]));
      total_per_hour += counts[k] * types_[k].hazard_per_hour;
    }
    if (!(total_per_hour > 0)) return std::numeric_limits<double>::infinity();
    if (shape_ == 1.0) return units::kSecondsPerHour / total_per_hour;
    return weibull_mean_s(total_per_hour / units::kSecondsPerHour);
  }

  /// Lifetime (s) of an instance of `type` whose unit-exponential draw is `unit_exponential` (E ~ Exp(1)):
  /// the t with H(t) = E, i.e. E/λ (exponential) or t_ref·(E/(λ·t_ref))^(1/k) (Weibull). Infinity for λ = 0.
  /// The hot path of the simulation: unchecked (NaN for a type without a hazard; call require_hazard first).
  [[nodiscard]] double lifetime_s(std::size_t type, double unit_exponential) const noexcept {
    const double lambda_per_s = types_[type].hazard_per_hour / units::kSecondsPerHour;
    if (!(lambda_per_s > 0)) return std::numeric_limits<double>::infinity();
    if (shape_ == 1.0) return unit_exponential / lambda_per_s;
    return reference_horizon_s_ * std::pow(unit_exponential / (lambda_per_s * reference_horizon_s_), 1.0 / shape_);
  }

 private:
  void set_shape(double shape, double reference_horizon_s) {
    detail::require_positive("InterruptionModel", "weibull_shape", shape);
    detail::require_positive("InterruptionModel", "reference_horizon_s", reference_horizon_s);
    shape_ = shape;
    reference_horizon_s_ = reference_horizon_s;
  }

  /// t_ref·(λ·t_ref)^(−1/k)·Γ(1 + 1/k) (λ > 0 per second). Extreme shapes (k = 1e-300) overflow Γ while
  /// the power underflows, and 0·∞ would be NaN: such values are taken in logarithms, where a mean that
  /// is still ∞ − ∞ is infinite (Γ(1 + 1/k) outgrows every power as k → 0).
  [[nodiscard]] double weibull_mean_s(double lambda_per_s) const {
    const double direct = reference_horizon_s_ * std::pow(lambda_per_s * reference_horizon_s_, -1.0 / shape_) *
                          std::tgamma(1.0 + 1.0 / shape_);
    if (std::isnormal(direct)) return direct;
    const double log_mean = std::log(reference_horizon_s_) -
                            std::log(lambda_per_s * reference_horizon_s_) / shape_ + std::lgamma(1.0 + 1.0 / shape_);
    return std::isnan(log_mean) ? std::numeric_limits<double>::infinity() : std::exp(log_mean);
  }

  /// H(t) = λ·t_ref·(t/t_ref)^k (λ per hour, converted to per second). When λ·t_ref overflows (λ = 1e308/h)
  /// the product is taken in logarithms, so that a power that underflowed gives no ∞·0 = NaN.
  [[nodiscard]] double cumulative_hazard(double hazard_per_hour, double age_s) const {
    const double lambda_per_s = hazard_per_hour / units::kSecondsPerHour;
    if (!(age_s > 0) || !(lambda_per_s > 0)) return 0.0;
    if (shape_ == 1.0) return lambda_per_s * age_s;
    const double direct = lambda_per_s * reference_horizon_s_ * std::pow(age_s / reference_horizon_s_, shape_);
    if (std::isfinite(direct)) return direct;
    return std::exp(std::log(lambda_per_s) + std::log(reference_horizon_s_) + shape_ * std::log(age_s / reference_horizon_s_));
  }

  std::vector<TypeInterruption> types_;
  double shape_ = 1.0;
  double reference_horizon_s_ = units::hours_to_s(kHoursPerMonth);
};

namespace detail {

/// SplitMix64 finalizer: a well-mixed 64-bit function of its input (Steele, Lea & Flood 2014).
constexpr std::uint64_t splitmix64(std::uint64_t x) noexcept {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// The random stream of one scenario: SplitMix64 (64 bits per call, passes BigCrush), a
/// UniformRandomBitGenerator. Its one-word state seeds instantly; std::mt19937_64 spends longer setting up
/// its 312 words than a whole scenario takes to simulate.
class ScenarioRng {
 public:
  using result_type = std::uint64_t;
  explicit constexpr ScenarioRng(std::uint64_t seed) noexcept : state_(seed) {}
  static constexpr result_type min() noexcept { return 0; }
  static constexpr result_type max() noexcept { return ~result_type(0); }
  constexpr result_type operator()() noexcept {
    const result_type out = splitmix64(state_);
    state_ += 0x9E3779B97F4A7C15ull;
    return out;
  }

 private:
  std::uint64_t state_;
};

/// Seed of scenario `index` of a run seeded with `seed`: independent of threading and of other scenarios.
constexpr std::uint64_t scenario_seed(std::uint64_t seed, std::uint64_t index) noexcept {
  return splitmix64(splitmix64(seed) ^ splitmix64(index + 0x632BE59BD9B4E019ull));
}

/// A unit-exponential variate from one 64-bit draw, identical on every platform: −ln(1 − u) with
/// u = the top 53 bits / 2^53 in [0, 1).
inline double unit_exponential(std::uint64_t bits) noexcept {
  const double u = double(bits >> 11) * 0x1.0p-53;
  return -std::log1p(-u);
}

}  // namespace detail

}  // namespace spotdnn
