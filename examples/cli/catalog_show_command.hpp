#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/catalog_show_command.hpp `spotdnn catalog show`: a catalog for people (per type GPUs, vCPUs,
/// price, cheapest zone, price age, on-demand price, band and quota; the parameter server's type, vCPUs, on-demand
/// quota group and price; the quota groups; its placement scores;
/// what it lacks) or, with --format json, the catalog itself. Prices older than --max-price-age give a warning (price_age.hpp:
/// the rule and text `plan` and `frontier` share).

#include <algorithm>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <spotdnn/catalog.hpp>
#include <spotdnn/errors.hpp>
#include <spotdnn/io/aws/timestamp.hpp>
#include <spotdnn/io/json.hpp>

#include "catalog_options.hpp"
#include "command.hpp"
#include "options.hpp"
#include "price_age.hpp"
#include "table.hpp"

namespace spotdnn::cli {

class CatalogShowCommand : public Command {
 public:
  void attach(CLI::App& parent) override {
    subcommand_ = catalog_group(parent)->add_subcommand(
        "show", "print a catalog: per type GPUs, vCPUs, price, cheapest zone, price age, on-demand price, band, quota; its "
                "quota groups and missing sources");
    subcommand_->add_option("--catalog", catalog_path_, "catalog JSON, - for stdin (default: the embedded us-east-1 preset)")
        ->check(non_empty_path());
    add_format_option(*subcommand_, format_, {OutputFormat::table, OutputFormat::json});
    add_as_of_option(*subcommand_, as_of_unix_s_);
    add_max_price_age_option(*subcommand_, max_price_age_s_);
  }

  int run(std::ostream& out) override {
    const Catalog catalog = ModelOptions::load_catalog_at(catalog_path_);
    const std::int64_t now = now_unix_s(as_of_unix_s_);
    for (const std::string& stale : stale_price_warnings(catalog, now, max_price_age_s_)) warn(stale);
    if (format_ == OutputFormat::json) {
      out << io::to_json(catalog).dump(2) << '\n';
      return 0;
    }
    print_table(out, catalog, now);
    return 0;
  }

 private:
  static void print_table(std::ostream& out, const Catalog& catalog, std::int64_t now) {
    const auto price = [](double usd) { return detail::format_readable(usd); };
    const ParameterServer& ps = catalog.parameter_server;
    // "m5.xlarge (4 vCPUs, on-demand quota group L-1216C47A)": its vCPUs and group when the catalog has them.
    std::string ps_details;
    if (ps.vcpus > 0) ps_details = std::to_string(ps.vcpus) + " vCPUs";
    if (!ps.quota_group.empty()) ps_details += (ps_details.empty() ? "" : ", ") + std::string("on-demand quota group ") + ps.quota_group;
    out << fmt::format("catalog {}: {} instance types; parameter server {}{} at ${}/h on demand; price ages as of {}\n\n",
                       catalog.region, catalog.instance_types.size(), ps.type, ps_details.empty() ? "" : " (" + ps_details + ")",
                       price(ps.price_usd_per_hour), io::aws::format_utc_timestamp(now));
    TextTable types({"type", "GPUs", "GPU model", "vCPUs", "market", "price $/h", "cheapest AZ", "zones", "price age",
                     "on-demand $/h", "band", "spot quota group", "quota"},
                    1);
    for (const InstanceType& type : catalog.instance_types) {
      std::string cheapest = "-";
      double lowest = 0;
      for (const auto& [zone, zone_price] : type.zone_prices_usd_per_hour) {
        if (cheapest == "-" || zone_price < lowest) {
          cheapest = zone;
          lowest = zone_price;
        }
      }
      const std::optional<std::int64_t> observed = observed_at_unix_s(type);
      std::string group = type.spot_quota_group.empty() ? "-" : type.spot_quota_group;
      if (!type.spot_quota_group.empty() && catalog.quota_group(type.spot_quota_group) == nullptr) group += " (value unknown)";
      types.add_row({type.name, std::to_string(type.gpus), type.gpu_model.empty() ? "-" : type.gpu_model,
                     type.vcpus > 0 ? std::to_string(type.vcpus) : "-", std::string(to_string(type.market)),
                     price(type.price_usd_per_hour), cheapest, std::to_string(type.zone_prices_usd_per_hour.size()),
                     observed ? format_age(double(now - *observed)) : "unknown",
                     type.on_demand_price_usd_per_hour > 0 ? price(type.on_demand_price_usd_per_hour) : "-",
                     type.interruption_band.value_or("-"), group, std::to_string(type.quota)});
    }
    types.print(out);
    out << '\n';
    if (catalog.quota_groups.empty()) {
      out << "quota groups: none given (only each type's quota limits a cluster)\n";
    } else {
      out << "quota groups (vCPUs of every type in the group, bought in its market, together):\n";
      // Left-aligned text, right-aligned vCPUs: code, market, vCPUs, name.
      std::size_t code_width = 4, market_width = 6, vcpus_width = 5;
      for (const QuotaGroup& group : catalog.quota_groups) {
        code_width = std::max(code_width, group.code.size());
        market_width = std::max(market_width, to_string(group.market).size());
        vcpus_width = std::max(vcpus_width, std::to_string(group.vcpus).size());
      }
      const auto line = [&](const std::string& code, std::string_view market, const std::string& vcpus, const std::string& name) {
        std::string text = fmt::format("  {:<{}}  {:<{}}  {:>{}}  {}", code, code_width, market, market_width, vcpus, vcpus_width, name);
        while (!text.empty() && text.back() == ' ') text.pop_back();
        out << text << '\n';
      };
      line("code", "market", "vCPUs", "name");
      line(std::string(code_width, '-'), std::string(market_width, '-'), std::string(vcpus_width, '-'), "----");
      for (const QuotaGroup& group : catalog.quota_groups) {
        line(group.code, to_string(group.market), std::to_string(group.vcpus), group.name);
      }
      if (!ps.quota_group.empty() && ps.vcpus > 0) {
        out << fmt::format("  {} also counts the parameter server's {} vCPUs ({}, on demand): plans leave them free\n", ps.quota_group,
                           ps.vcpus, ps.type);
      }
    }
    out << '\n';
    if (!catalog.placement_scores.empty()) {
      out << "placement scores (aws ec2 get-spot-placement-scores: 1 unlikely to 10 very likely to get the capacity):\n";
      TextTable scores({"zone", "score", "capacity", "types", "asked at"}, 1);
      for (const PlacementScore& p : catalog.placement_scores) {
        std::string types;
        for (std::size_t i = 0; i < p.instance_types.size(); ++i) {
          if (i == 8) {
            types += ", ... (" + std::to_string(p.instance_types.size()) + " types)";
            break;
          }
          types += (i ? "," : "") + p.instance_types[i];
        }
        scores.add_row({p.zone.empty() ? "region" : p.zone, std::to_string(p.score),
                        std::to_string(p.target_capacity) + (p.target_capacity_unit == "units" ? "" : " " + p.target_capacity_unit),
                        types, p.observed_at.empty() ? "-" : p.observed_at});
      }
      scores.print(out);
      out << '\n';
    }
    if (catalog.missing_sources.empty()) {
      out << "missing sources: none\n";
    } else {
      out << "missing sources:\n";
      for (const std::string& missing : catalog.missing_sources) out << "  " << missing << '\n';
    }
  }

  std::string catalog_path_;
  OutputFormat format_ = OutputFormat::table;
  std::optional<std::int64_t> as_of_unix_s_;
  double max_price_age_s_ = 86400;
};

}  // namespace spotdnn::cli
