#!/bin/bash
# The client of tests/fixtures/counterd: two concurrent "incr", then "get";
# exits 1 when an increment was lost.  PORTFILE is $1.
set -u
portfile=$1
# Each run's server writes a fresh file; the driver removes it however it
# ends, so that the next run's driver cannot read a stale port.
trap 'rm -f "$portfile"' EXIT
trap 'exit 143' TERM INT
for _ in $(seq 1000); do [ -s "$portfile" ] && break; sleep 0.01; done
port=$(cat "$portfile")
ask() { exec 3<>"/dev/tcp/127.0.0.1/$port" && echo "$1" >&3 && head -1 <&3; exec 3>&-; }
ask incr & ask incr & wait
value=$(ask get)
ask quit >/dev/null 2>&1
[ "$value" = 2 ]
