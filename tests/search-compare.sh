#!/usr/bin/env bash
# tests/search-compare.sh: every search strategy chooses as it did at REV.
#
#   tests/search-compare.sh REV|OLD_CCTRACE [NEW_CCTRACE]   (after make all fixtures)
#
# For refactorings of search/ that must not change behaviour.  Builds REV's
# cctrace (git archive into a temporary directory) unless given a binary,
# then runs `cctrace explore --all --schedules FILE` with the old and the
# new cctrace (default ./cctrace) on each sample below, for every strategy,
# for two seeds where the seed matters, unsharded and as shard 2 of 3, and
# compares each run's line (its choices and outcome) and the summary's
# counts (runs, bugs, distinct traces, diverged, space estimate).  Prints
# every difference; exit 0 if there is none.  RUNS (default 30) bounds
# each search.  tests/search-differential.sh compares the same two
# versions without processes, on many more synthetic programs.
set -euo pipefail
cd "$(dirname "$0")/.."
REV=${1:?usage: $0 REV|OLD_CCTRACE [NEW_CCTRACE]}
NEW=${2:-./cctrace}
RUNS=${RUNS:-30}
TMP=$(mktemp -d /tmp/cctrace-search-compare-XXXXXX)
trap 'rm -rf "$TMP"' EXIT

if [[ -x $REV && ! -d $REV ]]; then
	OLD=$REV
else
	git archive "$REV" | tar -x -C "$TMP" --one-top-level=old
	make -C "$TMP/old" -j2 build/cctrace >"$TMP/build.log" 2>&1 ||
		{ cat "$TMP/build.log"; exit 2; }
	OLD=$TMP/old/build/cctrace
fi

STRATEGIES=(dfs bfs random pct:2 pct:3 cb:0 cb:2 vb:1 vb:2 vb:1:2 pctvb:2:1 pctvb:3:1)
SEEDED=(random pct:2 pct:3 vb:1:2 pctvb:2:1 pctvb:3:1)
# schedule | program and arguments | shards too
SAMPLES=(
	"tests/schedules/interleave-all.sched|tests/fixtures/interleave|yes"
	"tests/schedules/abba-search.sched|tests/fixtures/abba|no"
	"samples/bbuf2/take-empty.search|samples/bbuf2/bbuf2|no"
	"samples/bbuf2/concurrit.search|samples/bbuf2/bbuf2 2 2 4|no"
	"tests/schedules/twovars-all.sched|tests/fixtures/twovars|yes"
	"samples/bank/withdraw.search|samples/bank/bank|no"
)
FIELDS='"(runs|bugs|completed|distinct|space_estimate|infeasible|unrealizable|diverged|errors)":[0-9.e+-]*'

# one BINARY TAG SCHED PROG STRATEGY SEED [SHARD]: the run lines, then the counts
one() {
	local bin=$1 tag=$2 sched=$3 prog=$4 strategy=$5 seed=$6 shard=${7:-}
	local args=(explore "$sched" --strategy "$strategy" --seed "$seed" --runs "$RUNS" --all
		--no-minimize --json --out "$TMP/out-$tag" --schedules "$TMP/$tag.lines")
	[[ -n $shard ]] && args+=(--shard "$shard")
	# shellcheck disable=SC2086 # the program's arguments split on purpose
	"$bin" "${args[@]}" -- $prog >"$TMP/$tag.json" 2>/dev/null || true
	cat "$TMP/$tag.lines"
	grep -oE "$FIELDS" "$TMP/$tag.json" || echo "no summary"
}

cells=0
diffs=0
compare() {
	local what="$*"
	cells=$((cells + 1))
	if ! diff <(one "$OLD" old "$@") <(one "$NEW" new "$@") >"$TMP/diff"; then
		diffs=$((diffs + 1))
		echo "DIFFERENT: $what"
		head -20 "$TMP/diff"
	fi
}

for s in "${SAMPLES[@]}"; do
	IFS='|' read -r sched prog shards <<<"$s"
	for strategy in "${STRATEGIES[@]}"; do
		compare "$sched" "$prog" "$strategy" 1
		[[ $shards == yes ]] && compare "$sched" "$prog" "$strategy" 1 2/3
		if [[ " ${SEEDED[*]} " == *" $strategy "* ]]; then
			compare "$sched" "$prog" "$strategy" 7
		fi
	done
done
echo "$cells searches compared, $diffs different"
((diffs == 0))
