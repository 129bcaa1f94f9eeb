#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs the README's examples as printed, with the built spotdnn CLI.

    readme_examples_test.py --cli PATH [--repo DIR] [--part commands|aws|all] [--skip-fit]

The examples are the README's ```console blocks: each line starting with `$ ` is a command (a line ending
in a backslash continues on the next), every other line is output the command must print (compared with
runs of spaces squeezed; a line `...` stands for any lines). Commands start with `spotdnn ` or `scripts/`.

--part commands: every console command but scripts/try-aws-locally, in a fresh temporary directory per
block (so `> plan.json` lands there) that links to the repository's examples/, scripts/ and tests/, with
the CLI's directory first on PATH; each must exit 0 and print the output shown. Also checks that
examples/data/make_data.py reproduces the generated files. --skip-fit (a build without spotdnn-fit) skips
`spotdnn fit`, `spotdnn serverless fit` and `spotdnn workload build` and the rest of their block.

--part aws: the console line that runs scripts/try-aws-locally (one moto_server), with SPOTDNN_CLI set to
the CLI; then checks that every command of the README's launch flow ("Launching on AWS", the first ```sh
block after that heading) ran as written: each appears, in order, as a `$ ` line of the transcript
(the `cp examples/aws.json aws.json` line excepted: the walk-through writes aws.json for moto instead).
Exit 77 (skipped) when the script says moto_server or the aws CLI is missing.

Exit codes: 0 passed, 1 failed, 2 bad usage, 77 skipped.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SKIPPED = 77
COMMAND_TIMEOUT_S = 60
AWS_TIMEOUT_S = 240


class Example:
    def __init__(self, line_number, command):
        self.line_number = line_number
        self.command = command
        self.expected = []  # output lines shown after the command


def console_blocks(readme_text):
    """The ```console blocks of the README: a list of blocks, each a list of Examples."""
    blocks = []
    lines = readme_text.split("\n")
    i = 0
    while i < len(lines):
        if lines[i].strip() != "```console":
            i += 1
            continue
        block = []
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            line = lines[i]
            if line.startswith("$ "):
                number = i + 1
                command = line[2:]
                while command.endswith("\\") and i + 1 < len(lines):
                    i += 1
                    command = command[:-1].rstrip() + " " + lines[i].strip()
                block.append(Example(number, command))
            elif block and line.strip():
                block[-1].expected.append(line)
            i += 1
        blocks.append(block)
        i += 1
    return blocks


def squeeze(text):
    return re.sub(r"[ \t]+", " ", text.strip())


def output_matches(expected, output):
    """Whether the expected lines appear in the output in order (`...` matches any lines in between)."""
    got = [squeeze(line) for line in output.split("\n")]
    at = 0
    for line in expected:
        want = squeeze(line)
        if want == "...":
            continue
        while at < len(got) and got[at] != want:
            at += 1
        if at == len(got):
            return False, line
        at += 1
    return True, None


def link_repository(repo, directory):
    for name in ("examples", "scripts", "tests", "docs"):
        os.symlink(repo / name, directory / name)


def environment(cli):
    env = dict(os.environ)
    env["PATH"] = str(cli.parent) + os.pathsep + env.get("PATH", "/usr/bin:/bin")
    env["SPOTDNN_CLI"] = str(cli)
    env.pop("SPOTDNN_TRY_DIR", None)
    return env


def run(command, cwd, env, timeout):
    started = time.monotonic()
    result = subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, errors="replace", timeout=timeout)
    return result, time.monotonic() - started


def check_commands(repo, cli, skip_fit):
    failures = 0
    ran = 0
    blocks = console_blocks((repo / "README.md").read_text())
    if not any(blocks):
        print("FAIL: the README has no ```console block with `$ ` commands")
        return 1
    for block in blocks:
        with tempfile.TemporaryDirectory(prefix="spotdnn-readme-") as temp:
            directory = Path(temp)
            link_repository(repo, directory)
            for example in block:
                command = example.command
                if not (command.startswith("spotdnn ") or command.startswith("scripts/")):
                    print(f"FAIL README.md:{example.line_number}: not a spotdnn or scripts/ command: {command}")
                    failures += 1
                    break
                if command.startswith("scripts/try-aws-locally"):
                    continue  # --part aws
                if skip_fit and re.match(r"spotdnn ((serverless )?fit|workload build)\b", command):
                    print(f"skipped README.md:{example.line_number} and the rest of its block (no spotdnn-fit): {command}")
                    break
                result, seconds = run(command, directory, environment(cli), COMMAND_TIMEOUT_S)
                ran += 1
                if result.returncode != 0:
                    print(f"FAIL README.md:{example.line_number}: exit {result.returncode}: {command}\n{result.stdout}{result.stderr}")
                    failures += 1
                    break
                ok, missing = output_matches(example.expected, result.stdout + "\n" + result.stderr)
                if not ok:
                    print(f"FAIL README.md:{example.line_number}: {command}\n  the README shows: {missing.strip()}\n"
                          f"  it printed:\n{result.stdout}{result.stderr}")
                    failures += 1
                    continue
                print(f"ok README.md:{example.line_number} ({seconds:.2f} s): {command}")
    generator = subprocess.run([sys.executable, str(repo / "examples/data/make_data.py"), "--check"], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    if generator.returncode != 0:
        print(f"FAIL examples/data/make_data.py --check:\n{generator.stdout}")
        failures += 1
    else:
        print("ok examples/data/make_data.py --check")
    print(f"{ran} README commands run, {failures} failures")
    return 1 if failures else 0


def launch_flow(readme_text):
    """The command lines of the first ```sh block after the "Launching on AWS" heading, comments cut."""
    heading = re.search(r"^#+ Launching on AWS.*$", readme_text, re.MULTILINE)
    if not heading:
        return None
    block = re.search(r"^```sh\n(.*?)^```", readme_text[heading.end():], re.MULTILINE | re.DOTALL)
    if not block:
        return None
    commands = []
    for line in block.group(1).split("\n"):
        line = re.sub(r"\s+#\s.*$", "", line).strip()
        if line:
            commands.append(line)
    return commands


def check_aws(repo, cli):
    readme_text = (repo / "README.md").read_text()
    examples = [e for block in console_blocks(readme_text) for e in block if e.command.startswith("scripts/try-aws-locally")]
    if len(examples) != 1:
        print(f"FAIL: expected one console line running scripts/try-aws-locally, found {len(examples)}")
        return 1
    example = examples[0]
    with tempfile.TemporaryDirectory(prefix="spotdnn-readme-aws-") as temp:
        directory = Path(temp)
        link_repository(repo, directory)
        try:
            result, seconds = run(example.command, directory, environment(cli), AWS_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            print(f"FAIL README.md:{example.line_number}: still running after {AWS_TIMEOUT_S} s: {example.command}")
            return 1
    transcript = result.stdout + "\n" + result.stderr
    if result.returncode == SKIPPED:
        print(f"skipped: {result.stderr.strip()}")
        return SKIPPED
    if result.returncode != 0:
        print(f"FAIL README.md:{example.line_number}: exit {result.returncode}: {example.command}\n{transcript}")
        return 1
    print(f"ok README.md:{example.line_number} ({seconds:.1f} s): {example.command}")
    ok, missing = output_matches(example.expected, transcript)
    if not ok:
        print(f"FAIL README.md:{example.line_number}: the README shows {missing.strip()!r}; it printed:\n{transcript}")
        return 1

    flow = launch_flow(readme_text)
    if not flow:
        print("FAIL: no ```sh block after the README's \"Launching on AWS\" heading")
        return 1
    ran = [line[2:].strip() for line in result.stdout.split("\n") if line.startswith("$ ")]
    at = 0
    for command in flow:
        if command == "cp examples/aws.json aws.json":
            continue
        while at < len(ran) and ran[at] != command:
            at += 1
        if at == len(ran):
            print(f"FAIL: the README's launch flow line {command!r} is not what scripts/try-aws-locally ran (in order):\n"
                  + "\n".join("  $ " + r for r in ran))
            return 1
        at += 1
    print(f"ok: the README's launch flow ({len(flow)} lines) ran as written on moto")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cli", required=True, type=Path, help="the spotdnn CLI")
    parser.add_argument("--repo", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--part", choices=("commands", "aws", "all"), default="all")
    parser.add_argument("--skip-fit", action="store_true", help="no spotdnn-fit in this build")
    args = parser.parse_args()
    cli = args.cli.resolve()
    if not os.access(cli, os.X_OK):
        print(f"no executable CLI at {cli}")
        return 2
    repo = args.repo.resolve()
    status = 0
    if args.part in ("commands", "all"):
        status = check_commands(repo, cli, args.skip_fit)
    if args.part in ("aws", "all"):
        aws = check_aws(repo, cli)
        status = aws if status == 0 else status
    return status


if __name__ == "__main__":
    sys.exit(main())
