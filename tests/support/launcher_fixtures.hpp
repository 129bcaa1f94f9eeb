// SPDX-License-Identifier: MIT
// Test fixtures of the launcher tests: a temporary directory, a local fake server (fake_ec2.py or
// fake_imds.py on 127.0.0.1, stopped by its PID), running bash commands, and a typical AwsConfig.
#pragma once

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <spotdnn/launcher.hpp>

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

/// Environment for the real aws CLI against a fake endpoint: dummy keys (never real ones), no config
/// files, no instance-metadata credential lookups.
inline std::string aws_env(const std::string& endpoint_url) {
  return "env -i PATH=/usr/bin:/bin HOME=/nonexistent AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test "
         "AWS_DEFAULT_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true AWS_CONFIG_FILE=/dev/null "
         "AWS_SHARED_CREDENTIALS_FILE=/dev/null AWS_PAGER= SPOTDNN_AWS=/usr/bin/aws SPOTDNN_AWS_ENDPOINT_URL=" +
         endpoint_url;
}

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

}  // namespace spotdnn::test
