#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A tiny IMDSv2 endpoint on 127.0.0.1 for the worker-bootstrap tests (stdlib only).

PUT /latest/api/token (needs X-aws-ec2-metadata-token-ttl-seconds) hands out token-1, token-2, ...;
only the newest token is valid, any GET with another token gets 401. GET
/latest/meta-data/spot/instance-action answers the next step of --instance-action (a comma list of
404, 401 = "this token just expired", or notice = 200 with the two-minute-warning JSON; the last step
repeats). --rebalance works the same for events/recommendations/rebalance. instance-id answers
--instance-id. Every request is logged as a JSON line in --log; the port goes to --port-file.
"""
import argparse
import json
import os
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

lock = threading.Lock()
state = {"token": 0, "steps": {}}
args = None
NOTICES = {
    "spot/instance-action": '{"action": "terminate", "time": "2026-11-22T10:00:00Z"}',
    "events/recommendations/rebalance": '{"noticeTime": "2026-11-22T09:58:00Z"}',
}


class Handler(BaseHTTPRequestHandler):
    def reply(self, status, body=""):
        data = body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_request_line(self, outcome):
        with open(args.log, "a", encoding="utf-8") as log:
            log.write(json.dumps({"method": self.command, "path": self.path, "outcome": outcome,
                                  "token": self.headers.get("X-aws-ec2-metadata-token"),
                                  "ttl": self.headers.get("X-aws-ec2-metadata-token-ttl-seconds")}) + "\n")

    def do_PUT(self):
        with lock:
            if self.path != "/latest/api/token" or not self.headers.get("X-aws-ec2-metadata-token-ttl-seconds"):
                self.log_request_line(400)
                return self.reply(400)
            state["token"] += 1
            self.log_request_line(200)
            self.reply(200, "token-%d" % state["token"])

    def do_GET(self):
        with lock:
            if self.headers.get("X-aws-ec2-metadata-token") != "token-%d" % state["token"]:
                self.log_request_line(401)
                return self.reply(401)
            item = self.path[len("/latest/meta-data/"):] if self.path.startswith("/latest/meta-data/") else None
            if item == "instance-id":
                self.log_request_line(200)
                return self.reply(200, args.instance_id)
            if item not in NOTICES:
                self.log_request_line(404)
                return self.reply(404)
            steps = state["steps"][item]
            step = steps.pop(0) if len(steps) > 1 else steps[0]
            if step == "401":
                state["token"] += 1000  # the presented token is no longer valid
                self.log_request_line(401)
                return self.reply(401)
            if step == "notice":
                self.log_request_line(200)
                return self.reply(200, NOTICES[item])
            self.log_request_line(404)
            self.reply(404, "Not Found")

    def log_message(self, *a):
        pass


def main():
    global args
    parser = argparse.ArgumentParser()
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--instance-action", default="404")
    parser.add_argument("--rebalance", default="404")
    parser.add_argument("--instance-id", default="i-0123456789abcdef0")
    args = parser.parse_args()
    state["steps"] = {"spot/instance-action": args.instance_action.split(","),
                      "events/recommendations/rebalance": args.rebalance.split(",")}
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(args.port_file + ".tmp", args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
