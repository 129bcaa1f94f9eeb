#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/aws_calls.hpp The aws calls a command runs itself: `aws ARGS --region R --output json
/// [--endpoint-url "$AWS_ENDPOINT_URL"]` as an argument vector (no shell), stdin /dev/null, each stream
/// capped, a time limit, AWS_PAGER emptied; a failure is an error that quotes aws's first error line.

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include <spotdnn/errors.hpp>
#include <spotdnn/io/json.hpp>
#include <spotdnn/limits.hpp>

#include "process.hpp"

namespace spotdnn::cli {

/// How to run aws: the program, the region, the time limit of each call.
struct AwsCalls {
  std::string program = "aws";
  std::string region;
  double timeout_s = 120;

  /// The argument vector of `aws ARGS` with the global options after the command (where the aws CLI
  /// takes them too).
  [[nodiscard]] std::vector<std::string> argv(const std::vector<std::string>& args) const {
    std::vector<std::string> a = {program};
    a.insert(a.end(), args.begin(), args.end());
    a.insert(a.end(), {"--region", region, "--output", "json"});
    if (const char* endpoint = std::getenv("AWS_ENDPOINT_URL"); endpoint != nullptr && *endpoint != '\0') {
      a.insert(a.end(), {"--endpoint-url", endpoint});
    }
    return a;
  }

  /// Runs `aws ARGS`; its output is capped at `max_output_bytes`.
  [[nodiscard]] ProcessResult run(const std::vector<std::string>& args, std::size_t max_output_bytes = std::size_t(kMaxJsonFileBytes)) const {
    ProcessOptions options;
    options.timeout = std::chrono::milliseconds(static_cast<long long>(timeout_s * 1000));
    options.max_output_bytes = max_output_bytes;
    options.environment_overrides = {"AWS_PAGER="};
    return run_process(argv(args), options);
  }

  /// Why `result` of the call named `call` ("aws ec2 describe-instances") failed, in one line; "" when it
  /// succeeded.
  [[nodiscard]] std::string failure(const ProcessResult& result, const std::string& call) const {
    if (!result.started) {
      return detail::escape_for_message("cannot run " + detail::quoted(program) + ": " + result.start_error +
                                        " (install the AWS CLI, or give its path with --aws-cli)");
    }
    if (result.succeeded()) return "";
    const std::string line = result.first_error_line();
    return detail::escape_for_message(call + " " + result.outcome() + (line.empty() ? std::string() : ": " + line));
  }

  /// Runs `aws ARGS` and parses its JSON output. A failing call throws spotdnn::resource_error (exit 1)
  /// quoting aws's first error line; output that is not JSON throws spotdnn::invalid_argument (exit 2).
  [[nodiscard]] io::Json json(const std::vector<std::string>& args, const std::string& call) const {
    const ProcessResult result = run(args);
    if (const std::string why = failure(result, call); !why.empty()) throw resource_error(why);
    return io::parse_json(result.out, call);
  }
};

}  // namespace spotdnn::cli
