#!/bin/bash
# The client of tests/fixtures/counterd: two concurrent "incr", then "get";
# exits 1 when an increment was lost.  PORTFILE is $1.
#
# The server writes its port into PORTFILE once it listens; a file left by
# an earlier run may name a dead port, so the driver waits until a "ping"
# gets through rather than trusting the first port it reads.
set -u
portfile=$1
ask() { exec 3<>"/dev/tcp/127.0.0.1/$port" && echo "$1" >&3 && head -1 <&3; exec 3>&-; }
for _ in $(seq 2000); do
	port=$(cat "$portfile" 2>/dev/null)
	[ -n "$port" ] && ask ping >/dev/null 2>&1 && break
	sleep 0.01
done
ask incr & ask incr & wait
value=$(ask get)
ask quit >/dev/null 2>&1
[ "$value" = 2 ]
