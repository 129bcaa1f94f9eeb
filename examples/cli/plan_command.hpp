#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/plan_command.hpp `spotdnn plan`: the cheapest cluster meeting a target loss and a deadline
/// (or the fastest within a budget), by the exact planner, brute force or the paper's sliding window;
/// with --confidence, the cheapest cluster shown to meet the deadline under spot revocations with that
/// probability (revocation/chance_constrained.hpp). A catalog with per-zone spot prices is planned in every
/// Availability Zone and the cheapest zone kept (all of a run in one zone), or in the one --zone pins.
/// With --catalog given once per region, every zone of every region is planned and the cheapest kept
/// (region_choice.hpp), or the region --region pins; --data-region R --dataset-gb G adds the cost of
/// reading the dataset once from region R, G x --transfer-usd-per-gb, to every other region.
/// Prices older than --max-price-age get the warning `catalog show` gives (price_age.hpp). The
/// confidence table lists every plan the search simulated, in cost order.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <spotdnn/availability_zone.hpp>
#include <spotdnn/io/plan_document.hpp>
#include <spotdnn/io/plan_json.hpp>
#include <spotdnn/io/revocation_json.hpp>
#include <spotdnn/limits.hpp>
#include <spotdnn/plan/brute_force.hpp>
#include <spotdnn/plan/exact.hpp>
#include <spotdnn/plan/sliding_window.hpp>
#include <spotdnn/region_choice.hpp>
#include <spotdnn/revocation/chance_constrained.hpp>
#include <spotdnn/units.hpp>

#include "command.hpp"
#include "confidence_choice.hpp"
#include "csv_output.hpp"
#include "interruption_options.hpp"
#include "options.hpp"
#include "price_age.hpp"
#include "progress_line.hpp"
#include "revocations_option.hpp"
#include "table.hpp"
#include "transfer_options.hpp"
#include "zone_option.hpp"

namespace spotdnn::cli {

class PlanCommand : public Command {
 public:
  void attach(CLI::App& parent) override {
    subcommand_ = parent.add_subcommand("plan", "find the cheapest cluster meeting a target loss and a deadline");
    subcommand_->add_option("--target-loss", target_loss_, "training loss to reach")->required();
    add_duration_option(*subcommand_, "--deadline", deadline_s_,
                        "training-time limit: seconds or a duration (2600, 45m, 1h30m); optional with --budget");
    subcommand_->add_option("--algorithm", algorithm_text_, "exact (default), sliding-window (the paper's heuristic) or brute-force")
        ->default_str("exact");
    subcommand_->add_option("--budget", budget_usd_, "budget mode: the fastest plan costing at most this many USD");
    subcommand_->add_option("--max-workers", max_workers_, "at most this many workers in total");
    subcommand_
        ->add_option("--search-steps", search_steps_,
                     "the exact planner's work limit per search (a step is one instance type looked at by one bound, "
                     "10–30 ns); a search that reaches it answers with the best plan found and a proven bound on the "
                     "optimum (status feasible), or undecided")
        ->default_str(std::to_string(kDefaultPlanSearchSteps))
        ->check(CLI::Range(std::int64_t(1), kMaxPlanSearchSteps));
    subcommand_
        ->add_option("--min-placement-score", min_placement_score_,
                     "leave out the pools (type in a zone) whose AWS Spot Placement Score in the catalog is below this (1 to 10)")
        ->check(CLI::Range(1, 10));
    subcommand_->add_option("--keep", keep_text_,
                            "existing instances that must stay, e.g. p3.2xlarge=1,g3.8xlarge=2 (or ; between entries)");
    subcommand_->add_option("--on-demand", on_demand_text_,
                            "price these types on-demand, e.g. p3.2xlarge,g3.8xlarge (or ; between entries)");
    subcommand_->add_flag("--no-ps-cost", no_ps_cost_, "leave the parameter server out of the cost (as the paper does)");
    subcommand_->add_option("--confidence", confidence_,
                            "the cheapest plan shown to meet the deadline under spot revocations with at least this "
                            "probability, e.g. 0.9 (a sequential Monte Carlo test; see --tolerance and --error-rate)")
        ->check(open_range(0, 1));
    subcommand_->add_option("--tolerance", tolerance_,
                            "with --confidence: opt in to accepting a plan shown to reach only the level minus this (an "
                            "indifference margin; default 0: a plan accepted is shown to reach the level itself)")
        ->default_str("0")
        ->check(CLI::Range(0.0, 1.0));
    subcommand_->add_option("--error-rate", error_rate_,
                            "with --confidence: the probability that any decision of the search is wrong")
        ->default_str("0.05")
        ->check(open_range(0, 1));
    subcommand_->add_option("--max-scenarios", max_scenarios_,
                            "with --confidence: at most this many Monte Carlo scenarios per candidate plan (a plan still "
                            "undecided then is passed over and counted)")
        ->default_str("200000")
        ->check(CLI::Range(1, kMaxScenarios));
    subcommand_->add_option("--max-events", max_events_,
                            "with --confidence: at most this many simulated events (instances drawn, revocations, joins) "
                            "per candidate plan; a plan whose next look would pass it stays undecided, is passed over and "
                            "counted, and the search goes on")
        ->default_str(std::to_string(kMaxSimulatedEvents))
        ->check(CLI::Range(1, int(kMaxSimulatedEvents)));
    subcommand_->add_option("--replacement", replacement_text_,
                            "with --confidence: after a revocation, none (the survivors finish) or same-type (one instance of "
                            "the lost type is requested again, in the same pool)")
        ->default_str("none");
    add_duration_option(*subcommand_, "--join-delay", join_delay_s_,
                        "with --confidence: from an instance being obtained to it training (0 allowed)", ZeroDuration::allowed)
        ->default_str("2m");
    subcommand_->add_option("--seed", seed_, "with --confidence: random seed (a whole number >= 0)")
        ->default_str("1")
        ->check(non_negative_whole_number());
    subcommand_
        ->add_option_function<std::string>("--scenarios",
                                           [](const std::string&) {
                                             throw CLI::ValidationError(
                                                 "--scenarios", "plan --confidence decides how many scenarios each plan needs; "
                                                                "cap them with --max-scenarios");
                                           })
        ->group("");
    subcommand_
        ->add_flag_callback("--lower-bound",
                            [] {
                              throw CLI::ValidationError("--lower-bound", "plan --confidence always decides by exact bounds "
                                                                          "now; see --tolerance and --error-rate");
                            })
        ->group("");
    add_zone_option(*subcommand_, zone_,
                    "plan in this Availability Zone only (default: plan in every zone the catalog prices and keep the "
                    "cheapest; a run lives in one zone and launches in its subnet)");
    subcommand_->add_option("--region", region_,
                            "with --catalog given once per region: plan in this region only (default: plan in every "
                            "region and keep the cheapest)");
    transfer_.add_to(*subcommand_);
    interruption_.add_to(*subcommand_);
    revocations_.add_to(*subcommand_);
    model_.several_catalogs = true;
    model_.add_to(*subcommand_);
    price_age_.add_to(*subcommand_);
    add_progress_options(*subcommand_, progress_mode_);
    add_format_option(*subcommand_, format_);
  }

  int run(std::ostream& out) override {
    transfer_.read(*subcommand_, &region_);
    std::vector<PerformanceModel> models;
    for (const PerformanceModel& loaded : model_.load_each(*this)) {
      try {
        models.push_back(with_min_placement_score(loaded, min_placement_score_, [this](const std::string& w) { warn(w); }));
      } catch (const usage_error& e) {
        if (model_.catalog_paths.size() <= 1) throw;
        throw usage_error("region " + loaded.catalog().region + ": " + e.what());
      }
    }
    across_regions_ = models.size() > 1 || !region_.empty() || transfer_.given;
    for (std::size_t i = 0; i < models.size(); ++i) {
      const std::string& region = models[i].catalog().region;
      if (const auto seen = region_index_.find(region); seen != region_index_.end()) {
        throw usage_error("--catalog: " + detail::quoted(model_.catalog_paths[seen->second]) + " and " +
                          detail::quoted(model_.catalog_paths[i]) + " are both catalogs of region " + detail::quoted(region) +
                          ": give one catalog per region");
      }
      region_index_[region] = i;
    }
    catalogs_.clear();
    for (const PerformanceModel& m : models) catalogs_.push_back(m.catalog());
    const auto algorithm = plan_algorithm_from_string(algorithm_text_);
    if (!algorithm) throw usage_error("--algorithm = \"" + algorithm_text_ + "\": expected exact, sliding-window or brute-force");
    if (!deadline_s_ && !budget_usd_) throw usage_error("give --deadline DURATION (or --budget USD for the fastest plan)");
    Slo slo;
    slo.target_loss = target_loss_;
    if (deadline_s_) slo.deadline_s = *deadline_s_;
    PlanOptions options;
    options.charge_parameter_server = !no_ps_cost_;
    options.budget_usd = budget_usd_;
    options.max_workers = max_workers_;
    options.max_search_steps = search_steps_;
    if (!keep_text_.empty()) {
      const Cluster keep = Cluster::parse(keep_text_);
      for (const auto& [type, count] : keep.counts()) options.minimum_counts[type] = count;
    }
    for (const std::string& type : split(on_demand_text_)) options.markets[type] = Market::on_demand;

    require_zone_not_empty(*subcommand_, zone_);
    if (models.size() == 1 && region_.empty()) (void)model_in_zone(models.front(), zone_);  // an unknown --zone: one line, exit 2
    if (confidence_) return run_with_confidence(out, models, slo, options, *algorithm);
    std::string only_with_confidence;
    for (const char* option : {"--revocations", "--replacement", "--join-delay", "--tolerance", "--error-rate", "--max-scenarios", "--max-events", "--seed"}) {
      if (subcommand_->count(option) > 0) only_with_confidence += (only_with_confidence.empty() ? "" : ", ") + std::string(option);
    }
    if (!only_with_confidence.empty()) {
      throw usage_error(only_with_confidence + ": only with --confidence (they set up its Monte Carlo search); a plan "
                        "without --confidence is the deterministic one");
    }

    std::string unproven;  // the first zone (region) whose exact search stopped at its step limit, and why
    auto choice = choose_region(
        catalogs_,
        [&](const Catalog& catalog, const std::string& zone, double transfer_usd) {
          const PerformanceModel& region_model = models[region_index_.at(catalog.region)];
          PlanOptions zone_options = options;
          if (options.budget_usd && transfer_usd > 0) {
            zone_options.budget_usd = *options.budget_usd - transfer_usd;
            if (!(*zone_options.budget_usd > 0)) return plan_candidate(budget_spent_on_transfer(catalog.region, slo, options, transfer_usd));
          }
          if (auto missing = kept_type_missing(region_model.catalog(), catalog, zone, slo, zone_options)) {
            return plan_candidate(std::move(*missing));
          }
          const PerformanceModel in_zone(region_model.workload(), catalog);
          switch (*algorithm) {
            case PlanAlgorithm::brute_force: return plan_candidate(plan_brute_force(in_zone, slo, zone_options));
            case PlanAlgorithm::sliding_window: return plan_candidate(plan_sliding_window(in_zone, slo, zone_options));
            case PlanAlgorithm::exact: break;
          }
          return noted_plan_candidate(plan_exact(in_zone, slo, zone_options), zone.empty() ? catalog.region : zone, unproven);
        },
        region_, zone_, transfer_.cost_function());
    mark_unproven_choice(choice, unproven);
    for (const PerformanceModel& m : models) warn_stale_prices(m);  // once the question is answered: bad input stays one line on stderr
    const PerformanceModel chosen = model_in_zone(models[choice.catalog_index], choice.zone);
    const PlanResult& r = choice.result;
    if (format_ == OutputFormat::json) {
      io::Json document = io::plan_document(r, chosen, choice.zone);
      add_transfer_keys(document, choice, r.has_plan() ? std::optional<double>(r.prediction.cost_usd) : std::nullopt);
      out << document.dump(2) << '\n';
    } else if (format_ == OutputFormat::csv) {
      CsvTable csv;
      add_plan_columns(csv, std::string(to_string(r.algorithm)), r);
      csv.add("zone", choice.zone);
      if (!chosen.catalog().placement_scores.empty()) csv.add("placement_scores", placement_scores_csv_text(chosen.catalog(), choice.zone, r.cluster));
      for (auto& [name, value] : transfer_csv_columns(choice, r.has_plan() ? std::optional<double>(r.prediction.cost_usd) : std::nullopt)) {
        csv.add(name, value);
      }
      csv.print(out);
    } else {
      print_table(out, chosen, r, where_lines(choice), transfer_rows(choice, r.has_plan() ? r.prediction.cost_usd : 0.0),
                  choice.zone);
    }
    return r.has_plan() ? 0 : kExitNoAnswer;
  }

 private:
  int run_with_confidence(std::ostream& out, const std::vector<PerformanceModel>& models, const Slo& slo, const PlanOptions& options,
                          PlanAlgorithm algorithm) {
    if (budget_usd_ || !deadline_s_ || algorithm != PlanAlgorithm::exact) {
      throw usage_error("--confidence needs a --deadline and the exact planner (no --budget, no --algorithm)");
    }
    ConfidencePlanOptions c;
    c.confidence = *confidence_;
    c.tolerance = tolerance_;
    c.error_rate = error_rate_;
    c.max_scenarios = max_scenarios_;
    c.initial_scenarios = std::min(c.initial_scenarios, max_scenarios_);
    c.max_simulated_events = max_events_;
    c.plan = options;
    c.interruption = interruption_.options();  // a type some candidate uses without a hazard: one line, exit 2
    c.simulate.seed = seed_;
    c.simulate.threads = 0;
    c.simulate.join_delay_s = join_delay_s_;
    if (replacement_text_ == "same-type") {
      c.simulate.replacement = Replacement::same_type;
    } else if (replacement_text_ != "none") {
      throw usage_error("--replacement = " + detail::quoted(replacement_text_) + ": expected none or same-type");
    }
    const std::shared_ptr<const RevocationModel> revocations = revocations_.load();
    ProgressLine progress(progress_mode_);
    c.progress = progress.callback();
    const auto choice = choose_confidence_plan(models, slo, c, revocations, region_, zone_, transfer_.cost_function());
    for (const PerformanceModel& m : models) warn_stale_prices(m);  // once the question is answered: bad input stays one line on stderr
    const PerformanceModel chosen = model_in_zone(models[choice.catalog_index], choice.zone);
    const ConfidencePlanResult& r = choice.result;
    const std::optional<double> plan_cost = r.has_plan() ? std::optional<double>(r.prediction.cost_usd) : std::nullopt;
    // What the probabilities rest on: the types of the plans shown (the confidence plan, else the
    // deterministic one), fitted or constant-rate.
    std::vector<bool> in_use(chosen.worker_types().size(), false);
    const Cluster& shown = r.has_plan() ? r.cluster : r.deterministic.cluster;
    for (std::size_t k = 0; k < in_use.size(); ++k) in_use[k] = shown.count(chosen.worker_types()[k].name) > 0;
    std::vector<std::string> spread;
    const FittedRevocations fitted = fitted_revocations(revocations, chosen, choice.zone, in_use, &spread);
    for (const std::string& w : spread) warn(w);
    const CalibrationNote calibration =
        calibration_note(fitted, chosen, InterruptionModel(chosen, c.interruption), in_use, revocations_.path);
    if (format_ == OutputFormat::json) {
      io::Json document = io::plan_document(r, chosen, choice.zone);
      add_transfer_keys(document, choice, plan_cost);
      document["calibration"] = calibration.to_json();
      out << document.dump(2) << '\n';
    } else if (format_ == OutputFormat::csv) {
      print_confidence_csv(out, r, calibration, transfer_csv_columns(choice, plan_cost));
    } else {
      print_confidence_table(out, chosen, slo, r, where_lines(choice), choice.zone, max_events_);
      for (const auto& [name, value] : transfer_rows(choice, plan_cost.value_or(0.0))) out << "  " << name << ": " << value << '\n';
      out << "  " << calibration.line() << '\n';
      for (const std::string& a : calibration.assumptions) out << "    assumes: " << a << '\n';
    }
    return r.has_plan() ? 0 : kExitNoAnswer;
  }

  /// The infeasible budget plan of a region where reading the dataset costs the whole budget.
  static PlanResult budget_spent_on_transfer(const std::string& region, const Slo& slo, const PlanOptions& options, double transfer_usd) {
    PlanResult r;
    r.status = Status::infeasible;
    r.reason = InfeasibleReason::over_budget;
    r.objective = PlanObjective::min_time;
    r.target_loss = slo.target_loss;
    r.deadline_s = slo.deadline_s;
    r.budget_usd = options.budget_usd;
    r.parameter_server_charged = options.charge_parameter_server;
    r.message = "reading the dataset in " + region + " costs " + format_usd(transfer_usd) + " (data transfer), the whole budget of " +
                format_usd(*options.budget_usd) + ": nothing is left for the cluster";
    return r;
  }

  /// The table's lines about where the plan runs: "  region: NOTE" when planning across regions (or with
  /// --region or --data-region), else "  zone: NOTE" when the catalog has zone prices, as one region did.
  template <class Result>
  [[nodiscard]] std::string where_lines(const RegionChoice<Result>& choice) const {
    if (across_regions_) return "  region: " + choice.note + "\n\n";
    return choice.zone.empty() ? std::string() : "  zone: " + choice.zone_note + "\n\n";
  }

  /// The figures rows of the data transfer: its cost and the total (plan cost + transfer); none without --data-region.
  template <class Result>
  [[nodiscard]] std::vector<std::pair<std::string, std::string>> transfer_rows(const RegionChoice<Result>& choice, double plan_cost_usd) const {
    return transfer_.rows(choice.region, choice.extra_cost_usd, plan_cost_usd);
  }

  /// The CSV columns of planning across regions: region (when across regions), then data_region,
  /// dataset_gb, transfer_cost_usd and total_cost_usd (with --data-region).
  template <class Result>
  [[nodiscard]] std::vector<std::pair<std::string, std::string>> transfer_csv_columns(const RegionChoice<Result>& choice,
                                                                                      const std::optional<double>& plan_cost_usd) const {
    std::vector<std::pair<std::string, std::string>> columns;
    if (!across_regions_) return columns;
    columns.emplace_back("region", choice.region);
    for (auto& column : transfer_.csv_columns(choice.extra_cost_usd, plan_cost_usd)) columns.push_back(std::move(column));
    return columns;
  }

  /// The plan document's keys of planning across regions (`region` is already the catalog's):
  /// `region_choice` (the note) across regions; data_region, dataset_gb, transfer_usd_per_gb,
  /// transfer_cost_usd and total_cost_usd (null without a plan) with --data-region.
  template <class Result>
  void add_transfer_keys(io::Json& document, const RegionChoice<Result>& choice, const std::optional<double>& plan_cost_usd) const {
    if (!across_regions_) return;
    document["region_choice"] = choice.note;
    transfer_.add_keys(document, choice.extra_cost_usd, plan_cost_usd);
  }

  /// The most rows the confidence table shows; more simulated plans show the first ones and the last.
  static constexpr std::size_t kConfidenceRowsShown = 20;

  /// "all 6 in the table above", "the first 19 and the last in the table above (all in --format json)":
  /// which of the `n` simulated plans the confidence table shows.
  static std::string shown_text(std::size_t n, bool cut) {
    if (n == 0) return "none simulated";
    if (!cut) return n == 1 ? "it is in the table above" : "all " + std::to_string(n) + " in the table above";
    return "the first " + std::to_string(kConfidenceRowsShown - 1) + " and the last in the table above (all in --format json)";
  }

  /// The stale-price warnings `catalog show` gives (price_age.hpp), for every type of the catalog.
  void warn_stale_prices(const PerformanceModel& model) const {
    for (const std::string& stale : price_age_.warnings(model.catalog())) warn(stale);
  }

  /// "0.8977 [0.8954, 0.8999]".
  static std::string interval_text(const ProbabilityEstimate& p) {
    return fmt::format("{:.4f} [{:.4f}, {:.4f}]", p.estimate, p.lower, p.upper);
  }

  static void print_confidence_table(std::ostream& out, const PerformanceModel& model, const Slo& slo, const ConfidencePlanResult& r,
                                     const std::string& where, const std::string& zone, int max_events) {
    out << fmt::format("spotdnn plan (confidence {}): {} on {}, target loss {}, deadline {}\n\n", detail::format_number(r.confidence),
                       model.workload().name, model.catalog().region, detail::format_number(slo.target_loss),
                       format_duration(slo.deadline_s));
    out << where;
    if (r.status == Status::target_met_at_start) {
      out << "  " << to_string(r.status) << ": " << r.message << '\n';
      return;
    }
    // Every plan simulated, in cost order (the first kConfidenceRowsShown - 1 and the last when there are
    // more): the line below the table counts the same plans.
    TextTable plans({"#", "plan", "cluster", "cost without revocations", "P(meets deadline) [exact interval]", "scenarios", "decision"}, 3);
    const std::size_t n = r.simulated.size();
    const bool cut = n > kConfidenceRowsShown;
    for (std::size_t i = 0; i < n; ++i) {
      if (cut && i + 1 == kConfidenceRowsShown) {
        plans.add_row({"...", fmt::format("{} more, in --format json", n - kConfidenceRowsShown), "", "", "", "", ""});
      }
      if (cut && i + 1 >= kConfidenceRowsShown && i + 1 < n) continue;
      const ConfidenceCandidate& c = r.simulated[i];
      std::string label;
      if (i == 0 && deterministic_candidate(r) != nullptr) label = "deterministic (exact)";
      if (i + 1 == n && r.has_plan()) label = label.empty() ? "with confidence" : label + ", with confidence";
      plans.add_row({std::to_string(i + 1), label, c.cluster.to_string(), format_usd(c.cost_usd), interval_text(c.probability),
                     std::to_string(c.probability.trials),
                     c.decision == ConfidenceDecision::falls_short ? "falls short"
                     : c.work_limited                              ? "undecided (work limit)"
                                                                   : std::string(to_string(c.decision))});
    }
    if (n > 0) plans.print(out);
    if (r.has_plan()) {
      out << fmt::format("\n  the plan trains {} samples ({:.1f} iterations of weighted batch {:.1f}) in {} without revocations\n",
                         detail::format_count(r.prediction.samples_to_train), r.prediction.iterations, r.prediction.weighted_batch,
                         format_duration(r.prediction.training_time_s));
    }
    out << fmt::format(
        "\n  level {0}, tolerance {1}: a plan is accepted when its exact lower bound exceeds {2}. Error rate {3}: with\n"
        "  probability >= {4}, every plan accepted has P >= {2} and every plan passed over as falling short has P < {0}.\n",
        detail::format_number(r.confidence), detail::format_number(r.tolerance), detail::format_number(r.confidence - r.tolerance),
        detail::format_number(r.error_rate), detail::format_number(1 - r.error_rate));
    const std::string work_limited =
        r.candidates_work_limited == 0
            ? std::string()
            : fmt::format(" ({} of them at the work limit of {} events, --max-events)", r.candidates_work_limited, max_events);
    out << fmt::format("  {} of {} candidate plans simulated in cost order, {} undecided at the cap of {} scenarios{}; {} scenarios in all\n",
                       r.candidates_simulated, r.candidates, r.candidates_undecided, r.max_scenarios, work_limited, r.scenarios_simulated);
    out << "  " << shown_text(n, cut);
    if (r.candidates > r.candidates_simulated) {
      const std::size_t rest = r.candidates - r.candidates_simulated;
      out << fmt::format("; the other {} cost more and {} not simulated{}", rest, rest == 1 ? "was" : "were",
                         r.has_plan() ? ": the search stops at the first plan shown to meet the level" : "");
    }
    out << '\n';
    // The message repeats the table for a feasible plan; it explains the rest.
    if (!r.has_plan() || r.candidates_undecided > 0) out << "  " << r.message << '\n';
    print_estimated_lines(out, r.cluster, model.workload());
    print_placement_score_line(out, model.catalog(), zone, r.has_plan() ? r.cluster : r.deterministic.cluster);
  }

  /// One row per plan shown (the deterministic plan, then the confidence plan); no plan: the header alone.
  static void print_confidence_csv(std::ostream& out, const ConfidencePlanResult& r, const CalibrationNote& calibration,
                                   const std::vector<std::pair<std::string, std::string>>& extra) {
    std::vector<std::string> header = {"plan",        "status",      "cluster", "workers", "cost_usd",
                                       "training_time_s", "probability", "lower",   "upper",   "scenarios",
                                       "decision",    "confidence",  "tolerance", "error_rate", "calibrated"};
    for (const auto& column : extra) header.push_back(column.first);
    std::vector<std::vector<std::string>> rows;
    auto row = [&](const std::string& label, const ConfidenceCandidate& c) {
      rows.push_back({label, std::string(to_string(r.status)), csv_cluster(c.cluster), std::to_string(c.cluster.total_workers()),
                      csv_number(c.cost_usd), csv_number(c.training_time_s), csv_number(c.probability.estimate),
                      csv_number(c.probability.lower), csv_number(c.probability.upper), std::to_string(c.probability.trials),
                      std::string(to_string(c.decision)), csv_number(r.confidence), csv_number(r.tolerance),
                      csv_number(r.error_rate), calibration.calibrated ? "true" : "false"});
      for (const auto& column : extra) rows.back().push_back(column.second);
    };
    if (const ConfidenceCandidate* d = deterministic_candidate(r)) row("deterministic", *d);
    if (r.has_plan()) row("confidence", r.simulated.back());
    auto line = [&out](const std::vector<std::string>& fields) {
      for (std::size_t i = 0; i < fields.size(); ++i) out << (i == 0 ? "" : ",") << csv_field(fields[i]);
      out << '\n';
    };
    line(header);
    for (const auto& fields : rows) line(fields);
  }

  /// The deterministic plan's record in the search (candidate 1), or nullptr.
  static const ConfidenceCandidate* deterministic_candidate(const ConfidencePlanResult& r) {
    if (r.simulated.empty() || !r.deterministic.has_plan() || !(r.simulated.front().cluster == r.deterministic.cluster)) {
      return nullptr;
    }
    return &r.simulated.front();
  }

  /// One CSV row of a deterministic plan.
  static void add_plan_columns(CsvTable& csv, const std::string& label, const PlanResult& r) {
    const bool has = r.has_plan();
    const Prediction& p = r.prediction;
    csv.add("plan", label);
    csv.add("status", std::string(to_string(r.status)));
    csv.add("objective", std::string(to_string(r.objective)));
    csv.add("target_loss", csv_number(r.target_loss));
    csv.add("deadline_s", csv_number(r.deadline_s));
    csv.add("budget_usd", r.budget_usd ? csv_number(*r.budget_usd) : std::string());
    csv.add("ps_charged", r.parameter_server_charged ? "true" : "false");
    csv.add("cluster", csv_cluster(r.cluster));
    csv.add("workers", has ? std::to_string(p.workers) : std::string());
    csv.add("training_time_s", has ? csv_number(p.training_time_s) : std::string());
    csv.add("cost_usd", has ? csv_number(p.cost_usd) : std::string());
    csv.add("worker_cost_usd", has ? csv_number(p.worker_cost_usd) : std::string());
    csv.add("ps_cost_usd", has ? csv_number(p.ps_cost_usd) : std::string());
    csv.add("iterations", has ? csv_number(p.iterations) : std::string());
    csv.add("samples_per_s", has ? csv_number(p.samples_per_s) : std::string());
    csv.add("weighted_batch", has ? csv_number(p.weighted_batch) : std::string());
    csv.add("samples_to_train", has ? csv_number(p.samples_to_train) : std::string());
    csv.add("message", r.message);
  }

  /// Entries of a list separated by ',' or ';' (as --cluster takes them); empty entries are skipped.
  static std::vector<std::string> split(const std::string& text) {
    std::vector<std::string> parts;
    std::string part;
    for (char c : text + ",") {
      if (c != ',' && c != ';') {
        part += c;
      } else if (!part.empty()) {
        parts.push_back(part);
        part.clear();
      }
    }
    return parts;
  }

  static void print_table(std::ostream& out, const PerformanceModel& model, const PlanResult& r, const std::string& where,
                          const std::vector<std::pair<std::string, std::string>>& transfer, const std::string& zone) {
    out << fmt::format("spotdnn plan ({}): {} on {}, target loss {}", to_string(r.algorithm), model.workload().name,
                       model.catalog().region, detail::format_number(r.target_loss));
    if (std::isfinite(r.deadline_s)) out << fmt::format(", deadline {}", format_duration(r.deadline_s));
    if (r.budget_usd) out << fmt::format(", budget {}", format_usd(*r.budget_usd));
    out << "\n\n";
    out << where;
    if (!r.has_plan()) {
      out << "  " << to_string(r.status);
      if (r.reason != InfeasibleReason::none) out << " (" << to_string(r.reason) << ")";
      out << ": " << r.message << '\n';
      return;
    }
    const Prediction& p = r.prediction;
    TextTable types({"type", "count", "GPUs", "iteration [s]", "samples/s", "$/h each", "market"});
    for (const WorkerTypeBreakdown& t : p.per_type) {
      types.add_row({t.type, std::to_string(t.count), std::to_string(t.gpus), fmt::format("{:.4f}", t.iteration_time_s),
                     fmt::format("{:.1f}", t.samples_per_s), fmt::format("{:.4f}", t.price_usd_per_hour),
                     std::string(to_string(t.market))});
    }
    types.print(out);
    TextTable figures({"figure", "value"}, 2);
    figures.add_row({"status", fmt::format("{} ({})", to_string(r.status), to_string(r.objective))});
    figures.add_row({"workers", std::to_string(p.workers)});
    figures.add_row({"training time", format_duration(p.training_time_s)});
    if (std::isfinite(r.deadline_s)) {
      figures.add_row({"under the deadline by", fmt::format("{} ({:.1f}% of the deadline)", format_duration(r.deadline_slack_s),
                                                            100.0 * r.deadline_slack_s / r.deadline_s)});
    }
    figures.add_row({"cost", format_usd(p.cost_usd)});
    figures.add_row({"  workers", format_usd(p.worker_cost_usd)});
    figures.add_row({"  parameter server", fmt::format("{} ({} on-demand, {})", format_usd(p.ps_cost_usd),
                                                       model.catalog().parameter_server.type,
                                                       p.parameter_server_charged ? "charged" : "not charged")});
    for (const auto& [name, value] : transfer) figures.add_row({name, value});
    figures.add_row({"iterations", fmt::format("{:.1f}", p.iterations)});
    figures.add_row({"throughput", fmt::format("{:.1f} samples/s", p.samples_per_s)});
    figures.add_row({"weighted batch", fmt::format("{:.1f} samples", p.weighted_batch)});
    figures.add_row({"samples to train", detail::format_count(p.samples_to_train)});
    for (const QuotaGroupUse& g : r.quota_groups) {
      figures.add_row({"quota group " + g.code, fmt::format("{} of {} vCPUs ({}, {})", g.used_vcpus, g.limit_vcpus,
                                                            to_string(g.market), g.name)});
    }
    out << '\n';
    figures.print(out);
    out << '\n' << "  " << r.message << '\n';
    print_estimated_lines(out, r.cluster, model.workload());
    print_placement_score_line(out, model.catalog(), zone, r.cluster);
  }

  double target_loss_ = 0;
  std::optional<double> deadline_s_;
  std::optional<double> budget_usd_;
  std::optional<int> max_workers_;
  std::int64_t search_steps_ = kDefaultPlanSearchSteps;
  std::string algorithm_text_ = "exact";
  std::string keep_text_;
  std::string on_demand_text_;
  bool no_ps_cost_ = false;
  std::optional<double> confidence_;
  std::optional<int> min_placement_score_;
  double tolerance_ = 0;
  double error_rate_ = 0.05;
  int max_scenarios_ = 200000;
  int max_events_ = int(kMaxSimulatedEvents);
  std::uint64_t seed_ = 1;
  std::string replacement_text_ = "none";
  double join_delay_s_ = 120;
  InterruptionCliOptions interruption_;
  RevocationsCliOption revocations_;
  ProgressMode progress_mode_ = ProgressMode::automatic;
  OutputFormat format_ = OutputFormat::table;
  ModelOptions model_;
  PriceAgeOptions price_age_;
  std::string zone_;
  std::string region_;
  TransferOptions transfer_;      ///< --data-region, --dataset-gb, --transfer-usd-per-gb
  bool across_regions_ = false;   ///< several catalogs, --region or --data-region: the region line and keys
  std::map<std::string, std::size_t> region_index_;  ///< region -> index in the models
  std::vector<Catalog> catalogs_;  ///< one per region, as planned
};

}  // namespace spotdnn::cli
