// SPDX-License-Identifier: MIT
// Test fixtures of the launcher and hostile-input tests: a temporary directory, a local fake server
// (fake_imds.py on 127.0.0.1, stopped by its PID), a stand-in aws CLI that logs its
// arguments, running bash commands, a typical and a hostile AwsConfig, the two-type plan and a replan,
// and the checks that nothing ran (no file named PWNED) and that text arrived verbatim.
#pragma once

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <spotdnn/io/json.hpp>
#include <spotdnn/launcher.hpp>
#include <spotdnn/presets.hpp>

#include "support/base64.hpp"

namespace spotdnn::test {

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

/// A fresh directory under the test binary directory, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string pattern = std::string(SPOTDNN_TEST_BINARY_DIR) + "/launcher-XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (!mkdtemp(buffer.data())) throw std::runtime_error("mkdtemp failed");
    path_ = buffer.data();
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  [[nodiscard]] std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

/// Exit code of `bash -c command` (stdout and stderr as the command redirects them).
inline int run_bash(const std::string& command) {
  const int status = std::system(("/bin/bash -c " + launcher::shell_quote(command)).c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

/// A fake AWS endpoint (python script in tests/support) on 127.0.0.1, started on a free port and
/// stopped (SIGTERM to its own PID) when destroyed. The constructor waits at most 10 s for the port.
class FakeServer {
 public:
  FakeServer(const std::string& script, const TempDir& dir, const std::string& name, const std::vector<std::string>& extra = {}) {
    port_file_ = dir / (name + ".port");
    log_ = dir / (name + ".log");
    std::vector<std::string> args = {"/usr/bin/python3", std::string(SPOTDNN_TEST_SOURCE_DIR) + "/tests/support/" + script,
                                     "--port-file", port_file_, "--log", log_};
    args.insert(args.end(), extra.begin(), extra.end());
    pid_ = fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!std::filesystem::exists(port_file_)) {
      if (std::chrono::steady_clock::now() > deadline) {
        stop();
        throw std::runtime_error(script + " did not start");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    port_ = read_text(port_file_);
  }
  ~FakeServer() { stop(); }
  FakeServer(const FakeServer&) = delete;
  FakeServer& operator=(const FakeServer&) = delete;

  [[nodiscard]] std::string url() const { return "http://127.0.0.1:" + port_; }
  [[nodiscard]] const std::string& log_path() const { return log_; }

 private:
  void stop() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int status = 0;
      waitpid(pid_, &status, 0);
      pid_ = -1;
    }
  }
  pid_t pid_ = -1;
  std::string port_file_, log_, port_;
};

/// Writes `dir`/aws, a stand-in for the aws CLI (for SPOTDNN_AWS): it appends its arguments to
/// `dir`/aws.log, each followed by '|', one call per line (an argument holding a newline, such as user
/// data, spans lines), and when an argument is describe-instances, run-instances or create-fleet prints
/// `dir`/<that command>.txt if there is one (a canned text output: tab-separated rows). Returns its path.
inline std::string write_aws_stub(const TempDir& dir) {
  const std::string path = dir / "aws";
  write_text(path, R"sh(#!/bin/bash
here=$(dirname "$0")
printf '%s|' "$@" >>"$here/aws.log"
echo >>"$here/aws.log"
for arg in "$@"; do
  case $arg in
    describe-instances | run-instances | create-fleet)
      if [[ -f $here/$arg.txt ]]; then cat "$here/$arg.txt"; fi
      ;;
  esac
done
)sh");
  if (run_bash("chmod +x " + launcher::shell_quote(path)) != 0) throw std::runtime_error("chmod failed");
  return path;
}

/// The lines of `dir`/aws.log that write_aws_stub's stand-in wrote, one per call.
inline std::vector<std::string> aws_stub_calls(const TempDir& dir) {
  std::vector<std::string> out;
  std::istringstream in(read_text(dir / "aws.log"));
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

/// Tag Key -> Value of the TagSpecification with ResourceType `resource` in the query parameters of a
/// call; `prefix` is "LaunchTemplateData." for a launch template.
inline std::map<std::string, std::string> tags_of(const nlohmann::json& params, const std::string& resource,
                                                  const std::string& prefix = "") {
  std::map<std::string, std::string> tags;
  for (int n = 1; params.contains(prefix + "TagSpecification." + std::to_string(n) + ".ResourceType"); ++n) {
    const std::string spec = prefix + "TagSpecification." + std::to_string(n) + ".";
    if (params[spec + "ResourceType"] != resource) continue;
    for (int m = 1; params.contains(spec + "Tag." + std::to_string(m) + ".Key"); ++m) {
      tags[params[spec + "Tag." + std::to_string(m) + ".Key"].get<std::string>()] =
          params.value(spec + "Tag." + std::to_string(m) + ".Value", std::string());
    }
  }
  return tags;
}

/// The NAME=VALUE lines `bash USERDATA env` prints, as a map.
inline std::map<std::string, std::string> environment_of(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const std::size_t eq = line.find('=');
    if (eq != std::string::npos) out[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return out;
}

/// Every file or directory named PWNED under `dir`: what a hostile value creates if anything runs it as
/// a command (every hostile value here tries `touch PWNED` in the current directory; hostile paths that
/// merely contain the word are expected).
inline std::vector<std::string> pwned_files(const std::filesystem::path& dir) {
  std::vector<std::string> found;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (entry.path().filename() == "PWNED") found.push_back(entry.path().string());
  }
  return found;
}

/// `text` (XML character data, as gnuplot's svg terminal writes it) with the predefined entities and
/// numeric character references decoded.
inline std::string xml_unescape(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const std::size_t semicolon = text[i] == '&' ? text.find(';', i) : std::string::npos;
    if (semicolon == std::string::npos || semicolon - i > 10) {
      out += text[i];
      continue;
    }
    const std::string entity = text.substr(i + 1, semicolon - i - 1);
    if (entity == "amp") out += '&';
    else if (entity == "lt") out += '<';
    else if (entity == "gt") out += '>';
    else if (entity == "quot") out += '"';
    else if (entity == "apos") out += '\'';
    else if (entity.size() > 1 && entity[0] == '#') {
      const unsigned long code = entity[1] == 'x' ? std::stoul(entity.substr(2), nullptr, 16) : std::stoul(entity.substr(1));
      if (code < 0x80) {
        out += char(code);
      } else if (code < 0x800) {
        out += char(0xC0 | (code >> 6));
        out += char(0x80 | (code & 0x3F));
      } else {
        out += char(0xE0 | (code >> 12));
        out += char(0x80 | ((code >> 6) & 0x3F));
        out += char(0x80 | (code & 0x3F));
      }
    } else {
      out += text.substr(i, semicolon - i + 1);
    }
    i = semicolon;
  }
  return out;
}

/// Writes the preset workload and catalog with instance type `from` renamed `to` as workload.json and
/// catalog.json in `dir` (for type names that reach plot labels and output files).
inline void write_renamed_preset(const TempDir& dir, const std::string& from, const std::string& to) {
  io::Json workload = io::to_json(presets::resnet110_workload());
  io::Json catalog = io::to_json(presets::resnet110_catalog());
  workload["profiles"][to] = workload["profiles"][from];
  workload["profiles"].erase(from);
  for (io::Json& type : catalog["instance_types"]) {
    if (type["name"] == from) type["name"] = to;
  }
  write_text(dir / "workload.json", workload.dump(2));
  write_text(dir / "catalog.json", catalog.dump(2));
}

/// One line of printable ASCII holding shell, gnuplot, JSON and marker metacharacters: quotes,
/// backquotes, $(...), `system(...)` and `!` that would each create a file named PWNED if anything ran
/// them, `@macro`, enhanced-text markup, and the markers older launch scripts replaced.
inline const std::string kHostileLine =
    "it's \"q\" `touch PWNED` $(touch PWNED) ${HOME} ; & | @macro {x}^_&~ \\ system(\"touch PWNED\") "
    "!touch PWNED __SPOTDNN_USER_DATA_BASE64__ __SPOTDNN_PS_PRIVATE_IP__";

/// A valid configuration with awkward (but legal) values.
inline launcher::AwsConfig example_config() {
  launcher::AwsConfig c;
  c.region = "us-east-1";
  c.subnet_id = "subnet-0123456789abcdef0";
  c.security_group_ids = {"sg-0123456789abcdef0", "sg-89abcdef"};
  c.image_id = "ami-0123456789abcdef0";
  c.image_ids = {{"p3.2xlarge", "ami-0fedcba9876543210"}};
  c.key_name = "team's \"key\"";
  c.iam_instance_profile = "spotdnn-training";
  c.checkpoint_s3_uri = "s3://my-bucket/checkpoints/run 1";
  c.tags = {{"Project", "it's \"spot\" $(touch pwned) `touch pwned2`\nsecond line"}, {"cost center", "ml & research"}};
  c.placement_group = "spotdnn 'pg'";
  c.create_placement_group = true;
  c.training_command = "python3 train.py --ps \"$SPOTDNN_PS_PRIVATE_IP\" --name 'run 1' $(touch pwned3)";
  return c;
}

/// A run id as a launch script makes them.
inline const std::string kExampleRunId = "20260301-120000-0a1b2c";

/// The plan of the golden scripts: PS m5.xlarge, 2 x p3.2xlarge spot (1 GPU), 4 x g3.8xlarge on-demand
/// (2 GPUs), priced in us-east-1 (example_config's region).
inline launcher::LaunchPlan two_type_plan() {
  launcher::LaunchPlan plan;
  plan.kind = std::string(launcher::kPlanDocumentKind);
  plan.region = "us-east-1";
  plan.workload_name = "resnet110-demo";
  plan.target_loss = 0.35;
  plan.deadline_s = 36000;
  plan.workers = {{"p3.2xlarge", 2, 1, Market::spot}, {"g3.8xlarge", 4, 2, Market::on_demand}};
  plan.parameter_server_type = "m5.xlarge";
  return plan;
}

/// A replan of two_type_plan after one p3.2xlarge was revoked: 1 x p3.2xlarge spot and 1 x g4dn.4xlarge
/// on-demand added to the survivors.
inline launcher::LaunchPlan example_replan() {
  launcher::LaunchPlan plan = two_type_plan();
  plan.kind = std::string(launcher::kReplanDocumentKind);
  plan.workers = {{"p3.2xlarge", 1, 1, Market::spot}, {"g4dn.4xlarge", 1, 1, Market::on_demand}};
  plan.survivors = Cluster{{"p3.2xlarge", 1}, {"g3.8xlarge", 4}};
  return plan;
}

/// Valid values for a template's holes: kExampleRunId, PS 10.0.0.10, world size 7, rank base 3.
inline launcher::SlotValues example_values() { return {kExampleRunId, "10.0.0.10", "7", "3"}; }

/// An instance type name a catalog may hold (no ';', '=' or ',', which separate cluster entries) that
/// carries quotes, backquotes, $(...), gnuplot's ! and @, enhanced-text markup and UTF-8.
inline const std::string kHostileTypeName = "p3'\"`touch PWNED`$(touch PWNED)@m{x}^_&~|!\xc3\xa9.2xl";

/// kHostileLine and more in every free-text field of a valid configuration (the PS type and the IDs are
/// checked against AWS spellings, so they cannot carry any), and tags spelled like make_template's
/// stand-ins.
inline launcher::AwsConfig hostile_config() {
  launcher::AwsConfig c = example_config();
  c.key_name = kHostileLine;
  c.placement_group = "pg " + kHostileLine;
  c.create_placement_group = true;
  c.iam_instance_profile = "__SPOTDNN_USER_DATA_BASE64__+=,.@_-";  // IAM's alphabet allows no more
  c.checkpoint_dir = "/ckpt/" + kHostileLine;
  c.checkpoint_s3_uri = "s3://my-bucket/" + kHostileLine;
  c.tags = {{"k'\"`touch PWNED`$(touch PWNED);&|@m{x}", kHostileLine + "\nsecond line\t\xc3\xa9"},
            {"__SPOTDNN_PS_PRIVATE_IP__", "__SPOTDNN_USER_DATA_BASE64__"},
            {"__SPOTDNN_USER_DATA_BASE64__", "__SPOTDNN_PS_PRIVATE_IP__"},
            // The stand-ins make_template builds texts with (bash_template.hpp): text equal to them is no hole.
            {"00000000-000000-000000", "11111111-111111-111111 2.2.2.2 3.3.3.3 4444444 5555555 6666666 7777777"}};
  c.training_command = kHostileLine + "\nsecond line";
  c.revocation_hook = kHostileLine;
  return c;
}

}  // namespace spotdnn::test
