#!/usr/bin/env bash
# tests/search-differential.sh: the search answers as it did at REV, without
# processes.
#
#   tests/search-differential.sh REV [PROGRAMS]
#
# Builds REV's search (search/*.c, or policy/oracle.c and priority.c before
# search/ existed) and the working tree's, each behind
# tests/search-diff/adapter.c, into one program with
# tests/search-diff/driver.c, which drives both in lockstep over PROGRAMS
# (default 60) synthetic programs for every strategy, two seeds and three
# shardings, and stops at the first answer, trace, flag or estimate that
# differs.  Built with the sanitizers (SAN=0: -O2 as cctrace is).
# tests/search-compare.sh makes the same comparison on real programs.
set -euo pipefail
cd "$(dirname "$0")/.."
REV=${1:?usage: $0 REV [PROGRAMS]}
TMP=$(mktemp -d /tmp/cctrace-search-diff-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
CC=${CC:-gcc}
FLAGS=(-std=gnu11 -D_GNU_SOURCE -g -Wall -Wextra -Werror)
if [[ ${SAN:-1} == 1 ]]; then
	FLAGS+=(-O1 "-fsanitize=address,undefined" -fno-omit-frame-pointer
		-fno-sanitize-recover=undefined)
else
	FLAGS+=(-O2)
fi

mkdir -p "$TMP/old"
# shellcheck disable=SC2046 # the directories REV has
git archive "$REV" $(git ls-tree --name-only "$REV" search policy) | tar -x -C "$TMP/old"

# side NAME ROOT SOURCES...: one object exporting only NAME's adapter calls
side() {
	local name=$1 root=$2 objs=() f src
	shift 2
	for f in "$@" tests/search-diff/adapter.c; do
		if [[ $f == tests/* ]]; then src=$f; else src=$root/$f; fi
		"$CC" "${FLAGS[@]}" -I"$root" -DSIDE="${name}_" -c "$src" \
			-o "$TMP/$name-$(basename "$f" .c).o"
		objs+=("$TMP/$name-$(basename "$f" .c).o")
	done
	ld -r -o "$TMP/$name-all.o" "${objs[@]}"
	printf '%s\n' "${name}_"{parse,make,free,choose,next_run,trace,diverged,estimate} \
		>"$TMP/$name.keep"
	objcopy --keep-global-symbols="$TMP/$name.keep" "$TMP/$name-all.o" "$TMP/$name.o"
}

sources() { # the search's sources under ROOT
	if [[ -f $1/search/search.h ]]; then
		(cd "$1" && ls search/*.c)
	else
		echo policy/oracle.c policy/priority.c
	fi
}

# shellcheck disable=SC2046 # one word per file
side old "$TMP/old" $(sources "$TMP/old")
# shellcheck disable=SC2046
side new . $(sources .)
"$CC" "${FLAGS[@]}" -o "$TMP/driver" tests/search-diff/driver.c "$TMP/old.o" "$TMP/new.o" -lm
"$TMP/driver" "${2:-60}"
