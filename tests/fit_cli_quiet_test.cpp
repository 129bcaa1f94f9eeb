// SPDX-License-Identifier: MIT
// `spotdnn fit` keeps Ceres quiet: a fit whose start points Ceres cannot evaluate (it used to print glog's
// "Terminating: Residual and Jacobian evaluation failed." once per start, at ERROR, plus glog's
// "Logging before InitGoogleLogging()" warning) still succeeds with nothing on stderr. `spotdnn fit` runs
// the separate program spotdnn-fit; running it through `spotdnn` checks that hand-over too.
#include <doctest/doctest.h>

#include <string>

#include <spotdnn/io/json.hpp>
#include <spotdnn/presets.hpp>

#include "support/run_command.hpp"

using spotdnn::test::run_cli;
using spotdnn::test::write_temp_file;

namespace {

std::string quoted(const std::string& path) { return "'" + path + "'"; }

/// The preset workload moved far from the throughput trace: strong contention, one type 10× slower and
/// one 10× faster than measured. Some of the fit's start points then make a compute time negative, which
/// the residual refuses, and Ceres logs the refusal.
std::string far_workload_file() {
  spotdnn::Workload workload = spotdnn::presets::resnet110_workload();
  workload.contention = {3.0, 0.0};
  *workload.profiles.at("g3.16xlarge").iteration_time_s *= 10.0;
  *workload.profiles.at("p2.8xlarge").iteration_time_s *= 0.1;
  return write_temp_file("fit_cli_quiet_workload.json", spotdnn::io::to_json(workload).dump());
}

}  // namespace

TEST_CASE("spotdnn fit throughput prints no Ceres or glog log lines on stderr") {
  const std::string trace = std::string(SPOTDNN_TEST_SOURCE_DIR) + "/tests/hostile/throughput.csv";
  const auto r = run_cli("fit throughput --trace " + quoted(trace) + " --workload " + quoted(far_workload_file()) +
                         " --free 'alpha1,iteration_time_s[g4dn.4xlarge],iteration_time_s[g3.16xlarge]," +
                         "iteration_time_s[p3.2xlarge],b_ps,b_req'");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("converged") != std::string::npos);
  CHECK(r.err.empty());
}

TEST_CASE("spotdnn fit keeps the CLI's error behaviour: bad input exits 2 with one line naming spotdnn fit") {
  const auto missing = run_cli("fit throughput --trace /nonexistent/trace.csv --free alpha1");
  CHECK(missing.exit_code == 2);
  CHECK(missing.out.empty());
  CHECK(missing.err_lines() == 1);
  CHECK(missing.err.rfind("spotdnn fit: error: ", 0) == 0);

  const auto unknown_option = run_cli("fit throughput --no-such-option");
  CHECK(unknown_option.exit_code == 2);
  CHECK(unknown_option.err_lines() == 1);
  CHECK(unknown_option.err.rfind("spotdnn fit throughput: error: ", 0) == 0);
}
