#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The README's out-of-sample calibration table: for each zone of the AWS preemption traces (r5.16xlarge in
# us-east-1b/c/d, April 2023; skypilot-org/spot-traces, "Can't Be Late", NSDI 2024), read as p3.2xlarge
# pools, fit a revocation model on the first half of the trace (76 h), plan ResNet-110 to loss 0.8 by
# 1h30m at confidence 0.8 / 0.9 / 0.95 under three models, and replay each plan on the second half:
#   fitted         spotdnn revocations fit on the first half (--revocations)
#   constant-rate  the old model at the first half's own mean rate (preemptions per instance-hour, --hazard)
#   advisor band   the old model at the Spot Advisor band ">20%" (what a fetched catalog gives p3.2xlarge)
# The catalog is the preset with one p3.2xlarge on spot (the traces hold one instance at a time) and every
# other type on demand, so a plan is "how much on-demand capacity to add to one spot worker".
# Usage: bench/calibration_table.sh [SPOTDNN]   (default build/werror-cxx17/examples/spotdnn). Prints a
# Markdown table.
set -euo pipefail
cd "$(dirname "$0")/.."
spotdnn=${1:-build/werror-cxx17/examples/spotdnn}
traces=tests/fixtures/traces/preemption/1-node/aws-04-19-2023
half=76h
deadline=${DEADLINE:-1h30m}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$spotdnn" catalog show --format json | /usr/bin/python3 -c '
import json, sys
c = json.load(sys.stdin)
for t in c["instance_types"]:
    if t["name"] == "p3.2xlarge":
        t["quota"] = 1
    else:
        t["price_usd_per_hour"] = t["on_demand_price_usd_per_hour"]
        t["market"] = "on-demand"
json.dump(c, sys.stdout, indent=2)
' >"$tmp/catalog.json"

field() { /usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); exec("print(" + sys.argv[2] + ")")' "$@"; }

echo "| zone | level | model | plan | cost | model's P | replayed P, later half [95% interval] |"
echo "|---|---|---|---|---|---|---|"
for zone in us-east-1b us-east-1c us-east-1d; do
  trace=$traces/${zone}_intel_64.json
  "$spotdnn" revocations fit --trace "$trace" --kind lifetimes --type p3.2xlarge --to "$half" >"$tmp/$zone.json"
  rate=$(field "$tmp/$zone.json" 'd["pools"][0]["preemptions"] / (d["pools"][0]["exposure_s"] / 3600)')
  for level in 0.8 0.9 0.95; do
    for model in fitted constant-rate band; do
      case $model in
        fitted) flags=(--revocations "$tmp/$zone.json") ;;
        constant-rate) flags=(--hazard "p3.2xlarge=$rate") ;;
        band) flags=(--fallback-band '>20%') ;;
      esac
      if ! "$spotdnn" plan --catalog "$tmp/catalog.json" --target-loss 0.8 --deadline "$deadline" --confidence "$level" \
        --replacement same-type "${flags[@]}" --no-progress --format json >"$tmp/plan.json" 2>/dev/null; then
        echo "| $zone | $level | $model | (no plan) | | | |"
        continue
      fi
      cluster=$(field "$tmp/plan.json" '",".join(k + "=" + str(v) for k, v in d["cluster"].items())')
      cost=$(field "$tmp/plan.json" '"$%.2f" % d["prediction"]["cost_usd"]')
      model_p=$(field "$tmp/plan.json" '"%.3f" % d["probability_meets_deadline"]["estimate"]')
      "$spotdnn" replay --catalog "$tmp/catalog.json" --trace "$trace" --kind lifetimes --type p3.2xlarge --from "$half" \
        --cluster "$cluster" --target-loss 0.8 --deadline "$deadline" --no-progress --format json >"$tmp/replay.json"
      replayed=$(field "$tmp/replay.json" \
        '"%.3f [%.3f, %.3f]" % (d["probability_meets_deadline"]["estimate"], d["probability_meets_deadline"]["lower"], d["probability_meets_deadline"]["upper"])')
      echo "| $zone | $level | $model | $cluster | $cost | $model_p | $replayed |"
    done
  done
done
