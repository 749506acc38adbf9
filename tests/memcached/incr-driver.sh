#!/bin/bash
# The client of the RE-INJECTED incr race (tests/memcached/build.sh): sets
# k to 0 (space-padded to two bytes, as memcached itself leaves a counter
# after a decr, so that both incr can update it in place), sends two
# concurrent "incr k 10" on two connections, and exits 1 unless k is 20.
# PORT is $1.  The server may still be starting: the driver polls until a
# "version" gets through (with a deadline), as cctrace starts it at the
# server's entry point.
set -u
port=$1
ask() { # REQUEST LINES: the first LINES lines of the reply
	exec 3<>"/dev/tcp/127.0.0.1/$port" || return 1
	printf '%b' "$1" >&3
	head -n "$2" <&3
	exec 3>&-
}
for _ in $(seq 1000); do
	ask 'version\r\n' 1 2>/dev/null | grep -q VERSION && break
	sleep 0.01
done
[ "$(ask 'set k 0 0 2\r\n0 \r\n' 1)" = $'STORED\r' ] || exit 2
ask 'incr k 10\r\n' 1 >/dev/null &
ask 'incr k 10\r\n' 1 >/dev/null &
wait
value=$(ask 'get k\r\n' 2 | tail -n 1 | tr -d '\r ')
echo "k = $value" >&2
[ "$value" = 20 ]
