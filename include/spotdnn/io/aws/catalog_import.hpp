#pragma once
// SPDX-License-Identifier: MIT
/// @file io/aws/catalog_import.hpp A validated Catalog from saved AWS outputs: spot prices, instance types,
/// on-demand prices, vCPU quotas and the Spot Advisor's bands (docs/market-data.md).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "spotdnn/catalog.hpp"
#include "spotdnn/detail/format.hpp"
#include "spotdnn/detail/validate.hpp"
#include "spotdnn/io/aws/aws_output.hpp"
#include "spotdnn/io/aws/instance_types.hpp"
#include "spotdnn/io/aws/output_forms.hpp"
#include "spotdnn/io/aws/pricing_products.hpp"
#include "spotdnn/io/aws/quota_families.hpp"
#include "spotdnn/io/aws/service_quotas.hpp"
#include "spotdnn/io/aws/spot_advisor.hpp"
#include "spotdnn/io/aws/spot_price_history.hpp"
#include "spotdnn/io/aws/timestamp.hpp"
#include "spotdnn/io/json.hpp"
#include "spotdnn/limits.hpp"
#include "spotdnn/presets.hpp"

namespace spotdnn::io::aws {

/// The saved `aws ... --output json` outputs (each already parsed to io::Json) and a name for messages (the file).
struct ImportSource {
  Json json;
  std::string name;
};

struct CatalogImportSources {
  ImportSource spot_prices;                       ///< aws ec2 describe-spot-price-history (required)
  ImportSource instance_types;                    ///< aws ec2 describe-instance-types (required)
  std::optional<ImportSource> on_demand_prices;   ///< aws pricing get-products --service-code AmazonEC2, or the EC2 offer file
  std::optional<ImportSource> quotas;             ///< aws service-quotas list-service-quotas --service-code ec2
  std::optional<ImportSource> default_quotas;     ///< aws service-quotas list-aws-default-service-quotas --service-code ec2
  std::optional<ImportSource> advisor;            ///< the Spot Instance Advisor JSON
  /// Optional sources that failed to fetch, with the reason ("quotas: AccessDenied ..."); at most
  /// kMaxMissingSources, each printable text. They go to Catalog::missing_sources as given.
  std::vector<std::string> missing;
};

struct CatalogImportOptions {
  std::string region;                  ///< required, e.g. "us-east-1"
  std::vector<std::string> types;      ///< empty = every GPU type with a Linux spot price
  std::optional<Catalog> base;         ///< imported figures go on top of it
  std::int64_t now_unix_s = 0;         ///< "now", for price ages (the CLI passes the clock or --as-of); 0 = no age check
  double max_price_age_s = 86400;      ///< older latest prices give a warning
  int quota_without_group_instances = 16;  ///< per-type quota when no vCPU quota value is known
};

struct CatalogImport {
  Catalog catalog;
  std::vector<std::string> warnings;  ///< one line each, for people (the CLI prints them as warnings)
};

/// Most entries of CatalogImportSources::missing (catalog JSON reads at most 100 missing_sources).
inline constexpr std::size_t kMaxMissingSources = 50;

/// The labels of the optional sources in Catalog::missing_sources ("quotas: not given").
inline constexpr std::string_view kOnDemandPricesLabel = "on-demand prices";
inline constexpr std::string_view kQuotasLabel = "quotas";
inline constexpr std::string_view kDefaultQuotasLabel = "default quotas";
inline constexpr std::string_view kAdvisorLabel = "advisor";

namespace import_detail {

/// True when `zone` is an Availability Zone (or Local/Wavelength Zone) of `region`: the region's name
/// followed by a letter ("us-east-1a") or by "-" and more ("us-east-1-bos-1a").
inline bool zone_in_region(std::string_view zone, std::string_view region) {
  if (zone.size() <= region.size() || zone.substr(0, region.size()) != region) return false;
  const char next = zone[region.size()];
  return (next >= 'a' && next <= 'z') || (next == '-' && zone.size() > region.size() + 1);
}

/// "a, b, c" with at most `shown` names, then "and N more".
inline std::string name_list(const std::vector<std::string>& names, std::size_t shown = 10) {
  std::string text;
  for (std::size_t i = 0; i < names.size() && i < shown; ++i) text.append(i == 0 ? "" : ", ").append(names[i]);
  if (names.size() > shown) text += " and " + std::to_string(names.size() - shown) + " more";
  return text;
}

/// "3.2 days", "5.5 h", "40 min": an age for people.
inline std::string age_text(double age_s) {
  if (age_s >= 2 * 86400) return spotdnn::detail::format_fixed(age_s / 86400, 1) + " days";
  if (age_s >= 2 * 3600) return spotdnn::detail::format_fixed(age_s / 3600, 1) + " h";
  return spotdnn::detail::format_fixed(age_s / 60, 0) + " min";
}

inline std::string usd_per_hour(double price) { return "$" + spotdnn::detail::format_readable(price) + "/h"; }

}  // namespace import_detail

/// Builds a validated catalog of `options.region` from AWS outputs (docs/market-data.md):
/// - types: the GPU types of `instance_types` with a Linux spot price in the region's Availability Zones
///   (only `options.types` when given: a requested type that lacks either gets a warning; none left is an
///   error), on the spot market at their lowest latest zone price (`price_observed_at` that observation's
///   time, `zone_prices_usd_per_hour` every zone's latest price), with vCPUs, memory, network, GPU model and
///   count from `instance_types`, the Linux on-demand price from `on_demand_prices`, quota group codes from
///   quota_groups_for_type and the interruption band from `advisor`; PCIe bandwidth and revocation hazard
///   come from the base catalog's type, else the defaults.
/// - quota groups: every group a type references whose value is known (`quotas`, else `default_quotas`),
///   vcpus = floor(Value); each type's quota = min(kMaxQuota, floor(group vCPUs / type vCPUs)) when its spot
///   group's value is known, else `options.quota_without_group_instances` (with a warning).
/// - the parameter server: the base's, else the preset's m5.xlarge, priced from `on_demand_prices` when that
///   has its type (else a warning that the preset's frozen price is used), its vCPUs from `instance_types`
///   when that describes its type, and its on-demand quota group (quota_groups_for_type) when `quotas` or
///   `default_quotas` give that group's value and its vCPUs are known (the group is then in quota_groups).
/// - `options.base`: same region (else an error); imported types replace its types of the same name (keeping
///   its order, new types follow by name); its other types are kept, with a warning that their prices were
///   not updated.
/// Warnings say what was skipped and why, which prices are older than `options.max_price_age_s`, and which
/// quota groups have no known value; Catalog::missing_sources lists the optional sources not given or failed.
/// Errors throw spotdnn::invalid_argument "import_catalog: SOURCE: path = value: why".
[[nodiscard]] inline CatalogImport import_catalog(const CatalogImportSources& sources, const CatalogImportOptions& options) {
  namespace d = spotdnn::detail;
  using import_detail::name_list;
  const std::string fn = "import_catalog";

  // ---- options ----
  d::require_non_empty(fn, "options.region", options.region);
  d::require_printable_name(fn, "options.region", options.region);
  if (options.region.size() > kMaxAwsTextBytes) d::fail(fn, "options.region", d::quoted(options.region.substr(0, 40) + "..."), "too long");
  if (!(options.max_price_age_s >= 0) || !std::isfinite(options.max_price_age_s)) {
    d::fail(fn, "options.max_price_age_s", options.max_price_age_s, "must be a finite number of seconds, at least 0");
  }
  if (options.quota_without_group_instances < 0 || options.quota_without_group_instances > kMaxQuota) {
    d::fail(fn, "options.quota_without_group_instances", options.quota_without_group_instances,
            "must be from 0 to " + std::to_string(kMaxQuota));
  }
  if (options.types.size() > std::size_t(kMaxInstanceTypes)) {
    d::fail(fn, "options.types", std::to_string(options.types.size()) + " types",
            "at most " + std::to_string(kMaxInstanceTypes) + " types");
  }
  {
    std::set<std::string_view> requested;
    for (std::size_t i = 0; i < options.types.size(); ++i) {
      const std::string field = "options.types[" + std::to_string(i) + "]";
      d::require_non_empty(fn, field, options.types[i]);
      d::require_printable_name(fn, field, options.types[i]);
      if (!requested.insert(options.types[i]).second) d::fail(fn, field, d::quoted(options.types[i]), "listed twice");
    }
  }
  if (options.base) {
    if (options.base->region != options.region) {
      d::fail(fn, "options.base.region", d::quoted(options.base->region),
              "the base catalog is for another region than " + options.region);
    }
    validate_at_path(fn, "options.base", "Catalog::validate", [&] { options.base->validate(); });
  }
  if (sources.missing.size() > kMaxMissingSources) {
    d::fail(fn, "sources.missing", std::to_string(sources.missing.size()) + " entries",
            "at most " + std::to_string(kMaxMissingSources) + " entries");
  }
  for (std::size_t i = 0; i < sources.missing.size(); ++i) {
    const std::string field = "sources.missing[" + std::to_string(i) + "]";
    d::require_non_empty(fn, field, sources.missing[i]);
    d::require_printable_name(fn, field, sources.missing[i]);
  }

  // ---- sources ----
  CatalogImport result;
  std::vector<std::string>& warnings = result.warnings;
  const std::string& sp_name = sources.spot_prices.name;
  const std::string& it_name = sources.instance_types.name;
  const SpotPriceHistory history = read_spot_price_history(sources.spot_prices.json, sp_name, fn);
  const InstanceTypeInfos infos = read_instance_types(sources.instance_types.json, it_name, fn);

  // ---- spot prices of the region, by type (before the optional sources: a spot price file of another
  // region is the first thing to say) ----
  std::map<std::string, std::vector<const SpotPriceObservation*>> prices_by_type;
  std::set<std::string> other_zones;
  for (const SpotPriceObservation& observation : history.latest) {
    if (import_detail::zone_in_region(observation.availability_zone, options.region)) {
      prices_by_type[observation.instance_type].push_back(&observation);
    } else {
      other_zones.insert(observation.availability_zone);
    }
  }
  if (prices_by_type.empty()) {
    d::fail(fn, history.list_path.empty() ? sp_name : sp_name + ": " + history.list_path, std::to_string(history.rows) + " rows",
            "no Linux/UNIX spot price in " + sp_name + " for an Availability Zone of " + options.region);
  }
  std::optional<OnDemandPrices> on_demand;
  if (sources.on_demand_prices) {
    on_demand = read_pricing_products(sources.on_demand_prices->json, sources.on_demand_prices->name, options.region, fn);
  }
  std::optional<ServiceQuotas> applied_quotas, default_quotas;
  if (sources.quotas) applied_quotas = read_service_quotas(sources.quotas->json, sources.quotas->name, fn);
  if (sources.default_quotas) default_quotas = read_service_quotas(sources.default_quotas->json, sources.default_quotas->name, fn);
  std::optional<SpotAdvisor> advisor;
  if (sources.advisor) advisor = read_spot_advisor(sources.advisor->json, sources.advisor->name, options.region, fn);

  const auto more_pages = [&](bool more, const std::string& name) {
    if (more) warnings.push_back(name + ": the output has a NextToken: only its first page was read (run the aws command without --max-items, or join the pages)");
  };
  more_pages(history.more_pages, sp_name);
  more_pages(infos.more_pages, it_name);
  if (on_demand) {
    more_pages(on_demand->more_pages, sources.on_demand_prices->name);
    if (on_demand->zero_price_products > 0) {
      warnings.push_back(sources.on_demand_prices->name + ": skipped " + std::to_string(on_demand->zero_price_products) +
                         " Linux on-demand products priced $0 per hour (placeholders such as Capacity Block or reservation entries)");
    }
    if (on_demand->without_on_demand_term > 0) {
      warnings.push_back(sources.on_demand_prices->name + ": skipped " + std::to_string(on_demand->without_on_demand_term) +
                         " Linux products without an OnDemand term");
    }
  }
  if (applied_quotas) more_pages(applied_quotas->more_pages, sources.quotas->name);
  if (default_quotas) more_pages(default_quotas->more_pages, sources.default_quotas->name);

  if (history.non_linux_rows > 0) {
    warnings.push_back(sp_name + ": skipped " + std::to_string(history.non_linux_rows) +
                       " rows that are not Linux/UNIX (Windows, SUSE, Red Hat, ...)");
  }
  if (!other_zones.empty()) {
    warnings.push_back(sp_name + ": skipped the prices of zones outside " + options.region + ": " +
                       name_list(std::vector<std::string>(other_zones.begin(), other_zones.end())));
  }

  // ---- which types ----
  std::vector<std::string> chosen;
  if (options.types.empty()) {
    std::vector<std::string> undescribed, unpriced;
    for (const auto& [name, observations] : prices_by_type) {
      const auto info = infos.by_name.find(name);
      if (info == infos.by_name.end()) {
        undescribed.push_back(name);
      } else if (info->second.gpus > 0) {
        chosen.push_back(name);
      }
    }
    for (const auto& [name, info] : infos.by_name) {
      if (info.gpus > 0 && prices_by_type.count(name) == 0) unpriced.push_back(name);
    }
    if (!undescribed.empty()) {
      warnings.push_back("skipped " + std::to_string(undescribed.size()) + " types with a spot price that " + it_name +
                         " does not describe (GPUs unknown): " + name_list(undescribed));
    }
    if (!unpriced.empty()) {
      warnings.push_back("skipped " + std::to_string(unpriced.size()) + " GPU types without a Linux spot price in " +
                         options.region + " in " + sp_name + ": " + name_list(unpriced));
    }
  } else {
    for (const std::string& name : options.types) {
      const auto info = infos.by_name.find(name);
      if (info == infos.by_name.end()) {
        warnings.push_back(name + ": skipped: " + it_name + " does not describe this type");
      } else if (info->second.gpus == 0) {
        warnings.push_back(name + ": skipped: " + it_name + " gives it no GPU");
      } else if (prices_by_type.count(name) == 0) {
        warnings.push_back(name + ": skipped: no Linux/UNIX spot price in " + options.region + " in " + sp_name);
      } else {
        chosen.push_back(name);
      }
    }
    std::sort(chosen.begin(), chosen.end());
  }
  if (chosen.empty()) {
    d::fail(fn, "types", options.types.empty() ? std::string("(every GPU type)") : name_list(options.types),
            "no GPU instance type with a Linux/UNIX spot price in " + options.region + " is described by " + it_name);
  }
  if (chosen.size() > std::size_t(kMaxInstanceTypes)) {
    d::fail(fn, "types", std::to_string(chosen.size()) + " types",
            "a catalog may list at most " + std::to_string(kMaxInstanceTypes) + " instance types: pass the types wanted");
  }

  // ---- the imported types ----
  const Catalog* base = options.base ? &*options.base : nullptr;
  std::vector<InstanceType> imported;
  for (const std::string& name : chosen) {
    const InstanceTypeInfo& info = infos.by_name.at(name);
    const InstanceType* base_type = nullptr;
    if (base != nullptr) {
      if (const auto k = base->index_of(name)) base_type = &base->instance_types[*k];
    }
    InstanceType type = base_type != nullptr ? *base_type : InstanceType{};
    type.name = name;
    type.market = Market::spot;
    type.gpus = info.gpus;
    type.vcpus = info.vcpus;
    type.memory_mib = info.memory_mib;
    type.network_performance = info.network_performance;
    type.gpu_model = info.gpu_model;
    type.zone_prices_usd_per_hour.clear();
    const SpotPriceObservation* lowest = nullptr;
    for (const SpotPriceObservation* observation : prices_by_type.at(name)) {
      type.zone_prices_usd_per_hour[observation->availability_zone] = observation->price_usd_per_hour;
      if (lowest == nullptr || observation->price_usd_per_hour < lowest->price_usd_per_hour) lowest = observation;
      if (options.now_unix_s > 0) {
        const double age_s = double(options.now_unix_s - observation->observed_at_unix_s);
        if (age_s > options.max_price_age_s) {
          warnings.push_back(name + " in " + observation->availability_zone + ": the latest spot price (" +
                             import_detail::usd_per_hour(observation->price_usd_per_hour) + ", " + format_utc_timestamp(observation->observed_at_unix_s) +
                             ") is " + import_detail::age_text(age_s) + " old");
        }
      }
    }
    type.price_usd_per_hour = lowest->price_usd_per_hour;
    type.price_observed_at = format_utc_timestamp(lowest->observed_at_unix_s);

    if (on_demand) {
      if (const auto price = on_demand->by_type.find(name); price != on_demand->by_type.end()) {
        type.on_demand_price_usd_per_hour = price->second.price_usd_per_hour;
      } else {
        warnings.push_back(name + ": no Linux, shared-tenancy on-demand product in " + sources.on_demand_prices->name +
                           (type.on_demand_price_usd_per_hour > 0 ? ": the base catalog's on-demand price is kept"
                                                                  : ": its on-demand price is unknown"));
      }
    }
    if (advisor) {
      if (const auto entry = advisor->linux_types.find(name); entry != advisor->linux_types.end()) {
        type.interruption_band = entry->second.interruption_band;
      } else if (advisor->region_found) {
        warnings.push_back(name + ": not in the Spot Advisor's Linux data for " + options.region + " in " + sources.advisor->name +
                           (type.interruption_band ? ": the base catalog's interruption band is kept" : ": interruption band unknown"));
      }
    }
    const QuotaGroupCodes codes = quota_groups_for_type(name);
    type.spot_quota_group = std::string(codes.spot);
    type.on_demand_quota_group = std::string(codes.on_demand);
    imported.push_back(std::move(type));
  }
  if (advisor && !advisor->region_found) {
    warnings.push_back(sources.advisor->name + ": no Linux data for " + options.region + ": interruption bands are not updated");
  }

  // ---- quota groups ----
  Catalog& catalog = result.catalog;
  catalog.region = options.region;
  if (base != nullptr) catalog.quota_groups = base->quota_groups;
  std::set<std::string> referenced;
  for (const InstanceType& type : imported) {
    for (const std::string* code : {&type.spot_quota_group, &type.on_demand_quota_group}) {
      if (!code->empty()) referenced.insert(*code);
    }
  }
  // The parameter server's on-demand group, when the quotas give its value (a group only the PS would use
  // is not worth a warning when they do not).
  const ParameterServer& base_server = base != nullptr ? base->parameter_server : presets::resnet110_catalog().parameter_server;
  const std::string ps_group_code(quota_groups_for_type(base_server.type).on_demand);
  if (!ps_group_code.empty()) {
    const auto has_value = [&](const std::optional<ServiceQuotas>& quotas) {
      if (!quotas) return false;
      const auto it = quotas->by_code.find(ps_group_code);
      return it != quotas->by_code.end() && it->second.value.has_value();
    };
    if (has_value(applied_quotas) || has_value(default_quotas)) referenced.insert(ps_group_code);
  }
  for (const std::string& code : referenced) {
    const KnownQuotaGroup* known = known_quota_group(code);
    const ServiceQuota* quota = nullptr;
    std::string from;
    if (applied_quotas) {
      if (const auto it = applied_quotas->by_code.find(code); it != applied_quotas->by_code.end() && it->second.value) {
        quota = &it->second;
        from = sources.quotas->name;
      }
    }
    if (quota == nullptr && default_quotas) {
      if (const auto it = default_quotas->by_code.find(code); it != default_quotas->by_code.end() && it->second.value) {
        quota = &it->second;
        from = sources.default_quotas->name;
        if (applied_quotas) {
          warnings.push_back("quota group " + code + " (" + std::string(known->name) + "): no applied value in " + sources.quotas->name +
                             ": using the default value " + d::format_number(std::floor(*quota->value)) + " vCPUs from " + from);
        }
      }
    }
    const auto existing = std::find_if(catalog.quota_groups.begin(), catalog.quota_groups.end(),
                                       [&](const QuotaGroup& group) { return group.code == code; });
    if (quota == nullptr) {
      std::string where;
      if (applied_quotas) where = sources.quotas->name;
      if (default_quotas) where += (where.empty() ? "" : " or ") + sources.default_quotas->name;
      warnings.push_back("quota group " + code + " (" + std::string(known->name) + "): no value known" +
                         (where.empty() ? std::string(" (no quotas given)") : " in " + where) +
                         (existing != catalog.quota_groups.end() ? ": the base catalog's value is kept" : ""));
      continue;
    }
    QuotaGroup group;
    group.code = code;
    group.name = quota->name.empty() ? std::string(known->name) : quota->name;
    group.vcpus = int(std::floor(*quota->value));
    group.market = known->market;
    if (existing != catalog.quota_groups.end()) {
      *existing = group;
    } else {
      catalog.quota_groups.push_back(group);
    }
  }
  for (InstanceType& type : imported) {
    const QuotaGroup* group = type.spot_quota_group.empty() ? nullptr : catalog.quota_group(type.spot_quota_group);
    if (group != nullptr) {
      // The per-type quota is a box around the counts; the groups limit each market (the planner applies
      // the group of the market a type is bought in). So the box is the larger of what the spot group and
      // the on-demand group allow: a spot group of 0 must not block an on-demand plan of the same type.
      std::int64_t instances = std::int64_t(group->vcpus) / type.vcpus;
      const QuotaGroup* on_demand =
          type.on_demand_quota_group.empty() ? nullptr : catalog.quota_group(type.on_demand_quota_group);
      if (on_demand != nullptr) instances = std::max(instances, std::int64_t(on_demand->vcpus) / type.vcpus);
      type.quota = int(std::min<std::int64_t>(kMaxQuota, instances));
      continue;
    }
    type.quota = options.quota_without_group_instances;
    const InstanceFamily family = instance_family(type.name);
    warnings.push_back(type.name + ": " +
                       (type.spot_quota_group.empty()
                            ? "instance family \"" + family.letters + "\" has no known EC2 spot vCPU quota group"
                            : "no known value of its spot vCPU quota group " + type.spot_quota_group) +
                       ": its quota is set to " + std::to_string(type.quota) + " instances");
  }

  // ---- the catalog: base order first, new types by name ----
  if (base != nullptr) {
    for (const InstanceType& base_type : base->instance_types) {
      const auto it = std::find_if(imported.begin(), imported.end(), [&](const InstanceType& t) { return t.name == base_type.name; });
      if (it != imported.end()) {
        catalog.instance_types.push_back(std::move(*it));
        imported.erase(it);
      } else {
        catalog.instance_types.push_back(base_type);
        warnings.push_back(base_type.name + ": kept from the base catalog: its prices were not updated");
      }
    }
  }
  for (InstanceType& type : imported) catalog.instance_types.push_back(std::move(type));

  // ---- the parameter server ----
  catalog.parameter_server = base_server;
  const std::string& ps_type = catalog.parameter_server.type;
  if (const auto info = infos.by_name.find(ps_type); info != infos.by_name.end() && info->second.vcpus > 0) {
    catalog.parameter_server.vcpus = info->second.vcpus;
  }
  if (!ps_group_code.empty() && catalog.quota_group(ps_group_code) != nullptr) {
    if (catalog.parameter_server.vcpus > 0) {
      catalog.parameter_server.quota_group = ps_group_code;
    } else {
      warnings.push_back("parameter server " + ps_type + ": " + it_name + " does not describe it, so its vCPUs are unknown and " +
                         "on-demand quota group " + ps_group_code + " does not count it (add " + ps_type +
                         " to the describe-instance-types call)");
    }
  }
  if (on_demand) {
    if (const auto price = on_demand->by_type.find(ps_type); price != on_demand->by_type.end()) {
      catalog.parameter_server.price_usd_per_hour = price->second.price_usd_per_hour;
    }
  }
  if (base == nullptr && !(on_demand && on_demand->by_type.count(ps_type) > 0)) {
    warnings.push_back("parameter server " + ps_type + ": no on-demand price in " +
                       (on_demand ? sources.on_demand_prices->name : std::string("the given sources")) +
                       ": using the frozen preset price " + import_detail::usd_per_hour(catalog.parameter_server.price_usd_per_hour));
  }

  // ---- what the catalog lacks ----
  catalog.missing_sources = sources.missing;
  const auto note_missing = [&](bool given, std::string_view label) {
    if (given) return;
    const std::string prefix = std::string(label) + ":";
    for (const std::string& entry : sources.missing) {
      if (entry.rfind(prefix, 0) == 0) return;
    }
    catalog.missing_sources.push_back(std::string(label) + ": not given");
  };
  note_missing(sources.on_demand_prices.has_value(), kOnDemandPricesLabel);
  note_missing(sources.quotas.has_value(), kQuotasLabel);
  note_missing(sources.default_quotas.has_value(), kDefaultQuotasLabel);
  note_missing(sources.advisor.has_value(), kAdvisorLabel);

  validate_at_path(fn, "catalog", "Catalog::validate", [&] { catalog.validate(); });
  return result;
}

}  // namespace spotdnn::io::aws
