// SPDX-License-Identifier: MIT
// Fuzzes what `spotdnn watch` reads from outside: the first byte picks the reader, the rest is its input.
//   '0' (and any other byte): an `aws ec2 describe-instances` output, parse_json + run_instances_from_describe
//       for a fixed run. Every accepted instance must carry an instance ID of EC2's form, a known state, a
//       launch time, an end time not before it, and the run's exact tag (its role then "ps", "worker" or
//       what the tag said; the reader keeps no other run's instance).
//   '1': a progress.json, parse_run_progress: an accepted one has the run id of a run, a loss >= 0 (+inf:
//       nothing measured) and an iteration >= 0, and reads back unchanged from to_json.
//   '2': a watch journal (written to a file, read_watch_journal), then Controller::resume on its records for a
//       fixed plan: either resumed or refused with spotdnn::invalid_argument, never anything else.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

#include <spotdnn/launcher/controller.hpp>
#include <spotdnn/launcher/run_instances_json.hpp>
#include <spotdnn/launcher/run_progress_json.hpp>
#include <spotdnn/launcher/watch_journal.hpp>
#include <spotdnn/presets.hpp>

#include "fuzz_check.hpp"

using namespace spotdnn;

namespace {

const std::string kRun = "20261124-080000-a1b2c3";

void describe_instances(std::string_view text) {
  const auto instances = fuzz::read_or_reject([&] { return launcher::run_instances_from_describe(io::parse_json(text, "fuzz"), kRun, "fuzz"); });
  if (!instances) return;
  for (const launcher::RunInstance& i : *instances) {
    fuzz::check(launcher::is_instance_id(i.instance_id), "an accepted instance ID is not of EC2's form: " + i.instance_id);
    fuzz::check(std::find(std::begin(launcher::kInstanceStates), std::end(launcher::kInstanceStates), i.state) != std::end(launcher::kInstanceStates),
                "an accepted state is not one of EC2's: " + i.state);
    fuzz::check(std::isfinite(i.launch_time_unix_s), "an accepted launch time is not finite");
    fuzz::check(!i.end_time_unix_s || *i.end_time_unix_s >= i.launch_time_unix_s, "an accepted instance ends before it starts");
  }
}

void progress(std::string_view text) {
  const auto p = fuzz::read_or_reject([&] { return launcher::parse_run_progress(text, "fuzz"); });
  if (!p) return;
  fuzz::check(launcher::is_run_id(p->run_id), "an accepted progress file has a run id that is not one");
  fuzz::check(p->loss >= 0 && p->iteration >= 0 && std::isfinite(p->iteration), "an accepted progress file has a negative figure");
  const launcher::RunProgress back = fuzz::must_succeed("reading back to_json", [&] {
    return launcher::parse_run_progress(launcher::to_json(*p).dump(), "fuzz");
  });
  fuzz::check(back.run_id == p->run_id && back.loss == p->loss && back.iteration == p->iteration && back.time_unix_s == p->time_unix_s,
              "a progress file does not read back unchanged");
}

void journal(std::string_view text) {
  static const std::string path = "/tmp/spotdnn-fuzz-journal-" + std::to_string(::getpid()) + ".jsonl";
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(text.data(), std::streamsize(text.size()));
  }
  const auto records = fuzz::read_or_reject([&] { return launcher::read_watch_journal(path); });
  std::remove(path.c_str());
  if (!records) return;
  static const PerformanceModel model(presets::resnet110_workload(), presets::resnet110_catalog());
  launcher::ControllerSettings settings;
  settings.run_id = kRun;
  settings.start_unix_s = 1795000000;
  settings.deadline_s = 2700;
  settings.target_loss = 0.8;
  settings.planned = {{"p3.2xlarge", 2, 1, Market::spot}, {"g3.8xlarge", 1, 2, Market::spot}};
  launcher::Controller controller(model, settings);
  (void)fuzz::read_or_reject([&] {
    controller.resume(*records);
    return true;
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text = fuzz::as_text(data + 1, size - 1);
  switch (data[0]) {
    case '1': progress(text); break;
    case '2': journal(text); break;
    default: describe_instances(text); break;
  }
  return 0;
}
