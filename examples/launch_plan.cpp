// SPDX-License-Identifier: MIT
// Launch a plan on AWS: turn what a plan document says into the bash script that starts a run, and
// show the status and teardown scripts of a run (printed, not run).
#include <cstdio>
#include <string>

#include <spotdnn/launcher.hpp>

int main() {
  using namespace spotdnn;
  launcher::LaunchPlan plan;  // what launcher::read_launch_plan_file() reads from `spotdnn plan --format json`
  plan.region = "us-east-1";
  plan.workload_name = "resnet110";
  plan.target_loss = 0.8;
  plan.deadline_s = 7200;
  plan.parameter_server_type = "m5.xlarge";
  plan.workers = {{"p3.2xlarge", 2, 1, Market::spot}, {"g3.8xlarge", 4, 2, Market::on_demand}};

  launcher::AwsConfig aws;
  aws.region = "us-east-1";
  aws.subnet_id = "subnet-0123456789abcdef0";  // one subnet: one VPC, one availability zone
  aws.security_group_ids = {"sg-0123456789abcdef0"};
  aws.image_id = "ami-0123456789abcdef0";
  aws.checkpoint_s3_uri = "s3://my-team-bucket/resnet110";
  aws.training_command = "/usr/bin/python3 /opt/spotdnn/ps_train.py --steps 200000";

  const std::string script = launcher::launch_script(plan, aws);
  std::fputs(script.c_str(), stdout);
  const std::string status = launcher::status_script("20261124-101500-3fa9c2", aws);

  // Sanity check: spot p3 workers, on-demand g3 workers and PS, a fresh run id per run, tags by run.
  const bool ok = script.find(R"("MarketType":"spot")") != std::string::npos &&
                  script.find("RUN_ID=\"$(date -u") != std::string::npos && script.find("spotdnn:run") != std::string::npos &&
                  status.find("Name=tag:spotdnn:run,Values=$RUN_ID") != std::string::npos &&
                  script.find("request-spot-instances") == std::string::npos;
  return ok ? 0 : 1;
}
