#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/script_output.hpp What `launch`, `status` and `teardown` share: they write a bash script,
/// as is (`--format script`, the default) or inside a JSON document (`--format json`) for programs that
/// keep the script with what it does, and they read the AWS configuration with --aws (`-`: stdin).

#include <ostream>
#include <string>

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
                                "checkpoint_s3_uri, ... (see examples/aws.json)")
      ->required()
      ->check(non_empty_path());
}

/// The AWS configuration at `path`, or on standard input for `-`.
[[nodiscard]] inline launcher::AwsConfig read_aws_input(const std::string& path) {
  return read_json_input(
      "--aws", path,
      [](const io::Json& json, const std::string& file) {
        return launcher::aws_config_from_json(json, "aws", "read_aws_config_file(" + file + ")");
      },
      [](const std::string& file) { return launcher::read_aws_config_file(file); });
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
