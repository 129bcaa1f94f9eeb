// SPDX-License-Identifier: MIT
// Test fixture of the moto serverless tests: the serverless plan they launch, the Lambda execution role
// created in moto, a serverless-only AWS configuration, and the aws CLI environment of a region.
#pragma once

#include <regex>
#include <string>

#include <spotdnn/launcher/aws_config.hpp>
#include <spotdnn/launcher/serverless_launch_plan.hpp>

#include "support/moto_launch.hpp"

namespace spotdnn::test {

/// A run id as launch prints it.
inline const std::regex kServerlessRunIdPattern("^[0-9]{8}-[0-9]{6}-[0-9a-f]{6}$");

/// 3 functions of 1024 MB, 2 aggregating, 100 iterations of 1.5 s (timeout 210 s).
inline launcher::ServerlessLaunchPlan moto_serverless_plan() {
  launcher::ServerlessLaunchPlan p;
  p.profile_name = "moto";
  p.epochs = 1;
  p.deadline_s = 600;
  p.workers = 3;
  p.memory_mb = 1024;
  p.aggregators = 2;
  p.batch = 32;
  p.non_aggregator_batch = 40;
  p.iterations = 100;
  p.iteration_time_s = 1.5;
  p.training_time_s = 150;
  p.cost_usd = 0.01;
  return p;
}

/// Creates the execution role `name` (trusted by Lambda) in moto and returns its ARN.
inline std::string create_lambda_role(const MotoCloud& cloud, const std::string& name) {
  const std::string trust =
      R"({"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"lambda.amazonaws.com"},"Action":"sts:AssumeRole"}]})";
  return cloud.aws({"iam", "create-role", "--role-name", name, "--assume-role-policy-document", trust})["Role"]["Arn"].get<std::string>();
}

/// A serverless-only configuration in `region` with `role_arn`, bucket prefix "spotdnn-moto", and a tag
/// holding quotes and $(...).
inline launcher::AwsConfig moto_serverless_config(const std::string& region, const std::string& role_arn) {
  launcher::AwsConfig c;
  c.region = region;
  launcher::ServerlessConfig s;
  s.image_uri = "123456789012.dkr.ecr." + region + ".amazonaws.com/fasdl:latest";
  s.role_arn = role_arn;
  s.bucket_prefix = "spotdnn-moto";
  c.serverless = s;
  c.tags = {{"Project", "it's \"serverless\" $(touch PWNED)"}};
  return c;
}

/// The aws CLI environment of `cloud` in `region`.
inline AwsTestEnv env_in(const MotoCloud& cloud, const std::string& region) {
  return aws_test_env(cloud.server().url(), cloud.env().cli, region);
}

}  // namespace spotdnn::test
