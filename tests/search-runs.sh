#!/usr/bin/env bash
# tests/search-runs.sh: how many runs each search strategy needs to reach
# each sample's bug, as the markdown table in docs/search.md.
#
#   tests/search-runs.sh [SEED]     (after make all fixtures; SEED default 1)
#
# A cell is the run that found the first bug (explore --no-minimize --json),
# "none (N)" when the search ran out after N runs without one, and
# "> N" when it hit the --runs limit (RUNS_LIMIT, default 500; random and
# the PCTs never run out).  dfs, bfs, cb and vb are deterministic; random,
# pct and pctvb are for the given seed.  tests/test_search_samples.c asserts
# the same numbers.
set -euo pipefail
cd "$(dirname "$0")/.."
SEED=${1:-1}
LIMIT=${RUNS_LIMIT:-500}
CCTRACE=${CCTRACE:-./cctrace}
OUT=$(mktemp -d /tmp/cctrace-search-runs-XXXXXX)
trap 'rm -rf "$OUT"' EXIT

STRATEGIES=(dfs bfs random pct:2 pct:3 cb:1 cb:2 vb:1 vb:2 vb:1:2 pctvb:2:1 pctvb:3:1)
# schedule | program and arguments
SAMPLES=(
	"samples/bank/withdraw.search|samples/bank/bank"
	"tests/schedules/bank-to-exit.sched|samples/bank/bank"
	"samples/bbuf/take-empty.search|samples/bbuf/bbuf"
	"samples/bbuf2/take-empty.search|samples/bbuf2/bbuf2"
	"tests/schedules/twovars-all.sched|tests/fixtures/twovars"
	"tests/schedules/abba-search.sched|tests/fixtures/abba"
)

field() { sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p"; }

cell() {
	local sched=$1 prog=$2 strategy=$3 json runs bugs
	# shellcheck disable=SC2086 # the program's arguments split on purpose
	json=$("$CCTRACE" explore "$sched" --strategy "$strategy" --seed "$SEED" --runs "$LIMIT" \
		--no-minimize --json --out "$OUT" -- $prog 2>/dev/null || true)
	runs=$(field runs <<<"$json")
	bugs=$(field bugs <<<"$json")
	if [[ -z $runs ]]; then
		echo "error"
	elif ((bugs > 0)); then
		echo "$runs"
	elif ((runs >= LIMIT)); then
		echo "> $runs"
	else
		echo "none ($runs)"
	fi
}

printf '| schedule |'
printf ' %s |' "${STRATEGIES[@]}"
printf '\n|---|'
printf -- '---|%.0s' "${STRATEGIES[@]}"
printf '\n'
for s in "${SAMPLES[@]}"; do
	sched=${s%%|*}
	prog=${s#*|}
	printf '| `%s` |' "$sched"
	for st in "${STRATEGIES[@]}"; do
		printf ' %s |' "$(cell "$sched" "$prog" "$st")"
	done
	printf '\n'
done
