# SPDX-License-Identifier: MIT
"""Runs a command with its stderr on a pseudo-terminal (stdin from /dev/null, stdout inherited) and copies
what it wrote there to this script's stderr; exits with the command's exit code (128 + N for signal N).

Usage: /usr/bin/python3 run_in_pty.py PROGRAM [ARGUMENT...]
Used by tests/cli_options_test.cpp to see what the spotdnn CLI shows on a terminal."""

import errno
import os
import pty
import subprocess
import sys


def main() -> int:
    if len(sys.argv) < 2:
        sys.stderr.write("usage: run_in_pty.py PROGRAM [ARGUMENT...]\n")
        return 2
    master, slave = pty.openpty()
    try:
        child = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, stderr=slave, close_fds=True)
    finally:
        os.close(slave)
    captured = bytearray()
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError as e:  # EIO: every holder of the terminal's other end has closed it
            if e.errno != errno.EIO:
                raise
            break
        if not chunk:
            break
        captured += chunk
    code = child.wait()
    os.close(master)
    sys.stderr.buffer.write(bytes(captured))
    sys.stderr.flush()
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main())
