// SPDX-License-Identifier: MIT
// examples/train/ps_train.py end to end on loopback: a PS and two workers train asynchronously on PyTorch
// RPC; one worker is SIGKILLed and training goes on; a third joins and the group restarts from a
// checkpoint with it; everything stops, starts again and resumes from the newest checkpoint; the loss
// falls; and the traces it wrote feed `spotdnn fit loss` and `spotdnn fit throughput`.
//
// Every child runs in its own process group with a deadline on every wait; whatever is still running
// when the test ends (or fails) is killed, group by group.
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "support/run_command.hpp"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
using spotdnn::test::run_cli;
using spotdnn::test::run_shell;

constexpr const char* kPython = "/usr/bin/python3";  // Debian's interpreter, where python3-torch lives

std::string script() { return std::string(SPOTDNN_TEST_SOURCE_DIR) + "/examples/train/ps_train.py"; }

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

/// A port nobody listens on right now (the kernel's pick; the PS binds it a moment later).
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket failed");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t size = sizeof address;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), size) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
    ::close(fd);
    throw std::runtime_error("bind failed");
  }
  ::close(fd);
  return ntohs(address.sin_port);
}

class TempDir {
 public:
  TempDir() {
    std::string pattern = std::string(SPOTDNN_TEST_BINARY_DIR) + "/train-XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (::mkdtemp(buffer.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = buffer.data();
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

/// A child process in its own process group, stdout and stderr into `log`; the destructor kills the group.
class Child {
 public:
  Child(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env, fs::path log)
      : log_(std::move(log)) {
    std::vector<std::string> environment;
    for (char** e = environ; *e != nullptr; ++e) {
      const std::string entry = *e;
      if (env.count(entry.substr(0, entry.find('='))) == 0) environment.push_back(entry);
    }
    for (const auto& entry : env) environment.push_back(entry.first + "=" + entry.second);
    std::vector<char*> args, envp;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    for (const auto& e : environment) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attributes);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, log_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    posix_spawnattr_setpgroup(&attributes, 0);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
    const int failed = ::posix_spawn(&pid_, argv[0].c_str(), &actions, &attributes, args.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    if (failed != 0) throw std::runtime_error("posix_spawn " + argv[0] + ": " + std::strerror(failed));
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child() {
    if (pid_ > 0 && running()) {
      ::kill(-pid_, SIGKILL);
      int status = 0;
      ::waitpid(pid_, &status, 0);
    }
    if (pid_ > 0) ::kill(-pid_, SIGKILL);  // stragglers of the group (a PS generation, say)
  }

  [[nodiscard]] bool running() {
    if (exited_) return false;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      exited_ = true;
      status_ = status;
    }
    return !exited_;
  }
  void signal(int number) const { ::kill(pid_, number); }

  /// The exit code (128 + signal if a signal ended it), or -1 if it is still running after `seconds`.
  int wait(double seconds) {
    const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
    while (running() && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (running()) return -1;
    return WIFEXITED(status_) ? WEXITSTATUS(status_) : 128 + (WIFSIGNALED(status_) ? WTERMSIG(status_) : 0);
  }
  [[nodiscard]] std::string log() const { return read_text(log_); }
  [[nodiscard]] const fs::path& log_path() const { return log_; }

 private:
  pid_t pid_ = -1;
  fs::path log_;
  bool exited_ = false;
  int status_ = 0;
};

/// Polls `done` every 100 ms for at most `seconds`.
bool eventually(double seconds, const std::function<bool()>& done) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return done();
}

/// Iteration of the newest ckpt-<12 digits>.pt in `dir`, or -1.
long newest_checkpoint(const fs::path& dir) {
  static const std::regex name(R"(ckpt-(\d{12})\.pt)");
  long newest = -1;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    std::smatch m;
    const std::string file = entry.path().filename().string();
    if (std::regex_match(file, m, name)) newest = std::max(newest, std::stol(m[1].str()));
  }
  return newest;
}

/// The last global iteration the PS reported ("... ps_train[ps/genK]: iteration N  loss ..."), or -1. The PS's
/// progress line comes from its control loop; checkpoints can lag behind it when fsync is slow.
long reported_iteration(const std::string& log) {
  static const std::regex progress(R"(ps_train\[ps/gen\d+\]: iteration (\d+)  loss)");
  long last = -1;
  for (std::sregex_iterator it(log.begin(), log.end(), progress), end; it != end; ++it) last = std::stol((*it)[1].str());
  return last;
}

std::string padded(long iteration) {
  char text[32];
  std::snprintf(text, sizeof text, "%012ld", iteration);
  return text;
}

struct LossRow {
  std::string run;
  int workers = 0;
  double weighted_batch = 0;
  long iteration = 0;
  double loss = 0;
};

std::vector<LossRow> read_loss_rows(const fs::path& path, std::string& header) {
  std::ifstream in(path);
  std::getline(in, header);
  std::vector<LossRow> rows;
  for (std::string line; std::getline(in, line);) {
    std::stringstream cells(line);
    std::string run, workers, batch, iteration, loss;
    std::getline(cells, run, ',');
    std::getline(cells, workers, ',');
    std::getline(cells, batch, ',');
    std::getline(cells, iteration, ',');
    std::getline(cells, loss, ',');
    rows.push_back({run, std::stoi(workers), std::stod(batch), std::stol(iteration), std::stod(loss)});
  }
  return rows;
}

double mean_loss(std::vector<LossRow>::const_iterator first, std::vector<LossRow>::const_iterator last) {
  double sum = 0;
  for (auto it = first; it != last; ++it) sum += it->loss;
  return sum / double(last - first);
}

}  // namespace

TEST_CASE("ps_train.py trains asynchronously, survives a killed worker, takes in a joiner and resumes from its newest "
          "checkpoint, writing traces that spotdnn fit reads") {
  const auto started = Clock::now();
  {
    const auto probe = run_shell(std::string(kPython) + " -c 'import torch.distributed.rpc as r; assert r.is_available()'");
    INFO(probe.err);
    REQUIRE_MESSAGE(probe.exit_code == 0,
                    "/usr/bin/python3 cannot import torch.distributed.rpc: scripts/deps installs Debian's python3-torch "
                    "(run it as root)");
  }

  TempDir dir;
  const fs::path checkpoints = dir.path() / "checkpoints", traces = dir.path() / "traces";
  const std::vector<std::string> common = {"--checkpoint-every", "200", "--trace-dir", traces.string(),
                                           "--rpc-timeout", "10", "--ping-timeout", "2", "--join-wait", "20",
                                           "--connect-timeout", "15"};
  auto environment = [&](int port, const std::string& role, int rank) {
    return std::map<std::string, std::string>{
        {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", std::to_string(port)}, {"WORLD_SIZE", "3"},
        {"RANK", std::to_string(rank)}, {"SPOTDNN_ROLE", role}, {"SPOTDNN_INSTANCE_TYPE", "p3.2xlarge"},
        {"SPOTDNN_GPUS", "0"}, {"SPOTDNN_CHECKPOINT_DIR", checkpoints.string()}, {"SPOTDNN_RUN_ID", "test"},
        {"PYTHONUNBUFFERED", "1"}};
  };
  auto start = [&](int port, const std::string& role, int rank, std::vector<std::string> extra, const std::string& log) {
    std::vector<std::string> argv = {kPython, script()};
    argv.insert(argv.end(), common.begin(), common.end());
    argv.insert(argv.end(), extra.begin(), extra.end());
    return std::make_unique<Child>(argv, environment(port, role, rank), dir.path() / log);
  };
  auto contains = [](Child& child, const std::string& text) { return child.log().find(text) != std::string::npos; };

  long stopped_at = -1, steps = -1;
  {
    // Phase 1: a PS and two workers with different batches (so the weighted batch changes with the cluster).
    const int port = free_port();
    auto ps = start(port, "ps", 0, {"--steps", "1000000"}, "ps1.log");
    auto w1 = start(port, "worker", 1, {"--batch", "8"}, "w1.log");
    auto w2 = start(port, "worker", 2, {"--batch", "64"}, "w2.log");
    INFO("PS log:\n" << ps->log() << "\nworker 1 log:\n" << w1->log());
    REQUIRE_MESSAGE(eventually(60, [&] { return contains(*ps, "generation 0 running"); }), "training did not start");
    const auto running = Clock::now();
    // At least 2 s of two workers, so their throughput gets a row too.
    REQUIRE(eventually(30, [&] { return reported_iteration(ps->log()) >= 600 && Clock::now() - running >= 2s; }));

    // Spot revocation: SIGKILL one worker; the PS drops it and keeps training with the other.
    w2->signal(SIGKILL);
    REQUIRE(w2->wait(5) == 128 + SIGKILL);
    REQUIRE(eventually(15, [&] { return contains(*ps, "dropped w"); }));
    const long at_kill = reported_iteration(ps->log());
    CHECK(eventually(20, [&] { return reported_iteration(ps->log()) >= at_kill + 600; }));
    CHECK(w1->running());
    CHECK(ps->running());

    // A replacement joins mid-run: the group restarts from a checkpoint with it.
    auto w3 = start(port, "worker", 3, {"--batch", "32"}, "w3.log");
    INFO("worker 3 log:\n" << w3->log());
    REQUIRE(eventually(40, [&] { return contains(*ps, "generation 1 running with 2 worker(s) (p3.2xlarge=2)"); }));
    const auto rejoined = Clock::now();
    std::smatch resumed;
    const std::string log = ps->log();
    REQUIRE(std::regex_search(log, resumed, std::regex(R"(generation 1 running with .* from iteration (\d+))")));
    const long at_join = std::stol(resumed[1].str());
    CHECK(at_join >= at_kill + 600);  // the checkpoint written for the restart, not a restart from 0
    CHECK(contains(*ps, "stopping (restart) at iteration " + std::to_string(at_join) + ": wrote ckpt-" + padded(at_join)));
    CHECK(eventually(20, [&] { return reported_iteration(ps->log()) >= at_join + 600 && Clock::now() - rejoined >= 2s; }));
    CHECK(contains(*w1, "generation 1: joining as"));
    CHECK(contains(*w3, "generation 1: joining as"));

    // Stop everything: the PS writes a last checkpoint on SIGTERM and exits 143.
    ps->signal(SIGTERM);
    CHECK(ps->wait(30) == 143);
    stopped_at = newest_checkpoint(checkpoints);
    CHECK(contains(*ps, "stopping (terminated) at iteration " + std::to_string(stopped_at)));
    w1->signal(SIGTERM);
    w3->signal(SIGTERM);
    CHECK(w1->wait(15) != -1);
    CHECK(w3->wait(15) != -1);
  }
  {
    // Phase 2: start again (a fresh port); the PS resumes from the newest checkpoint and runs 1000 more updates.
    steps = stopped_at + 1000;
    const int port = free_port();
    auto ps = start(port, "ps", 0, {"--steps", std::to_string(steps)}, "ps2.log");
    auto w1 = start(port, "worker", 1, {"--batch", "8"}, "v1.log");
    auto w2 = start(port, "worker", 2, {"--batch", "64"}, "v2.log");
    INFO("PS log (second start):\n" << ps->log());
    CHECK(ps->wait(60) == 0);
    CHECK(w1->wait(15) == 0);
    CHECK(w2->wait(15) == 0);
    CHECK(contains(*ps, "resumed from " + (checkpoints / ("ckpt-" + padded(stopped_at) + ".pt")).string() +
                            " at iteration " + std::to_string(stopped_at)));
    CHECK(newest_checkpoint(checkpoints) == steps);
    // The progress file `spotdnn watch` reads: the newest checkpoint's iteration and the recent loss.
    const auto progress = nlohmann::json::parse(read_text(checkpoints / "progress.json"));
    CHECK(progress.at("kind") == "spotdnn.progress");
    CHECK(progress.at("run_id") == "test");
    CHECK(progress.at("iteration").get<long>() == steps);
    CHECK(progress.at("loss").get<double>() > 0);
    CHECK(progress.at("time_unix_s").get<double>() > 1.7e9);
  }

  // The loss trace: one row per PS update, iterations 1..steps exactly once (rows after the resumed
  // checkpoint were cut, none repeated), runs of one cluster each, and a falling loss.
  std::string header;
  const std::vector<LossRow> rows = read_loss_rows(traces / "loss-trace.csv", header);
  CHECK(header == "run,workers,weighted_batch,iteration,loss");
  REQUIRE(rows.size() == std::size_t(steps));
  long expected_iteration = 1;
  std::map<std::string, std::pair<int, double>> runs;
  std::set<int> worker_counts;
  std::set<double> batches;
  bool contiguous = true, consistent = true;
  for (const auto& row : rows) {
    contiguous = contiguous && row.iteration == expected_iteration++;
    const auto found = runs.emplace(row.run, std::make_pair(row.workers, row.weighted_batch));
    consistent = consistent && found.first->second == std::make_pair(row.workers, row.weighted_batch);
    worker_counts.insert(row.workers);
    batches.insert(row.weighted_batch);
  }
  CHECK(contiguous);
  CHECK(consistent);
  CHECK(worker_counts == std::set<int>{1, 2});
  CHECK(batches.size() >= 2);
  const double early = mean_loss(rows.begin(), rows.begin() + 50), late = mean_loss(rows.end() - 500, rows.end());
  INFO("mean loss of the first 50 updates " << early << ", of the last 500 " << late);
  CHECK(early > 10 * late);

  const std::string throughput = read_text(traces / "throughput-trace.csv");
  CHECK(throughput.rfind("cluster,iterations_per_s\n", 0) == 0);
  CHECK(throughput.find("\np3.2xlarge=1,") != std::string::npos);
  CHECK(throughput.find("\np3.2xlarge=2,") != std::string::npos);

  // spotdnn reads both traces: the loss fit converges (exit 0) or says why it cannot (exit 3).
  const auto fit = run_cli("fit loss --trace " + quoted((traces / "loss-trace.csv").string()));
  MESSAGE("spotdnn fit loss on the trace ps_train.py wrote (exit " << fit.exit_code << "):\n" << fit.out << fit.err);
  CHECK(fit.err.empty());
  CHECK((fit.exit_code == 0 || (fit.exit_code == 3 && fit.out.find("status") != std::string::npos)));
  const auto tput = run_cli("fit throughput --trace " + quoted((traces / "throughput-trace.csv").string()) +
                            " --free 'iteration_time_s[p3.2xlarge]'");
  MESSAGE("spotdnn fit throughput (exit " << tput.exit_code << "):\n" << tput.out << tput.err);
  CHECK(tput.err.empty());
  CHECK((tput.exit_code == 0 || tput.exit_code == 3));

  const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
  MESSAGE("train_example_test took " << seconds << " s");
}
