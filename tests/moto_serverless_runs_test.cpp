// SPDX-License-Identifier: MIT
// The serverless status and teardown scripts run with bash and the real aws CLI against moto_server
// (Lambda, S3 and IAM), on runs the serverless launch script made (SPOTDNN_INVOKE=0: moto 5.2 cannot run
// image functions): status lists the run's functions and bucket; teardown deletes them (the bucket emptied
// first) and nothing of another run, nor a function of the run's name tagged for another run, nor the run's
// bucket once its tag is gone; a second teardown finds nothing (exit 3), and so does status.
// Each case prints "skipped: <why>" (ctest reports it skipped) when moto_server or an aws CLI is missing.
#include <doctest/doctest.h>

#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <spotdnn/launcher/serverless_launch_script.hpp>
#include <spotdnn/launcher/serverless_run_scripts.hpp>

#include "support/launcher_fixtures.hpp"
#include "support/moto_launch.hpp"
#include "support/moto_serverless.hpp"

using namespace spotdnn;
using nlohmann::json;
using test::MotoCloud;
using test::ProcessResult;
using test::create_lambda_role;
using test::env_in;
using test::moto_serverless_config;
using test::moto_serverless_plan;

namespace {


/// Runs the serverless launch script (SPOTDNN_INVOKE=0); returns the run id after checking exit 0.
std::string launch(const MotoCloud& cloud, const launcher::AwsConfig& config, const std::string& name) {
  const ProcessResult r = cloud.run_script(name, launcher::serverless_launch_script(moto_serverless_plan(), config), "", {"SPOTDNN_INVOKE=0"});
  INFO("launch stderr: ", r.err);
  REQUIRE(r.exit_code == 0);
  const std::string id = test::run_id_of(r.out);
  CAPTURE(r.out);
  REQUIRE(std::regex_match(id, test::kServerlessRunIdPattern));
  return id;
}

/// The names of the functions Lambda lists in `env`'s region, one per line (a string, so a failed check shows them).
std::string function_names(const test::AwsTestEnv& env) {
  std::set<std::string> names;
  const json listed = test::aws_json(env, {"lambda", "list-functions"});
  for (const json& f : listed["Functions"]) names.insert(f["FunctionName"].get<std::string>());
  std::string out;
  for (const std::string& name : names) out += name + "\n";
  return out;
}

std::set<std::string> bucket_names(const test::AwsTestEnv& env) {
  std::set<std::string> out;
  const json listed = test::aws_json(env, {"s3api", "list-buckets"});
  for (const json& b : listed.value("Buckets", json::array())) out.insert(b["Name"].get<std::string>());
  return out;
}

/// The names of the functions of `run`, one per line, with `others` (sorted as function_names sorts them).
std::string run_functions(const std::string& run, std::set<std::string> others = {}) {
  for (const char* rank : {"0", "1", "2"}) others.insert("spotdnn-" + run + "-" + rank);
  std::string out;
  for (const std::string& name : others) out += name + "\n";
  return out;
}

/// Puts object `key` with `body` into `bucket`.
void put_object(const MotoCloud& cloud, const test::AwsTestEnv& env, const std::string& bucket, const std::string& key,
                const std::string& body) {
  const std::string file = cloud.dir() / "object.bin";
  test::write_text(file, body);
  (void)test::aws_json(env, {"s3api", "put-object", "--bucket", bucket, "--key", key, "--body", file});
}

}  // namespace

TEST_CASE("moto serverless status and teardown: the run's functions and bucket listed, then deleted, another run's left, twice harmless") {
  SPOTDNN_SKIP_WITHOUT_MOTO();
  MotoCloud cloud;
  const std::string role = create_lambda_role(cloud, "fasdl");
  const launcher::AwsConfig config = moto_serverless_config("us-east-1", role);
  const std::string first = launch(cloud, config, "first.sh");
  const std::string second = launch(cloud, config, "second.sh");
  REQUIRE(first != second);
  const test::AwsTestEnv& env = cloud.env();
  const std::string first_bucket = "spotdnn-moto-" + first;
  const std::string second_bucket = "spotdnn-moto-" + second;
  put_object(cloud, env, first_bucket, "chunks/rank 0/it's.bin", "0123456789");
  put_object(cloud, env, first_bucket, "state/1", "abc");
  put_object(cloud, env, second_bucket, "state/0", "keep me");
  // A function with the first run's name scheme that the second run's tag claims: neither run deletes it.
  const std::string impostor = "spotdnn-" + first + "-7";
  (void)test::aws_json(env, {"lambda", "create-function", "--function-name", impostor, "--package-type", "Image", "--code",
                             "ImageUri=" + config.serverless->image_uri, "--role", role, "--tags", "spotdnn:run=" + second});

  const std::string status = launcher::serverless_status_script(first, config);
  const std::string teardown = launcher::serverless_teardown_script(first, config);
  const ProcessResult listed = cloud.run_script("status.sh", status);
  INFO("status stderr: ", listed.err);
  INFO("status stdout: ", listed.out);
  REQUIRE(listed.exit_code == 0);
  for (int rank = 0; rank < 3; ++rank) {
    const std::regex row("(^|\n)" + std::to_string(rank) + " +" + (rank < 2 ? "aggregator" : "worker") + " +spotdnn-" + first + "-" +
                         std::to_string(rank) + " +1024 +210 +Active +[0-9]{4}-[0-9]{2}-[0-9]{2}T[^ \n]+\n");
    CHECK_MESSAGE(std::regex_search(listed.out, row), rank);
  }
  CHECK(listed.out.find("BUCKET " + first_bucket + ": 2 objects, 13 bytes\n") != std::string::npos);
  CHECK(listed.out.find("spotdnn run " + first + ": 3 functions (3 Active), bucket " + first_bucket + " (2 objects, 13 bytes)\n") !=
        std::string::npos);
  CHECK(listed.err.find(impostor + " is not tagged spotdnn:run=" + first + " (spotdnn:run: " + second + ")") != std::string::npos);
  CHECK(listed.out.find(second) == std::string::npos);

  CHECK(function_names(env) == run_functions(first, {"spotdnn-" + second + "-0", "spotdnn-" + second + "-1", "spotdnn-" + second + "-2", impostor}));
  const ProcessResult deleted = cloud.run_script("teardown.sh", teardown);
  INFO("teardown stderr: ", deleted.err);
  REQUIRE(deleted.exit_code == 0);
  CHECK(deleted.out.find("deleted bucket " + first_bucket + " (2 objects, 13 bytes)\n") != std::string::npos);
  CHECK(deleted.out.find("spotdnn run " + first + ": deleted 3 functions and 1 bucket\n") != std::string::npos);
  CHECK(function_names(env) == run_functions(second, {impostor}));
  const std::set<std::string> buckets = bucket_names(env);
  CHECK(buckets.count(first_bucket) == 0);
  CHECK(buckets.count(second_bucket) == 1);
  CHECK(test::aws_json(env, {"s3api", "list-objects-v2", "--bucket", second_bucket})["Contents"].size() == 1);
  CHECK(test::pwned_files(cloud.dir().path()).empty());

  const ProcessResult again = cloud.run_script("teardown.sh", teardown);
  CHECK(again.exit_code == 3);
  CHECK(again.out.empty());
  CHECK(again.err.find("nothing deleted") != std::string::npos);
  CHECK(function_names(env) == run_functions(second, {impostor}));
  const ProcessResult gone = cloud.run_script("status.sh", status);
  CHECK(gone.exit_code == 3);
  CHECK(gone.err.find("no functions or bucket for run " + first) != std::string::npos);

  // The second run's teardown takes its own three functions and bucket, not the impostor of the first's name.
  const ProcessResult second_teardown = cloud.run_script("teardown2.sh", launcher::serverless_teardown_script(second, config));
  INFO("second teardown stderr: ", second_teardown.err);
  CHECK(second_teardown.exit_code == 0);
  CHECK(function_names(env) == impostor + "\n");
  CHECK(bucket_names(env).count(second_bucket) == 0);
}

TEST_CASE("moto serverless teardown in eu-central-1: a bucket whose run tag is gone is left, the functions still go") {
  SPOTDNN_SKIP_WITHOUT_MOTO();
  MotoCloud cloud;
  const std::string role = create_lambda_role(cloud, "fasdl");
  const launcher::AwsConfig config = moto_serverless_config("eu-central-1", role);
  const std::string run = launch(cloud, config, "frankfurt.sh");
  const test::AwsTestEnv frankfurt = env_in(cloud, "eu-central-1");
  const std::string bucket = "spotdnn-moto-" + run;
  put_object(cloud, frankfurt, bucket, "x", "12345");
  (void)test::aws_run(frankfurt, {"s3api", "delete-bucket-tagging", "--bucket", bucket});

  // The us-east-1 configuration sees nothing of a run in eu-central-1.
  const launcher::AwsConfig virginia = moto_serverless_config("us-east-1", role);
  const ProcessResult elsewhere = cloud.run_script("virginia.sh", launcher::serverless_teardown_script(run, virginia));
  CHECK(elsewhere.exit_code == 3);
  CHECK(function_names(frankfurt) == run_functions(run));

  const ProcessResult r = cloud.run_script("teardown.sh", launcher::serverless_teardown_script(run, config));
  INFO("stderr: ", r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("spotdnn run " + run + ": deleted 3 functions and 0 bucket\n") != std::string::npos);
  CHECK(r.err.find("the bucket " + bucket + " is not tagged spotdnn:run=" + run + " (spotdnn:run: untagged)") != std::string::npos);
  CHECK(function_names(frankfurt).empty());
  CHECK(bucket_names(frankfurt).count(bucket) == 1);

  // Tagged again, it is the run's: emptied and deleted.
  (void)test::aws_run(frankfurt, {"s3api", "put-bucket-tagging", "--bucket", bucket, "--tagging",
                                  R"({"TagSet":[{"Key":"spotdnn:run","Value":")" + run + R"("}]})"});
  const ProcessResult retagged = cloud.run_script("teardown.sh", launcher::serverless_teardown_script(run, config));
  INFO("stderr: ", retagged.err);
  CHECK(retagged.exit_code == 0);
  CHECK(retagged.out.find("deleted bucket " + bucket + " (1 objects, 5 bytes)\n") != std::string::npos);
  CHECK(bucket_names(frankfurt).count(bucket) == 0);
}
