#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/cost_command.hpp `spotdnn cost --run ID`: what a run has cost so far (and, with --plan, in
/// total by its deadline), per instance, beside the plan's estimate. It runs the read-only calls itself,
/// without a shell, as `catalog fetch` does: `aws ec2 describe-instances` filtered by the run tag, then one
/// `aws ec2 describe-spot-price-history` per (type, zone) of the run's spot instances over their lives.
/// Billing rules and the JSON fields: docs/cost.md. With an AWS configuration of several regions, the
/// run's region is --region's, else the region of --plan (read_run_aws_input).

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <spotdnn/errors.hpp>
#include <spotdnn/io/aws/timestamp.hpp>
#include <spotdnn/io/json.hpp>
#include <spotdnn/launcher/aws_config_json.hpp>
#include <spotdnn/launcher/launch_plan_json.hpp>
#include <spotdnn/launcher/run_cost.hpp>
#include <spotdnn/launcher/run_instances_json.hpp>
#include <spotdnn/presets.hpp>

#include "aws_calls.hpp"
#include "command.hpp"
#include "csv_output.hpp"
#include "options.hpp"
#include "process.hpp"
#include "script_output.hpp"
#include "table.hpp"

namespace spotdnn::cli {

/// Document kind and schema version of `cost --format json`.
inline constexpr std::string_view kRunCostDocumentKind = "spotdnn.run_cost";
inline constexpr int kRunCostDocumentSchemaVersion = 1;

class CostCommand : public Command {
 public:
  void attach(CLI::App& parent) override {
    subcommand_ = parent.add_subcommand(
        "cost", "what a run has cost so far per instance (EC2 launch and end times, spot price history, on-demand prices, "
                "per-second billing), and with --plan its projected total beside the plan's estimate (exit 3: no instances)");
    add_run_option(*subcommand_, run_id_);
    add_aws_option(*subcommand_, aws_path_);
    add_run_region_option(*subcommand_, region_, "the region of --plan");
    subcommand_->add_option("--catalog", catalog_path_,
                            "catalog JSON, - for stdin: the on-demand prices (default: the embedded us-east-1 preset)")
        ->check(non_empty_path());
    subcommand_->add_option("--plan", plan_path_,
                            "the run's plan document (spotdnn plan --format json), - for stdin: its deadline_s (counted from the "
                            "parameter server's launch) projects the running instances, its cost_usd is shown beside")
        ->check(non_empty_path());
    subcommand_
        ->add_option_function<std::string>(
            "--now",
            [this](const std::string& text) {
              try {
                now_unix_s_ = double(io::aws::parse_aws_timestamp(text, "cost", "--now"));
              } catch (const spotdnn::invalid_argument& e) {
                throw CLI::ValidationError("--now", detail::quoted(text) + ": " + e.why());
              }
            },
            "bill running instances up to this time, ISO 8601 such as 2026-11-24T10:00:00Z (default: the clock)")
        ->type_name("TIME");
    subcommand_->add_option("--aws-cli", aws_program_, "the aws program to run (default: aws on PATH)")
        ->type_name("PATH")
        ->check(non_empty_path());
    add_duration_option(*subcommand_, "--aws-timeout", timeout_s_, "time limit of each aws call; then it is killed (default 120s)")
        ->default_str("120s");
    add_format_option(*subcommand_, format_);
  }

  int run(std::ostream& out) override {
    require_run_id_option("--run", run_id_);
    require_one_stdin({{"--aws", aws_path_}, {"--catalog", catalog_path_}, {"--plan", plan_path_}});
    if (!(timeout_s_ <= 24 * 3600)) throw usage_error("--aws-timeout = " + detail::format_number(timeout_s_) + " s: at most 24h");
    std::optional<double> deadline_s;
    std::optional<double> plan_cost_usd;
    std::string plan_region;  // the plan's region (empty: no --plan)
    if (!plan_path_.empty()) plan_region = load_plan(deadline_s, plan_cost_usd);
    const launcher::AwsConfig aws = read_run_aws_input(aws_path_, region_, plan_region);
    if (!plan_region.empty() && plan_region != aws.region) {
      throw usage_error("--plan: " + (is_stdin(plan_path_) ? std::string(kStdinName) : plan_path_) + " was priced for " + plan_region +
                        ", but the run is in " + aws.region + " (the AWS configuration's region" +
                        (region_.empty() ? "" : ", --region") + "): give the plan the run was launched from");
    }
    const Catalog catalog = load_catalog();
    if (!catalog.region.empty() && catalog.region != aws.region) {
      warn("the catalog's on-demand prices are " + catalog.region + "'s, but the run is in " + aws.region +
           ": give --catalog a catalog of " + aws.region + " (spotdnn catalog fetch --region " + aws.region + ")");
    }
    const double now_unix_s = now_unix_s_ ? *now_unix_s_ : double(std::time(nullptr));

    // The run's instances.
    const io::Json described = aws_json({"ec2", "describe-instances", "--filters", "Name=tag:spotdnn:run,Values=" + run_id_}, aws.region,
                                        "aws ec2 describe-instances");
    const std::vector<launcher::RunInstance> instances =
        launcher::run_instances_from_describe(described, run_id_, "read_describe_instances(aws ec2 describe-instances)");

    // The spot price history of every (type, zone) of its spot instances, from the earliest launch on.
    std::map<std::pair<std::string, std::string>, double> lives;  // (type, zone) -> earliest launch
    for (const launcher::RunInstance& instance : instances) {
      if (instance.market != Market::spot || instance.zone.empty()) continue;
      const auto key = std::make_pair(instance.type, instance.zone);
      const auto found = lives.find(key);
      if (found == lives.end() || instance.launch_time_unix_s < found->second) lives[key] = instance.launch_time_unix_s;
    }
    launcher::SpotPriceBook book;
    for (const auto& [key, start_unix_s] : lives) {
      const std::string call = "aws ec2 describe-spot-price-history (" + key.first + " in " + key.second + ")";
      const io::Json history = aws_json({"ec2", "describe-spot-price-history", "--instance-types", key.first, "--availability-zone",
                                         key.second, "--product-descriptions", "Linux/UNIX", "Linux/UNIX (Amazon VPC)",
                                         "--start-time", io::aws::format_utc_timestamp(std::int64_t(start_unix_s)), "--end-time",
                                         io::aws::format_utc_timestamp(std::int64_t(std::max(now_unix_s, start_unix_s)))},
                                        aws.region, call);
      launcher::add_spot_price_history(book, history, call, "cost");
    }

    launcher::RunCostOptions options;
    options.now_unix_s = now_unix_s;
    options.deadline_s = deadline_s;
    const launcher::RunCost cost = launcher::run_cost(instances, book, catalog, options);
    for (const std::string& why : cost.missing) warn("price missing: " + why + ": the totals leave it out");
    if (deadline_s && !cost.deadline_unix_s) warn("no parameter server (role ps) among the instances: no deadline to project to");

    switch (format_) {
      case OutputFormat::json: write_json(out, aws.region, cost, deadline_s, plan_cost_usd); break;
      case OutputFormat::csv: write_csv(out, cost); break;
      default: write_table(out, aws.region, cost, plan_cost_usd); break;
    }
    return instances.empty() ? kExitNoAnswer : 0;
  }

 private:
  /// The catalog of --catalog, or the embedded preset (the reading every model command does).
  [[nodiscard]] Catalog load_catalog() const { return ModelOptions::load_catalog_at(catalog_path_); }


  /// Reads the plan document's deadline_s (validated as launch validates it) and its cost_usd (a number,
  /// or null/absent: no estimate); returns its region.
  std::string load_plan(std::optional<double>& deadline_s, std::optional<double>& plan_cost_usd) const {
    const auto read = [&](const io::Json& json, const std::string& file) {
      const std::string function = "read_plan_file(" + file + ")";
      const launcher::LaunchPlan plan = launcher::launch_plan_from_document(json, std::nullopt, "plan", function);
      deadline_s = plan.deadline_s;
      if (const auto it = json.find("cost_usd"); it != json.end() && !it->is_null()) {
        if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < 0) {
          detail::fail(function, "plan.cost_usd", io::JsonObjectReader::excerpt(*it), "expected a number of USD, at least 0");
        }
        plan_cost_usd = it->get<double>();
      }
      return plan.region;
    };
    return read_json_input("--plan", plan_path_, read, [&](const std::string& file) { return read(io::read_json_file(file), file); });
  }

  /// Runs `aws ARGS` in `region` (aws_calls.hpp) and parses its output: a failure throws
  /// spotdnn::resource_error (exit 1) quoting aws's first error line, output that is not JSON
  /// spotdnn::invalid_argument (exit 2).
  [[nodiscard]] io::Json aws_json(const std::vector<std::string>& args, const std::string& region, const std::string& call) const {
    return AwsCalls{aws_program_, region, timeout_s_}.json(args, call);
  }

  static nlohmann::ordered_json optional_number(const std::optional<double>& value) {
    return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);
  }
  static std::string optional_usd(const std::optional<double>& value) { return value ? format_usd(*value) : std::string("?"); }
  static std::string optional_csv(const std::optional<double>& value) { return value ? csv_number(*value) : std::string(); }

  void write_json(std::ostream& out, const std::string& region, const launcher::RunCost& cost, const std::optional<double>& deadline_s,
                  const std::optional<double>& plan_cost_usd) const {
    nlohmann::ordered_json document;
    document["kind"] = std::string(kRunCostDocumentKind);
    document["schema_version"] = kRunCostDocumentSchemaVersion;
    document["run_id"] = run_id_;
    document["region"] = region;
    document["now"] = io::aws::format_utc_timestamp(std::int64_t(cost.now_unix_s));
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const launcher::InstanceCost& row : cost.instances) {
      const launcher::RunInstance& i = row.instance;
      nlohmann::ordered_json r;
      r["instance_id"] = i.instance_id;
      r["role"] = i.role;
      r["type"] = i.type;
      r["market"] = std::string(to_string(i.market));
      r["zone"] = i.zone.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(i.zone);
      r["state"] = i.state;
      r["state_reason_code"] = i.state_reason_code.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(i.state_reason_code);
      r["launch_time"] = io::aws::format_utc_timestamp(std::int64_t(i.launch_time_unix_s));
      r["end_time"] = row.ended ? nlohmann::ordered_json(io::aws::format_utc_timestamp(std::int64_t(row.end_unix_s)))
                                : nlohmann::ordered_json(nullptr);
      r["run_s"] = row.run_s;
      r["billed_s"] = row.billed_s;
      r["interrupted_by_ec2"] = row.interrupted_by_ec2;
      r["price_usd_per_hour"] = optional_number(row.price_usd_per_hour);
      r["cost_usd"] = optional_number(row.cost_usd);
      r["on_demand_cost_usd"] = optional_number(row.on_demand_cost_usd);
      r["projected_cost_usd"] = optional_number(row.projected_cost_usd);
      r["missing"] = row.missing.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(row.missing);
      rows.push_back(std::move(r));
    }
    document["instances"] = std::move(rows);
    nlohmann::ordered_json totals;
    totals["instances"] = cost.instances.size();
    totals["cost_so_far_usd"] = cost.cost_so_far_usd;
    totals["on_demand_cost_usd"] = cost.on_demand_cost_usd;
    totals["complete"] = cost.complete;
    totals["missing"] = cost.missing;
    totals["deadline"] = cost.deadline_unix_s ? nlohmann::ordered_json(io::aws::format_utc_timestamp(std::int64_t(*cost.deadline_unix_s)))
                                              : nlohmann::ordered_json(nullptr);
    totals["projected_total_usd"] = optional_number(cost.projected_total_usd);
    document["totals"] = std::move(totals);
    nlohmann::ordered_json plan;
    if (deadline_s) {
      plan["deadline_s"] = *deadline_s;
      plan["cost_usd"] = optional_number(plan_cost_usd);
      document["plan"] = std::move(plan);
    } else {
      document["plan"] = nullptr;
    }
    out << document.dump(2) << '\n';
  }

  static void write_csv(std::ostream& out, const launcher::RunCost& cost) {
    CsvTable table;
    for (const launcher::InstanceCost& row : cost.instances) {
      const launcher::RunInstance& i = row.instance;
      table.add("instance_id", i.instance_id);
      table.add("role", i.role);
      table.add("type", i.type);
      table.add("market", std::string(to_string(i.market)));
      table.add("zone", i.zone);
      table.add("state", i.state);
      table.add("launch_time", io::aws::format_utc_timestamp(std::int64_t(i.launch_time_unix_s)));
      table.add("end_time", row.ended ? io::aws::format_utc_timestamp(std::int64_t(row.end_unix_s)) : std::string());
      table.add("billed_s", csv_number(row.billed_s));
      table.add("price_usd_per_hour", optional_csv(row.price_usd_per_hour));
      table.add("cost_usd", optional_csv(row.cost_usd));
      table.add("projected_cost_usd", optional_csv(row.projected_cost_usd));
      table.add("missing", row.missing);
      table.next_row();
    }
    if (cost.instances.empty()) {
      out << "instance_id,role,type,market,zone,state,launch_time,end_time,billed_s,price_usd_per_hour,cost_usd,projected_cost_usd,"
             "missing\n";
      return;
    }
    table.print(out);
  }

  void write_table(std::ostream& out, const std::string& region, const launcher::RunCost& cost,
                   const std::optional<double>& plan_cost_usd) const {
    const std::string now = io::aws::format_utc_timestamp(std::int64_t(cost.now_unix_s));
    if (cost.instances.empty()) {
      out << "run " << run_id_ << ": no instances in " << region << " (EC2 lists none tagged spotdnn:run=" << run_id_ << ")\n";
      return;
    }
    out << "run " << run_id_ << " in " << region << ", as of " << now << ":\n";
    TextTable table({"instance", "role", "type", "market", "zone", "state", "launched", "ended", "billed", "USD/h", "cost"}, 8);
    for (const launcher::InstanceCost& row : cost.instances) {
      const launcher::RunInstance& i = row.instance;
      std::string billed = format_duration_words(row.billed_s);
      if (row.interrupted_by_ec2 && row.billed_s == 0) billed = "free: EC2 interrupted it within 1 h";
      table.add_row({i.instance_id, i.role, i.type, std::string(to_string(i.market)), i.zone, i.state,
                     io::aws::format_utc_timestamp(std::int64_t(i.launch_time_unix_s)),
                     row.ended ? io::aws::format_utc_timestamp(std::int64_t(row.end_unix_s)) : std::string("running"), billed,
                     row.price_usd_per_hour ? fmt::format("{:.4f}", *row.price_usd_per_hour) : std::string("?"),
                     optional_usd(row.cost_usd)});
    }
    table.print(out);
    out << "cost so far: " << format_usd(cost.cost_so_far_usd)
        << (cost.complete ? std::string() : " (incomplete: " + std::to_string(cost.missing.size()) + " instance(s) without a price)")
        << "; on demand the same seconds would cost " << format_usd(cost.on_demand_cost_usd) << "\n";
    if (cost.deadline_unix_s) {
      out << "projected total by the deadline " << io::aws::format_utc_timestamp(std::int64_t(*cost.deadline_unix_s)) << ": "
          << optional_usd(cost.projected_total_usd) << "\n";
    }
    if (!plan_path_.empty()) out << "plan's estimate: " << optional_usd(plan_cost_usd) << "\n";
  }

  std::string run_id_;
  std::string aws_path_;
  std::string region_;  ///< --region (empty: not given)
  std::string catalog_path_;
  std::string plan_path_;
  std::optional<double> now_unix_s_;  ///< --now
  std::string aws_program_ = "aws";
  double timeout_s_ = 120;
  OutputFormat format_ = OutputFormat::table;
};

}  // namespace spotdnn::cli
