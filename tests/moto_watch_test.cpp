// SPDX-License-Identifier: MIT
// `spotdnn watch` end to end against a real moto_server with the real aws CLI: a run is planned
// (`spotdnn plan`, 45 min: 2 x p3.2xlarge and 1 x g3.8xlarge spot), launched with the script `spotdnn
// launch` writes, and watched. Workers are terminated through the EC2 API, several at once as real
// bursts are; the job's progress is a progress.json put into the checkpoint bucket, as the training
// example's sync puts it there. The controller must replace what was lost with the run's tags, ranks above
// the run and its action token, never launch twice (a second look, a restart from the journal, a
// restart that lost the record of a launch), switch to on-demand under the guard only when the
// progress falls behind, and `cost` must sum the run's instances. One moto_server serves every case;
// each prints "skipped: <why>" without moto_server or an aws CLI.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <spotdnn/launcher.hpp>

#include "support/launcher_fixtures.hpp"
#include "support/moto_launch.hpp"

using namespace spotdnn;
using nlohmann::json;
using test::MotoCloud;
using test::ProcessResult;

namespace {

namespace fs = std::filesystem;

/// The program's one moto_server, with the checkpoint bucket, the AWS configuration and the plan.
struct Cloud {
  std::unique_ptr<MotoCloud> moto;
  fs::path aws_path;
  fs::path plan_path;
};

ProcessResult spotdnn_in(const Cloud& cloud, const std::vector<std::string>& args) {
  return test::run_spotdnn(cloud.moto->env(), args, std::chrono::seconds(240));
}

/// Started on first use; null when moto or the aws CLI is missing.
Cloud* cloud() {
  static std::unique_ptr<Cloud> shared = [] {
    std::unique_ptr<Cloud> c;
    if (test::MotoServer::unavailable_reason()) return c;
    c = std::make_unique<Cloud>();
    c->moto = std::make_unique<MotoCloud>();
    const MotoCloud& moto = *c->moto;
    moto.aws({"s3api", "create-bucket", "--bucket", "spotdnn-ckpt"});
    c->aws_path = moto.dir().path() / "aws.json";
    test::write_text(c->aws_path, R"({"region": "us-east-1", "subnet_id": ")" + moto.subnet_id() + R"(", "security_group_ids": [")" +
                                      moto.security_group_id() +
                                      R"("], "image_id": "ami-0123456789abcdef0", "checkpoint_s3_uri": "s3://spotdnn-ckpt/runs",)" +
                                      R"( "parameter_server_type": "m5.xlarge", "training_command": "true"})");
    c->plan_path = moto.dir().path() / "plan.json";
    const ProcessResult plan = spotdnn_in(*c, {"plan", "--target-loss", "0.8", "--deadline", "45m", "--format", "json"});
    REQUIRE(plan.exit_code == 0);
    test::write_text(c->plan_path, plan.out);
    return c;
  }();
  return shared.get();
}

/// Launches a run of the plan with the script `spotdnn launch` writes; returns its id.
std::string launch_run(const Cloud& cloud) {
  const ProcessResult script = spotdnn_in(cloud, {"launch", "--plan", cloud.plan_path.string(), "--aws", cloud.aws_path.string()});
  REQUIRE(script.exit_code == 0);
  const ProcessResult r = cloud.moto->run_script("launch.sh", script.out);
  INFO("launch stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  const std::string id = test::run_id_of(r.out);
  REQUIRE(launcher::is_run_id(id));
  return id;
}

/// `spotdnn watch --once` of `run` with `extra` arguments.
ProcessResult watch_once(const Cloud& cloud, const std::string& run, const fs::path& journal, const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"watch", "--run", run, "--plan", cloud.plan_path.string(), "--aws", cloud.aws_path.string(),
                                   "--journal", journal.string(), "--once"};
  args.insert(args.end(), extra.begin(), extra.end());
  return spotdnn_in(cloud, args);
}

/// Puts a progress.json of `run` at `loss` into the checkpoint bucket, where the PS's sync puts it.
void publish_progress(const Cloud& cloud, const std::string& run, double loss, double iteration) {
  const fs::path file = cloud.moto->dir().path() / "progress.json";
  json progress = {{"kind", "spotdnn.progress"}, {"schema_version", 1}, {"run_id", run}, {"iteration", iteration},
                   {"loss", loss}, {"time_unix_s", 1.8e9}};
  test::write_text(file, progress.dump());
  REQUIRE(cloud.moto->aws_raw({"s3", "cp", file.string(), "s3://spotdnn-ckpt/runs/progress.json"}).exit_code == 0);
}

/// The journal's records, in order.
std::vector<json> journal_records(const fs::path& journal) {
  std::vector<json> records;
  std::istringstream in(test::moto_detail::read_file(journal));
  std::string line;
  while (std::getline(in, line)) records.push_back(json::parse(line));
  return records;
}

std::size_t count_events(const std::vector<json>& records, const std::string& event) {
  return std::size_t(std::count_if(records.begin(), records.end(), [&](const json& r) { return r["event"] == event; }));
}

bool is_live(const json& instance) {
  const std::string state = instance["State"]["Name"];
  return state == "pending" || state == "running";
}

}  // namespace

TEST_CASE("moto watch same-type: a burst of two spot workers is replaced once, with the run's tags, ranks above the run and a client token") {
  SPOTDNN_SKIP_WITHOUT_MOTO();
  REQUIRE_MESSAGE(fs::exists(test::spotdnn_cli_path()), "build spotdnn_cli first: " << test::spotdnn_cli_path());
  const Cloud& c = *cloud();
  const std::string run = launch_run(c);
  std::vector<std::string> p3;
  for (const json& i : c.moto->run_instances(run)) {
    if (i["InstanceType"] == "p3.2xlarge") p3.push_back(i["InstanceId"]);
  }
  REQUIRE(p3.size() == 2);
  c.moto->aws({"ec2", "terminate-instances", "--instance-ids", p3[0], p3[1]});  // a burst: both at once
  const fs::path journal = c.moto->dir().path() / ("same-type-" + run + ".jsonl");

  // --dry-run prints the launch and starts nothing, and writes no journal.
  const ProcessResult dry = watch_once(c, run, journal, {"--policy", "same-type", "--dry-run"});
  INFO("dry-run stderr: " << dry.err);
  CHECK(dry.exit_code == 0);
  CHECK(dry.err.find("would run: aws run-instances") != std::string::npos);
  CHECK(dry.err.find("--client-token") != std::string::npos);
  CHECK(!fs::exists(journal));
  CHECK(c.moto->run_instances(run).size() == 4);

  c.moto->server().start_recording();
  const ProcessResult first = watch_once(c, run, journal, {"--policy", "same-type"});
  INFO("watch stderr: " << first.err);
  REQUIRE(first.exit_code == 0);
  const std::vector<json> run_calls = c.moto->server().recorded_calls("RunInstances");
  c.moto->server().stop_recording();
  REQUIRE(run_calls.size() == 1);  // one launch of both replacements
  std::vector<json> added;
  for (const json& i : c.moto->run_instances(run)) {
    if (test::tags_of_resource(i).count("spotdnn:action") > 0) added.push_back(i);
  }
  REQUIRE(added.size() == 2);
  for (const json& i : added) {
    const auto tags = test::tags_of_resource(i);
    CHECK(i["InstanceType"] == "p3.2xlarge");
    CHECK(i.value("InstanceLifecycle", "") == "spot");
    CHECK(tags.at("spotdnn:run") == run);
    CHECK(tags.at("spotdnn:role") == "worker");
    CHECK(tags.at("spotdnn:market") == "spot");
    CHECK(tags.at("spotdnn:rank-base") == "4");  // PS 0, the terminated p3 1 and 2, g3 3: above every rank listed
    CHECK(run_calls[0]["params"].value("ClientToken", "") == tags.at("spotdnn:action"));  // EC2 starts them once
    const std::string user_data = c.moto->user_data_of(i["InstanceId"]);
    CHECK(user_data.find("SPOTDNN_RUN_ID='" + run + "'") != std::string::npos);
  }
  CHECK(test::tags_of_resource(added[0]).at("spotdnn:action") == test::tags_of_resource(added[1]).at("spotdnn:action"));
  std::vector<json> records = journal_records(journal);
  CHECK(records.front()["event"] == "start");
  CHECK(count_events(records, "launch") == 1);
  CHECK(count_events(records, "launched") == 1);

  // A second look (a restarted controller, resuming from the journal) launches nothing more.
  const ProcessResult second = watch_once(c, run, journal, {"--policy", "same-type"});
  INFO("second stderr: " << second.err);
  CHECK(second.exit_code == 0);
  CHECK(c.moto->run_instances(run).size() == 6);
  CHECK(count_events(journal_records(journal), "launch") == 1);

  // A controller that died after sending the launch and before recording it: the journal ends with the
  // launch record. The restart finds the instances by their token and records them, launching nothing.
  records = journal_records(journal);
  std::string cut;
  for (const json& r : records) {
    if (r["event"] == "launched") break;
    cut += r.dump() + "\n";
  }
  test::write_text(journal, cut);
  const ProcessResult restarted = watch_once(c, run, journal, {"--policy", "same-type"});
  INFO("restart stderr: " << restarted.err);
  CHECK(restarted.exit_code == 0);
  CHECK(c.moto->run_instances(run).size() == 6);
  records = journal_records(journal);
  CHECK(count_events(records, "launch") == 1);
  CHECK(count_events(records, "launched") == 0);
  CHECK(count_events(records, "listed") == 1);  // found by its token

  // cost sums the run's instances, the terminated ones and the replacements included.
  const ProcessResult cost = spotdnn_in(c, {"cost", "--run", run, "--aws", c.aws_path.string(), "--format", "json"});
  INFO("cost stderr: " << cost.err);
  REQUIRE(cost.exit_code == 0);
  const json bill = json::parse(cost.out);
  REQUIRE(bill["instances"].size() == 6);
  // moto's price history has no p3.2xlarge or g3.8xlarge rows: those rows say so and the totals leave them out.
  double sum = 0;
  std::size_t priced = 0;
  for (const json& row : bill["instances"]) {
    if (row["cost_usd"].is_null()) continue;
    sum += row["cost_usd"].get<double>();
    ++priced;
  }
  CHECK(priced >= 1);  // the on-demand parameter server at the catalog's price
  CHECK(bill["totals"]["complete"] == (priced == bill["instances"].size()));
  CHECK(bill["totals"]["cost_so_far_usd"].get<double>() == doctest::Approx(sum).epsilon(1e-12));
}

TEST_CASE("moto watch guard: on spot while the progress keeps up, on-demand once it falls behind, and never back") {
  SPOTDNN_SKIP_WITHOUT_MOTO();
  const Cloud& c = *cloud();
  const std::string run = launch_run(c);
  const fs::path journal = c.moto->dir().path() / ("guard-" + run + ".jsonl");
  // 45 min deadline, 20 min margin: on-demand capacity alone must be able to finish in 25 min less the join delay.
  const std::vector<std::string> guard = {"--policy", "guard", "--guard-margin", "20m"};

  publish_progress(c, run, 0.81, 6000);  // almost there: on-demand could finish the rest in minutes
  const ProcessResult keeping_up = watch_once(c, run, journal, guard);
  INFO("keeping up stderr: " << keeping_up.err);
  REQUIRE(keeping_up.exit_code == 0);
  CHECK(c.moto->run_instances(run).size() == 4);
  CHECK(count_events(journal_records(journal), "switch") == 0);

  publish_progress(c, run, 4.0, 10);  // far behind: the work left no longer fits the time left less the margin
  const ProcessResult behind = watch_once(c, run, journal, guard);
  INFO("behind stderr: " << behind.err);
  REQUIRE(behind.exit_code == 0);
  CHECK(count_events(journal_records(journal), "switch") == 1);
  std::vector<json> on_demand;
  for (const json& i : c.moto->run_instances(run)) {
    const auto tags = test::tags_of_resource(i);
    if (tags.count("spotdnn:action") == 0) continue;
    CHECK(i.value("InstanceLifecycle", "") != "spot");
    CHECK(tags.at("spotdnn:market") == "on-demand");
    on_demand.push_back(i);
  }
  CHECK(!on_demand.empty());

  // Every spot worker lost now: the guard has switched, so it never asks for spot again.
  for (const json& i : c.moto->run_instances(run)) {
    if (is_live(i) && i.value("InstanceLifecycle", "") == "spot") c.moto->aws({"ec2", "terminate-instances", "--instance-ids", i["InstanceId"]});
  }
  const ProcessResult after = watch_once(c, run, journal, guard);
  INFO("after stderr: " << after.err);
  CHECK(after.exit_code == 0);
  for (const json& i : c.moto->run_instances(run)) {
    if (test::tags_of_resource(i).count("spotdnn:action") > 0) CHECK(i.value("InstanceLifecycle", "") != "spot");
  }
  for (const json& r : journal_records(journal)) {
    if (r["event"] == "launch") CHECK(r["market"] == "on-demand");  // nor did it ask for spot in the journal
  }
}

TEST_CASE("moto watch: the target reached stops the controller (exit 0), and a run of another id is never touched") {
  SPOTDNN_SKIP_WITHOUT_MOTO();
  const Cloud& c = *cloud();
  const std::string run = launch_run(c);
  const std::string other = launch_run(c);
  const fs::path journal = c.moto->dir().path() / ("done-" + run + ".jsonl");
  publish_progress(c, run, 0.79, 7000);
  const ProcessResult done = watch_once(c, run, journal, {"--policy", "replan", "--format", "json"});
  INFO("stderr: " << done.err);
  CHECK(done.exit_code == 0);
  const json outcome = json::parse(done.out);
  CHECK(outcome["outcome"] == "target-reached");
  CHECK(count_events(journal_records(journal), "stop") == 1);
  CHECK(c.moto->run_instances(other).size() == 4);

  // An unknown run: no parameter server listed, nothing to watch, exit 3, no journal.
  const fs::path none = c.moto->dir().path() / "none.jsonl";
  const ProcessResult unknown = watch_once(c, "20261127-000000-abcdef", none, {});
  CHECK(unknown.exit_code == 3);
  CHECK(!fs::exists(none));
}
