#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A tiny EC2 Query-API endpoint on 127.0.0.1 for the launcher tests (stdlib only).

Records every call as one JSON line {"Action": ..., "params": {...}} in --log and answers with valid
EC2 XML for RunInstances, DescribeInstances, CreateTags, CreatePlacementGroup, TerminateInstances,
CreateLaunchTemplate, DeleteLaunchTemplate and CreateFleet. Instances start "pending" and are
"running" from the first DescribeInstances on. --fail-instance-type T makes launches of type T fail.
Writes the chosen port to --port-file once it listens; exits on SIGTERM.
"""
import argparse
import itertools
import json
import signal
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from xml.sax.saxutils import escape

NS = "http://ec2.amazonaws.com/doc/2016-11-15/"
lock = threading.Lock()
instances = {}  # id -> dict(type, ip, state, tags, image)
counter = itertools.count(1)
args = None


def new_instance(itype, image, tags):
    n = next(counter)
    iid = "i-%017x" % (0xabc000 + n)
    instances[iid] = {"type": itype, "ip": "10.0.%d.%d" % (n // 250, 10 + n % 250), "state": "pending",
                      "tags": dict(tags), "image": image}
    return iid


def tags_for(params, resource):
    """Tags of TagSpecification.N with ResourceType == resource."""
    tags = {}
    for n in itertools.count(1):
        prefix = "TagSpecification.%d." % n
        if prefix + "ResourceType" not in params:
            break
        if params[prefix + "ResourceType"] != resource:
            continue
        for m in itertools.count(1):
            key = params.get(prefix + "Tag.%d.Key" % m)
            if key is None:
                break
            tags[key] = params.get(prefix + "Tag.%d.Value" % m, "")
    return tags


def list_param(params, name):
    out = []
    for n in itertools.count(1):
        v = params.get("%s.%d" % (name, n))
        if v is None:
            return out
        out.append(v)


def instance_xml(iid):
    i = instances[iid]
    code = {"pending": 0, "running": 16, "shutting-down": 32, "terminated": 48}[i["state"]]
    tags = "".join("<item><key>%s</key><value>%s</value></item>" % (escape(k), escape(v)) for k, v in i["tags"].items())
    return ("<item><instanceId>%s</instanceId><imageId>%s</imageId><instanceState><code>%d</code><name>%s</name>"
            "</instanceState><privateIpAddress>%s</privateIpAddress><instanceType>%s</instanceType>"
            "<tagSet>%s</tagSet></item>") % (iid, escape(i["image"]), code, i["state"], i["ip"], i["type"], tags)


def matches(iid, filters):
    i = instances[iid]
    for name, values in filters:
        if name == "instance-state-name" and i["state"] not in values:
            return False
        if name.startswith("tag:") and i["tags"].get(name[4:]) not in values:
            return False
        if name == "instance-id" and iid not in values:
            return False
    return True


def handle(action, p):
    if action == "RunInstances":
        itype = p.get("InstanceType", "m1.small")
        if itype == args.fail_instance_type:
            return 400, error("InsufficientInstanceCapacity", "no capacity for " + itype)
        count = int(p["MaxCount"])
        ids = [new_instance(itype, p.get("ImageId", ""), tags_for(p, "instance")) for _ in range(count)]
        items = "".join(instance_xml(i) for i in ids)
        return 200, ("<RunInstancesResponse xmlns=\"%s\"><requestId>r1</requestId><reservationId>r-%s</reservationId>"
                     "<ownerId>123456789012</ownerId><groupSet/><instancesSet>%s</instancesSet></RunInstancesResponse>"
                     % (NS, ids[0][2:], items))
    if action == "DescribeInstances":
        wanted = list_param(p, "InstanceId")
        filters = []
        for n in itertools.count(1):
            name = p.get("Filter.%d.Name" % n)
            if name is None:
                break
            filters.append((name, list_param(p, "Filter.%d.Value" % n)))
        ids = [i for i in instances if (not wanted or i in wanted) and matches(i, filters)]
        for i in ids:
            if instances[i]["state"] == "pending":
                instances[i]["state"] = "running"
        items = "".join("<item><reservationId>r-1</reservationId><ownerId>123456789012</ownerId><groupSet/>"
                        "<instancesSet>%s</instancesSet></item>" % instance_xml(i) for i in ids)
        return 200, ("<DescribeInstancesResponse xmlns=\"%s\"><requestId>r2</requestId><reservationSet>%s"
                     "</reservationSet></DescribeInstancesResponse>" % (NS, items))
    if action == "TerminateInstances":
        items = ""
        for i in list_param(p, "InstanceId"):
            if i in instances:
                instances[i]["state"] = "terminated"
            items += ("<item><instanceId>%s</instanceId><currentState><code>48</code><name>terminated</name>"
                      "</currentState><previousState><code>16</code><name>running</name></previousState></item>" % i)
        return 200, ("<TerminateInstancesResponse xmlns=\"%s\"><requestId>r3</requestId><instancesSet>%s"
                     "</instancesSet></TerminateInstancesResponse>" % (NS, items))
    if action in ("CreateTags", "CreatePlacementGroup", "DeleteLaunchTemplate"):
        if action == "CreateTags":
            for i in list_param(p, "ResourceId"):
                if i in instances:
                    for m in itertools.count(1):
                        key = p.get("Tag.%d.Key" % m)
                        if key is None:
                            break
                        instances[i]["tags"][key] = p.get("Tag.%d.Value" % m, "")
        return 200, "<%sResponse xmlns=\"%s\"><requestId>r4</requestId><return>true</return></%sResponse>" % (
            action, NS, action)
    if action == "CreateLaunchTemplate":
        return 200, ("<CreateLaunchTemplateResponse xmlns=\"%s\"><requestId>r5</requestId><launchTemplate>"
                     "<launchTemplateId>lt-0123456789abcdef0</launchTemplateId><launchTemplateName>%s</launchTemplateName>"
                     "<defaultVersionNumber>1</defaultVersionNumber><latestVersionNumber>1</latestVersionNumber>"
                     "</launchTemplate></CreateLaunchTemplateResponse>" % (NS, escape(p.get("LaunchTemplateName", ""))))
    if action == "CreateFleet":
        prefix = "LaunchTemplateConfigs.1.Overrides.1."
        itype = p.get(prefix + "InstanceType", "")
        if itype == args.fail_instance_type:
            return 200, ("<CreateFleetResponse xmlns=\"%s\"><requestId>r6</requestId><fleetId>fleet-1</fleetId>"
                         "<errorSet><item><errorCode>InsufficientInstanceCapacity</errorCode><errorMessage>none"
                         "</errorMessage><lifecycle>spot</lifecycle></item></errorSet><fleetInstanceSet/>"
                         "</CreateFleetResponse>" % NS)
        count = int(p["TargetCapacitySpecification.TotalTargetCapacity"])
        ids = [new_instance(itype, "ami-fleet", tags_for(p, "fleet")) for _ in range(count)]
        idxml = "".join("<item>%s</item>" % i for i in ids)
        return 200, ("<CreateFleetResponse xmlns=\"%s\"><requestId>r6</requestId><fleetId>fleet-0123456789abcdef0"
                     "</fleetId><errorSet/><fleetInstanceSet><item><instanceIds>%s</instanceIds><instanceType>%s"
                     "</instanceType><lifecycle>spot</lifecycle></item></fleetInstanceSet></CreateFleetResponse>"
                     % (NS, idxml, itype))
    return 400, error("InvalidAction", "the fake does not know " + action)


def error(code, message):
    return ("<Response><Errors><Error><Code>%s</Code><Message>%s</Message></Error></Errors>"
            "<RequestID>e1</RequestID></Response>" % (code, escape(message)))


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode("utf-8")
        params = {k: v[0] for k, v in urllib.parse.parse_qs(body, keep_blank_values=True).items()}
        action = params.pop("Action", "")
        params.pop("Version", None)
        with lock:
            with open(args.log, "a", encoding="utf-8") as log:
                log.write(json.dumps({"Action": action, "params": params}, sort_keys=True) + "\n")
            status, text = handle(action, params)
        data = ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + text).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "text/xml;charset=UTF-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *a):
        pass


def main():
    global args
    parser = argparse.ArgumentParser()
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--fail-instance-type", default="")
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    import os
    os.rename(args.port_file + ".tmp", args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
