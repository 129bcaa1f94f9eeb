// SPDX-License-Identifier: MIT
// Launch a cluster on AWS: turn counts per type into the bash script that starts it (printed, not run).
#include <cstdio>
#include <string>

#include <spotdnn/launcher.hpp>
#include <spotdnn/presets.hpp>

int main() {
  using namespace spotdnn;
  launcher::LaunchPlan plan;
  plan.plan_id = "resnet110-demo";
  plan.cluster = Cluster{{"p3.2xlarge", 2}, {"g3.8xlarge", 4}};

  launcher::AwsConfig aws;
  aws.region = "us-east-1";
  aws.subnet_id = "subnet-0123456789abcdef0";  // one subnet: one VPC, one availability zone
  aws.security_group_ids = {"sg-0123456789abcdef0"};
  aws.image_id = "ami-0123456789abcdef0";
  aws.checkpoint_s3_uri = "s3://my-team-bucket/resnet110";
  aws.training_command = "python3 train.py --ps \"$SPOTDNN_PS_PRIVATE_IP\"";

  const std::string script = launcher::launch_script(plan, presets::resnet110_catalog(), aws);
  std::fputs(script.c_str(), stdout);

  // Sanity check: spot workers of both types, an on-demand PS, and a teardown.
  const bool ok = script.find(R"("MarketType":"spot")") != std::string::npos &&
                  script.find("p3.2xlarge") != std::string::npos && script.find("g3.8xlarge") != std::string::npos &&
                  script.find("teardown") != std::string::npos && script.find("request-spot-instances") == std::string::npos;
  return ok ? 0 : 1;
}
