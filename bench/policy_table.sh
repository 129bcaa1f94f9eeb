#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The README's deadline-policy table: "Can't Be Late" (Z. Wu et al., NSDI 2024)'s setting on the shared
# aws-10-26-2022 availability traces (skypilot-org/spot-traces): one instance, 48 h of work due in 52 h,
# 12 minutes lost at every (re)start, a window at every 10-minute tick, an instance launched in an
# available window living until the window ends; on-demand at the type's price (p3.2xlarge $3.06/h,
# p3.16xlarge $24.48, p2.xlarge $0.90, p2.8xlarge $7.20) and spot at 30% of it (the traces carry no
# prices: an assumption). Every policy of `spotdnn replay --policy all`, mean cost and P(meet deadline).
# Usage: bench/policy_table.sh [SPOTDNN]   (default build/werror-cxx17/examples/spotdnn). Prints a Markdown
# table.
set -euo pipefail
cd "$(dirname "$0")/.."
spotdnn=${1:-build/werror-cxx17/examples/spotdnn}
traces=tests/fixtures/traces/availability/1-node/aws-10-26-2022
echo "| pool | on-demand | spot alone (P) | greedy | guard (30 min) | omniscient | guard's saving |"
echo "|---|---|---|---|---|---|---|"
for file in us-west-2a_v100_1 us-west-2b_v100_1 us-west-2a_v100_8 us-west-2b_v100_8 us-west-2a_k80_1 us-west-2b_k80_1 us-west-2a_k80_8 us-west-2b_k80_8; do
  case $file in
    *v100_1) od=3.06 ;;
    *v100_8) od=24.48 ;;
    *k80_1) od=0.90 ;;
    *k80_8) od=7.20 ;;
  esac
  spot=$(/usr/bin/python3 -c "print(round(0.3 * $od, 4))")
  "$spotdnn" replay --trace "$traces/$file.json" --kind availability --work 48h --deadline 52h --join-delay 0 \
    --restart-overhead 12m --spot-price "$spot" --on-demand-price "$od" --policy all --no-progress --format json |
    /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
p = d["policies"]
def cell(name):
    q = p[name]
    pm = q["probability_meets_deadline"]["estimate"]
    return "$%.2f" % q["mean_cost_usd"] + ("" if pm == 1 else " (%.2f)" % pm)
saving = 1 - p["guard"]["mean_cost_usd"] / p["on-demand"]["mean_cost_usd"]
print("| %s | %s | %s | %s | %s | %s | %.0f%% |" % (d["pool"], cell("on-demand"), cell("spot"), cell("greedy"), cell("guard"), cell("omniscient"), 100 * saving))
'
done
