#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/watch_command.hpp `spotdnn watch --run ID --plan PLAN.json --aws AWS.json`: the controller of
/// one run. Every --interval it lists the run's instances (`aws ec2 describe-instances`, by the exact
/// run tag), reads the job's progress (`aws s3 cp CHECKPOINT_S3_URI/progress.json -`), asks the decision
/// core (launcher/controller.hpp) what to do under --policy, appends the decision to the journal before
/// acting, and launches replacements or additions with `aws ec2 run-instances` itself: no shell, a client
/// token per launch, the tags and user data of `launch --join` (launcher/run_instances_request.hpp). It
/// never terminates anything. --dry-run prints the launches instead and writes no journal; --once
/// decides once and exits. With an AWS configuration of several regions, the run's region is the plan's
/// (or --region's, which must then be the plan's).
///
/// Output: one line per decision on stderr as it goes ("spotdnn watch: ..."); on stdout, when it stops,
/// the outcome (a table line, or with --format json one document). Exit 0: the target loss was reached
/// (or, with --once, the run is still being watched); 1: an aws call or the journal failed; 2: bad input;
/// 3: the watch ended without the target: the deadline passed first, or the run has no parameter server.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <map>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include <spotdnn/io/aws/timestamp.hpp>
#include <spotdnn/launcher/aws_config_json.hpp>
#include <spotdnn/launcher/controller.hpp>
#include <spotdnn/launcher/run_cost.hpp>
#include <spotdnn/launcher/launch_plan_json.hpp>
#include <spotdnn/launcher/run_instances_json.hpp>
#include <spotdnn/launcher/run_instances_request.hpp>
#include <spotdnn/launcher/run_progress_json.hpp>
#include <spotdnn/launcher/watch_journal.hpp>

#include "aws_calls.hpp"
#include "command.hpp"
#include "options.hpp"
#include "script_output.hpp"
#include "zone_option.hpp"

namespace spotdnn::cli {

/// An aws call of one look that failed on AWS's side (throttled, refused, timed out): retried at the next
/// look, unlike a program that cannot run or an answer that is not EC2's.
class FailedLook : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class WatchCommand : public Command {
 public:
  /// Looks in a row whose aws calls fail before a watch that keeps going gives up (exit 1).
  static constexpr int kMaxFailedLooks = 10;

  void attach(CLI::App& parent) override {
    subcommand_ = parent.add_subcommand(
        "watch", "keep a run to its deadline: watch its instances and progress, replace lost workers, re-plan, or fall back "
                 "to on-demand in time (--policy); every decision goes to a journal first");
    add_run_option(*subcommand_, run_id_);
    subcommand_->add_option("--plan", plan_path_, "the plan document the run was launched from (spotdnn plan --format json)")
        ->required()
        ->check(non_empty_path());
    add_aws_option(*subcommand_, aws_path_);
    add_run_region_option(*subcommand_, region_, "the plan's region");
    subcommand_->add_option("--policy", policy_text_,
                            "same-type (ask for the lost type again; after --same-type-wait, other types the plan allows), "
                            "replan (the exact re-plan from the measured progress), guard (replan on spot, switch to on-demand "
                            "while the deadline can still be met on it alone, with --guard-margin to spare); default same-type")
        ->type_name("POLICY")
        ->check(CLI::IsMember({"same-type", "replan", "guard"}));
    subcommand_->add_option("--max-cost", max_cost_usd_, "stop adding capacity once the run would cost more than this (USD)")
        ->type_name("USD")
        ->check(finite_range(0, 1e9));
    add_duration_option(*subcommand_, "--guard-margin", settings_.guard_margin_s,
                        "guard: switch to on-demand while the work left fits the time left less this (default 30m)")
        ->default_str("30m");
    add_duration_option(*subcommand_, "--join-delay", settings_.join_delay_s,
                        "from request to training for a new instance (default 2m)")
        ->default_str("2m");
    add_duration_option(*subcommand_, "--same-type-wait", settings_.same_type_wait_s,
                        "same-type: how long a lost type may stay missing before other types are tried (default 10m)")
        ->default_str("10m");
    add_duration_option(*subcommand_, "--interval", interval_s_, "time between two looks at the run (default 60s)")->default_str("60s");
    subcommand_->add_option("--journal", journal_path_,
                            "the append-only journal (JSON lines) a restarted watch resumes from (default "
                            "./spotdnn-watch-RUN_ID.jsonl)")
        ->check(non_empty_path());
    subcommand_->add_flag("--dry-run", dry_run_, "print the launches instead of running them; write no journal");
    subcommand_->add_flag("--once", once_, "decide once, act, and exit (for cron or a test)");
    subcommand_->add_option("--now", now_text_,
                            "with --once: decide as of this time, ISO 8601 UTC (default: the clock), e.g. to ask with "
                            "--dry-run what the controller would do at a given moment")
        ->type_name("TIME");
    subcommand_->add_option("--aws-cli", aws_.program, "the aws program to run (default: aws on PATH)")
        ->type_name("PATH")
        ->check(non_empty_path());
    add_duration_option(*subcommand_, "--aws-timeout", aws_.timeout_s, "time limit of each aws call; then it is killed (default 120s)")
        ->default_str("120s");
    model_.add_to(*subcommand_);
    add_format_option(*subcommand_, format_, {OutputFormat::table, OutputFormat::json});
  }

  int run(std::ostream& out) override {
    std::vector<std::pair<std::string, std::string>> files = model_.file_options();
    files.emplace_back("--plan", plan_path_);
    files.emplace_back("--aws", aws_path_);
    require_one_stdin(files);
    require_run_id_option("--run", run_id_);
    if (!(interval_s_ <= 24 * 3600)) throw usage_error("--interval = " + detail::format_number(interval_s_) + " s: at most 24h");
    if (!(aws_.timeout_s <= 24 * 3600)) throw usage_error("--aws-timeout = " + detail::format_number(aws_.timeout_s) + " s: at most 24h");
    std::optional<double> fixed_now_unix_s;
    if (subcommand_->count("--now") > 0) {
      if (!once_) throw usage_error("--now goes with --once: a watch that keeps going runs on the clock");
      fixed_now_unix_s = double(io::aws::parse_aws_timestamp(now_text_, "watch", "--now"));
    }

    const launcher::LaunchPlan plan = read_json_input(
        "--plan", plan_path_,
        [](const io::Json& json, const std::string& file) { return read_plan(json, file); },
        [](const std::string& file) { return read_plan(io::read_json_file(file), file); });
    const launcher::AwsConfig aws = read_run_aws_input(aws_path_, region_, plan.region);
    if (aws.region != plan.region) {
      const std::string what = region_.empty() ? "--aws: the AWS configuration's region " : "--region ";
      throw usage_error(what + aws.region + " is not the plan's (" + plan.region +
                        "): watch the run with the configuration it was launched with");
    }
    if (aws.checkpoint_s3_uri.empty()) {
      throw usage_error("--aws: checkpoint_s3_uri is empty: watch reads the job's progress.json from there");
    }
    const PerformanceModel model = model_in_zone(model_.load(*this), plan.zone);
    aws_.region = aws.region;
    if (journal_path_.empty()) journal_path_ = "spotdnn-watch-" + run_id_ + ".jsonl";

    settings_.run_id = run_id_;
    settings_.policy = *launcher::watch_policy_from_string(policy_text_);  // checked by --policy's IsMember
    settings_.deadline_s = plan.deadline_s;
    settings_.target_loss = plan.target_loss;
    settings_.planned = plan.workers;
    settings_.max_cost_usd = max_cost_usd_;

    std::optional<launcher::Controller> controller;
    std::optional<launcher::RunProgress> progress;  // the last progress read; none: nothing trained yet
    bool resumed = false;
    int failed_looks = 0;  // looks in a row that an aws call failed
    while (true) {
      const double now_unix_s = fixed_now_unix_s.value_or(now_s());
      std::vector<launcher::RunInstance> instances;
      ProgressRead read;
      try {
        instances = describe_run();
        if (!controller) {
          const launcher::RunInstance* ps = first_parameter_server(instances);
          if (ps == nullptr) {
            write_outcome(out, "run_gone", "run " + run_id_ + " lists no parameter server in " + aws.region + ": nothing to watch", {});
            return kExitNoAnswer;
          }
          settings_.start_unix_s = ps->launch_time_unix_s;
          controller.emplace(model, settings_);
          resumed = open_journal(*controller, now_unix_s);
        }
        read = read_progress(aws);
        failed_looks = 0;
      } catch (const FailedLook& e) {
        // A throttled, refused or timed-out aws call: a watch left alone looks again, up to kMaxFailedLooks.
        if (once_ || ++failed_looks >= kMaxFailedLooks) throw resource_error(e.what());
        warn(std::string(e.what()) + " (" + std::to_string(failed_looks) + " looks in a row); looking again in " +
             detail::format_readable(interval_s_) + " s");
        std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<long long>(interval_s_ * 1000)));
        continue;
      }
      if (read.progress) progress = read.progress;
      // Launches the journal holds without an outcome (the previous watch stopped mid-launch), as they
      // were before this look: decide() records those EC2 lists by their token and fails those older than
      // the launch timeout; the rest are sent again with their token, once decide() has checked the listing.
      std::vector<std::string> unfinished_tokens;
      if (resumed) {
        for (const launcher::LaunchRequest& request : controller->unfinished_launches()) unfinished_tokens.push_back(request.token);
      }
      launcher::ControllerDecision decision = controller->decide(now_unix_s, instances, progress, spent_usd(model.catalog(), instances, now_unix_s));
      for (const auto& record : decision.journal) append(record);
      report(decision, instances, progress);
      std::vector<launcher::LaunchRequest> launches;
      if (decision.outcome == launcher::WatchOutcome::watching) {
        for (launcher::LaunchRequest& request : controller->unfinished_launches()) {
          if (std::find(unfinished_tokens.begin(), unfinished_tokens.end(), request.token) == unfinished_tokens.end()) continue;
          note("launch " + request.token + " has no instances yet: sending it again with the same client token");
          launches.push_back(std::move(request));
        }
      }
      resumed = false;
      launches.insert(launches.end(), decision.launches.begin(), decision.launches.end());
      // Every group of one look joins a world of the live instances and all the groups (as the join script).
      long world_size = 0;
      for (const launcher::RunInstance& i : instances) world_size += i.is_live() ? 1 : 0;
      for (const launcher::LaunchRequest& request : launches) world_size += request.group.count;
      std::vector<launcher::RunInstance> seen = instances;
      for (const launcher::LaunchRequest& request : launches) launch(*controller, request, seen, aws, plan, world_size, now_unix_s);
      if (decision.outcome != launcher::WatchOutcome::watching || once_) {
        return finish(out, decision, instances, progress);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<long long>(interval_s_ * 1000)));
    }
  }

 private:
  /// A plan document (a frontier or replan document is refused: watch keeps a run of one plan).
  static launcher::LaunchPlan read_plan(const io::Json& json, const std::string& file) {
    launcher::LaunchPlan plan = launcher::launch_plan_from_document(json, std::nullopt, "plan", "read_launch_plan_file(" + file + ")");
    if (plan.is_join()) {
      throw usage_error("--plan: " + file + " is a replan document; watch takes the plan document the run was launched from");
    }
    return plan;
  }

  static double now_s() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  }

  /// The run's instances as EC2 lists them (only those tagged with this run, checked again by the reader).
  std::vector<launcher::RunInstance> describe_run() const {
    const std::string call = "aws ec2 describe-instances";
    const ProcessResult result = aws_.run({"ec2", "describe-instances", "--filters", "Name=tag:" + std::string(launcher::kRunTag) + ",Values=" + run_id_});
    if (const std::string why = aws_.failure(result, call); !why.empty()) {
      if (!result.started || result.output_too_large) throw resource_error(why);
      throw FailedLook(why);
    }
    return launcher::run_instances_from_describe(io::parse_json(result.out, call), run_id_, "watch(" + call + ")");
  }

  /// The parameter server launched first (the training's start), in any state; null when none is listed.
  static const launcher::RunInstance* first_parameter_server(const std::vector<launcher::RunInstance>& instances) {
    const launcher::RunInstance* first = nullptr;
    for (const launcher::RunInstance& i : instances) {
      if (i.role == "ps" && (first == nullptr || i.launch_time_unix_s < first->launch_time_unix_s)) first = &i;
    }
    return first;
  }

  /// One read of the progress file: the progress, or none when S3 has no such object yet.
  struct ProgressRead {
    std::optional<launcher::RunProgress> progress;
  };

  /// The job's progress from CHECKPOINT_S3_URI/progress.json: none while the object is not there (the
  /// first checkpoint has not been synced). A failing aws call throws FailedLook (the look is retried); a file that is malformed, huge, hostile or another run's throws
  /// spotdnn::invalid_argument: the watch stops before deciding anything on it.
  ProgressRead read_progress(const launcher::AwsConfig& aws) const {
    std::string uri = aws.checkpoint_s3_uri;
    while (!uri.empty() && uri.back() == '/') uri.pop_back();
    uri += "/progress.json";
    const ProcessResult result = aws_.run({"s3", "cp", uri, "-"}, launcher::kMaxRunProgressBytes + 1);
    if (!result.succeeded()) {
      const std::string line = result.first_error_line();
      const bool missing = result.started && !result.timed_out && !result.output_too_large &&
                           (line.find("(404)") != std::string::npos || line.find("Not Found") != std::string::npos ||
                            line.find("NoSuchKey") != std::string::npos);
      if (missing) return {};
      if (result.output_too_large) {
        detail::fail("watch", "progress", uri, "is larger than a progress file (" + std::to_string(launcher::kMaxRunProgressBytes) + " bytes)");
      }
      const std::string why = "cannot read the progress: " + aws_.failure(result, "aws s3 cp " + uri);
      if (!result.started) throw resource_error(why);
      throw FailedLook(why);
    }
    launcher::RunProgress progress = launcher::parse_run_progress(result.out, uri);
    if (progress.run_id != run_id_) {
      detail::fail("watch", "progress.run_id", detail::quoted(progress.run_id),
                   uri + " holds another run's progress (watching " + run_id_ + "): give each run its own checkpoint_s3_uri");
    }
    return {std::move(progress)};
  }

  /// What the run's instances have cost so far at the catalog's prices, per second: the figure
  /// --max-cost is held against. Spot instances at the catalog's spot price of their type; on-demand ones
  /// and the PS at the on-demand price `spotdnn cost` uses (launcher::on_demand_price_usd_per_hour). A
  /// type the catalog does not price counts at the highest hourly price it lists (never less).
  static double spent_usd(const Catalog& catalog, const std::vector<launcher::RunInstance>& instances, double now_unix_s) {
    double highest = catalog.parameter_server.price_usd_per_hour;
    for (const InstanceType& t : catalog.instance_types) highest = std::max({highest, t.price_usd_per_hour, t.on_demand_price_usd_per_hour});
    double total = 0;
    for (const launcher::RunInstance& i : instances) {
      const double end = i.end_time_unix_s.value_or(i.is_live() ? now_unix_s : i.launch_time_unix_s);
      const double seconds = std::max(0.0, end - i.launch_time_unix_s);
      std::optional<double> price;
      if (i.market == Market::on_demand) {
        price = launcher::on_demand_price_usd_per_hour(catalog, i.type);
      } else if (const std::optional<std::size_t> k = catalog.index_of(i.type); k && catalog.instance_types[*k].market == Market::spot) {
        price = catalog.instance_types[*k].price_usd_per_hour;
      }
      total += price.value_or(highest) * seconds / 3600.0;
    }
    return total;
  }

  /// Reads the journal and resumes from it, or starts a new one. Returns whether it resumed.
  bool open_journal(launcher::Controller& controller, double now_unix_s) {
    std::string warning;
    const std::vector<nlohmann::json> records = launcher::read_watch_journal(journal_path_, &warning);
    if (!warning.empty()) warn(warning);
    if (!records.empty()) {
      controller.resume(records);
      note("resumed from " + journal_path_ + " (" + std::to_string(records.size()) + " records)");
      return true;
    }
    append(controller.start_record(now_unix_s));
    return false;
  }

  /// Runs one launch (or prints it with --dry-run) and journals its outcome. `seen` gains the new
  /// instances, so that several launches of one decision take consecutive ranks.
  void launch(launcher::Controller& controller, const launcher::LaunchRequest& request, std::vector<launcher::RunInstance>& seen,
              const launcher::AwsConfig& aws, const launcher::LaunchPlan& plan, long world_size, double now_unix_s) {
    const launcher::RunInstance* ps = nullptr;  // decide() has checked there is one live PS; the join needs it running
    for (const launcher::RunInstance& i : seen) {
      if (i.role == "ps" && i.state == "running") ps = &i;
    }
    launcher::JoinRequest join;
    join.run_id = run_id_;
    join.group = request.group;
    join.ps_private_ip = ps != nullptr ? ps->private_ip : std::string();
    join.world_size = world_size;
    join.rank_base = launcher::next_rank_base(seen);
    join.zone = plan.zone;
    join.client_token = request.token;
    const std::string what = std::to_string(request.group.count) + " x " + request.group.type + " (" +
                             std::string(to_string(request.group.market)) + ", ranks " + std::to_string(join.rank_base) + "..." +
                             std::to_string(join.rank_base + request.group.count - 1) + ")";
    std::vector<std::string> args;
    try {
      args = launcher::run_instances_arguments(aws, join);
    } catch (const spotdnn::invalid_argument& e) {
      // No PS address yet (pending) and the like: the launch waits for the next look.
      const std::string why = std::string("cannot launch ") + what + ": " + e.what();
      warn(why);
      if (!dry_run_) append(controller.launch_failed(request.token, why, now_unix_s));
      return;
    }
    if (dry_run_) {
      std::string line = "would run: aws";
      for (std::size_t k = 0; k < args.size(); ++k) {
        const bool user_data = k > 0 && args[k - 1] == "--user-data";
        line += " " + (user_data ? "<user data: " + std::to_string(args[k].size()) + " bytes>" : shell_word(args[k]));
      }
      note(line);
      seen.insert(seen.end(), std::size_t(request.group.count), pending_worker(request, join.rank_base, "", now_unix_s));
      return;
    }
    note("launching " + what + ": " + request.reason);
    args.insert(args.begin(), "ec2");
    const ProcessResult result = aws_.run(args);
    const std::string failure = aws_.failure(result, "aws ec2 run-instances");
    std::vector<std::string> ids;
    std::string bad;
    if (failure.empty()) {
      try {
        const io::Json answer = io::parse_json(result.out, "aws ec2 run-instances");
        if (!answer.is_array() || answer.size() != std::size_t(request.group.count)) {
          bad = "aws ec2 run-instances answered " + io::JsonObjectReader::excerpt(answer) + ", not " + std::to_string(request.group.count) + " instance IDs";
        } else {
          for (const io::Json& id : answer) {
            if (!id.is_string() || !launcher::is_instance_id(id.get<std::string>())) {
              bad = "aws ec2 run-instances answered an instance ID that is not one: " + io::JsonObjectReader::excerpt(id);
              break;
            }
            ids.push_back(id.get<std::string>());
          }
        }
      } catch (const spotdnn::invalid_argument& e) {
        bad = e.what();
      }
    }
    if (!failure.empty() || !bad.empty()) {
      const std::string why = failure.empty() ? bad : failure;
      warn("launch " + request.token + " failed: " + why);
      append(controller.launch_failed(request.token, why, now_unix_s));
      return;
    }
    append(controller.launch_succeeded(request.token, ids, now_unix_s));
    note("launched " + what + ": " + join_words(ids));
    for (const std::string& id : ids) seen.push_back(pending_worker(request, join.rank_base, id, now_unix_s));
  }

  /// A worker `request` started (or, with --dry-run, would start): what the next launch of the same
  /// decision counts for its ranks and world size.
  static launcher::RunInstance pending_worker(const launcher::LaunchRequest& request, long rank_base, const std::string& id,
                                              double now_unix_s) {
    launcher::RunInstance added;
    added.instance_id = id;
    added.type = request.group.type;
    added.market = request.group.market;
    added.role = "worker";
    added.state = "pending";
    added.launch_time_unix_s = now_unix_s;
    added.rank_base = rank_base;
    added.action_token = request.token;
    return added;
  }

  /// `word` as bash reads it back: bare when it holds only characters bash leaves alone, quoted otherwise.
  static std::string shell_word(const std::string& word) {
    const bool bare = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || std::string_view("._/:=@%+,-").find(c) != std::string_view::npos;
    });
    return bare ? word : launcher::shell_quote(word);
  }

  static std::string join_words(const std::vector<std::string>& words) {
    std::string s;
    for (const std::string& w : words) s += (s.empty() ? "" : " ") + w;
    return s;
  }

  void append(const nlohmann::ordered_json& record) {
    if (!dry_run_) launcher::append_watch_journal(journal_path_, record);
  }

  /// One line on stderr: "spotdnn watch: run ID: TEXT".
  void note(const std::string& text) const {
    std::fprintf(stderr, "spotdnn watch: run %s: %s\n", run_id_.c_str(), detail::escape_for_message(text).c_str());
  }

  /// The decision's line: workers dependable, the progress, the notes.
  void report(const launcher::ControllerDecision& decision, const std::vector<launcher::RunInstance>& instances,
              const std::optional<launcher::RunProgress>& progress) const {
    long workers = 0, dependable = 0;
    for (const launcher::RunInstance& i : instances) {
      if (i.role != "worker" || !i.is_live()) continue;
      ++workers;
      if (i.is_dependable()) ++dependable;
    }
    std::string line = std::to_string(dependable) + " workers dependable (" + std::to_string(workers - dependable) + " with a notice), ";
    line += progress && std::isfinite(progress->loss)
                ? "loss " + detail::format_number(progress->loss) + " at iteration " + detail::format_number(progress->iteration)
                : std::string("no progress published yet");
    line += decision.launches.empty() ? "; nothing to launch" : "; " + std::to_string(decision.launches.size()) + " launch(es)";
    note(line);
    for (const std::string& n : decision.notes) note(n);
  }

  int finish(std::ostream& out, const launcher::ControllerDecision& decision, const std::vector<launcher::RunInstance>& instances,
             const std::optional<launcher::RunProgress>& progress) {
    const std::string outcome(to_string(decision.outcome));
    std::string message;
    switch (decision.outcome) {
      case launcher::WatchOutcome::watching: message = "still running; the next watch resumes from " + journal_path_; break;
      case launcher::WatchOutcome::target_reached: message = "the target loss is reached"; break;
      case launcher::WatchOutcome::deadline_passed: message = "the deadline passed before the target loss was reached"; break;
      case launcher::WatchOutcome::run_gone: message = "the run has no parameter server any more: nothing to watch"; break;
    }
    nlohmann::ordered_json extra;
    extra["instances_listed"] = instances.size();
    extra["loss"] = progress && std::isfinite(progress->loss) ? nlohmann::ordered_json(progress->loss) : nlohmann::ordered_json(nullptr);
    extra["launches"] = decision.launches.size();
    write_outcome(out, outcome, message, extra);
    switch (decision.outcome) {
      case launcher::WatchOutcome::watching:
      case launcher::WatchOutcome::target_reached: return 0;
      case launcher::WatchOutcome::deadline_passed:
      case launcher::WatchOutcome::run_gone: return kExitNoAnswer;
    }
    return 0;
  }

  void write_outcome(std::ostream& out, const std::string& outcome, const std::string& message, const nlohmann::ordered_json& extra) const {
    if (format_ == OutputFormat::json) {
      nlohmann::ordered_json document;
      document["kind"] = "spotdnn.watch";
      document["schema_version"] = 1;
      document["run_id"] = run_id_;
      document["outcome"] = outcome;
      document["message"] = message;
      document["journal"] = dry_run_ ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(journal_path_);
      for (const auto& [key, value] : extra.items()) document[key] = value;
      out << document.dump(2) << "\n";
      return;
    }
    out << "spotdnn watch: run " << run_id_ << ": " << outcome << ": " << message << "\n";
  }

  std::string run_id_;
  std::string plan_path_;
  std::string aws_path_;
  std::string region_;  ///< --region (empty: not given)
  std::string journal_path_;
  std::string now_text_;
  std::string policy_text_ = "same-type";
  std::optional<double> max_cost_usd_;
  double interval_s_ = 60;
  bool dry_run_ = false;
  bool once_ = false;
  launcher::ControllerSettings settings_;
  AwsCalls aws_;
  ModelOptions model_;
  OutputFormat format_ = OutputFormat::table;
};

}  // namespace spotdnn::cli
