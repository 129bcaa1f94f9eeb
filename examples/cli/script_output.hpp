#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/script_output.hpp What `launch`, `status` and `teardown` share: they write a bash script,
/// as is (`--format script`, the default) or inside a JSON document (`--format json`) for programs that
/// keep the script with what it does, and they read the AWS configuration with --aws (`-`: stdin). The
/// commands that act on a run (`status`, `teardown`, `watch`, `cost`) take the settings of one region of
/// it with --region (read_run_aws_input).

#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <spotdnn/launcher/aws_config_json.hpp>
#include <spotdnn/launcher/run_id.hpp>

#include "command.hpp"
#include "options.hpp"

namespace spotdnn::cli {

/// The formats of a command that writes a script: OutputFormat::script or OutputFormat::json.
using ScriptFormat = OutputFormat;

/// --format script|json (script by default): add_format_option with the two formats a script command
/// writes; table and csv are refused with them.
inline void add_script_format_option(CLI::App& app, ScriptFormat& format) {
  add_format_option(app, format, {OutputFormat::script, OutputFormat::json},
                    "script (bash, the default) or json (the script and what it does, in one JSON document)");
}

/// --aws FILE: the AWS configuration.
inline void add_aws_option(CLI::App& app, std::string& path) {
  app.add_option("--aws", path, "AWS JSON, - for stdin: region, subnet_id, security_group_ids, image_id, "
                                "checkpoint_s3_uri, ... or regions {REGION: settings} (see examples/aws.json)")
      ->required()
      ->check(non_empty_path());
}

/// --region REGION: which region's settings of the AWS configuration a run command uses. `fallback`
/// says where the region comes from without it (empty: nowhere but a one-region file).
inline void add_run_region_option(CLI::App& app, std::string& region, std::string_view fallback = {}) {
  std::string help = "the run's region: a key of the AWS JSON's regions map, needed when it holds several";
  if (!fallback.empty()) help.append(" (default: ").append(fallback).append(")");
  help.append("; with a one-region AWS JSON, its region or left out");
  app.add_option("--region", region, help)
      ->type_name("REGION")
      ->check(CLI::Validator(
          [](std::string& value) { return value.empty() ? std::string("empty: give one of the AWS JSON's regions") : std::string(); }, ""));
}

/// The settings of the region a run command acts in, from the AWS configuration at `path` (`-`: stdin)
/// read for `use`: the region `region_option` names (--region; empty: not given), else `known_region`
/// (the plan's region, when the command has a plan; empty: unknown), else the file's only region.
/// Throws usage_error (exit 2) when --region names a region the file has no settings for, or when the
/// file holds several regions and neither --region nor `known_region` picks one; a `known_region` that a
/// one-region file does not hold is left to the caller (which compares it with the plan's and says so).
[[nodiscard]] inline launcher::AwsConfig read_run_aws_input(const std::string& path, const std::string& region_option,
                                                           const std::string& known_region = {},
                                                           launcher::AwsConfigUse use = launcher::AwsConfigUse::spot) {
  const launcher::AwsRegionConfigs configs = read_json_input(
      "--aws", path,
      [use](const io::Json& json, const std::string& file) {
        return launcher::aws_region_configs_from_json(json, "aws", "read_aws_config_file(" + file + ")", use);
      },
      [use](const std::string& file) { return launcher::read_aws_region_configs_file(file, use); });
  const std::string file = is_stdin(path) ? std::string(kStdinName) : path;
  const std::size_t count = configs.regions.size();
  const std::string holds = std::to_string(count) + (count == 1 ? " region" : " regions") + " (" + configs.region_names() + ")";
  if (!region_option.empty()) {
    if (configs.regions.count(region_option) == 0) {
      // Shown cut short when longer than any region's name (32 characters at most).
      const std::string shown = region_option.size() <= 40 ? region_option : region_option.substr(0, 40) + "...";
      throw usage_error("--region " + detail::quoted(shown) + ": --aws " + file + " has no settings for it; it holds " + holds);
    }
    return configs.regions.at(region_option);
  }
  if (count == 1) return configs.regions.begin()->second;
  if (!known_region.empty()) {
    if (configs.regions.count(known_region) == 0) {
      throw usage_error("--aws " + file + " holds " + holds + ", not the plan's region " + known_region +
                        ": give the AWS configuration the run was launched with");
    }
    return configs.regions.at(known_region);
  }
  throw usage_error("--aws " + file + " holds " + holds + ": give --region");
}

/// --run ID: a run id as the launch script printed it (checked when the command runs).
inline void add_run_option(CLI::App& app, std::string& run_id) {
  app.add_option("--run", run_id, "the run id the launch script printed (spotdnn run: YYYYMMDD-HHMMSS-xxxxxx)")->required();
}

/// Throws usage_error unless `run_id` (the value of `option`) is a run id.
inline void require_run_id_option(const std::string& option, const std::string& run_id) {
  if (!launcher::is_run_id(run_id)) {
    throw usage_error(option + " " + detail::quoted(run_id) + ": " + std::string(launcher::kRunIdFormatHelp));
  }
}

/// Writes `script` as the format asks; `about` holds the JSON document's other members.
inline void write_script(std::ostream& out, ScriptFormat format, const std::string& command, nlohmann::ordered_json about,
                         const std::string& script) {
  if (format == ScriptFormat::script) {
    out << script;
    return;
  }
  nlohmann::ordered_json document;
  document["kind"] = "spotdnn.script";
  document["schema_version"] = 2;
  document["command"] = command;
  for (auto it = about.begin(); it != about.end(); ++it) document[it.key()] = it.value();
  document["script"] = script;
  out << document.dump(2) << '\n';
}

}  // namespace spotdnn::cli
