#!/bin/sh
# Builds memcached from Debian's source package, with debug info (-O0 -g) and
# tests/memcached/reinject-incr-race.patch applied: a RE-INJECTED copy of the
# classic incr/decr lost update (memcached issue 127), for the system tests.
# The Debian binary in /usr/bin/memcached is not touched.
#
#   tests/memcached/build.sh        prints the path of the built memcached
#
# Everything lives in a cache directory (CCTRACE_CACHE, default tests/.cache,
# which git ignores): the source is fetched once with `apt-get source`
# (make system-deps adds the deb-src entry it needs), and the build is redone
# only when this script or the patch changes (the build directory is named
# by their hash).  Concurrent test processes share one build under flock.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cache=${CCTRACE_CACHE:-$here/../.cache}
patch=$here/reinject-incr-race.patch
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
stamp=$(cat "$0" "$patch" | sha256sum | cut -c1-12)
build=$cache/memcached-reinject-$stamp
log=$cache/build.log

exec 9>"$cache/lock"
flock 9
if [ -x "$build/memcached" ]; then
	echo "$build/memcached"
	exit 0
fi
if ! ls -d "$cache"/src/memcached-*/ >/dev/null 2>&1; then
	rm -rf "$cache/src"
	mkdir -p "$cache/src"
	if ! (cd "$cache/src" && apt-get source memcached) >"$log" 2>&1; then
		echo "build.sh: apt-get source memcached failed (see $log);" \
			"run make system-deps (it adds a deb-src entry)" >&2
		rm -rf "$cache/src"
		exit 1
	fi
fi
src=$(ls -d "$cache"/src/memcached-*/ | head -n 1)
rm -rf "$build.tmp"
cp -a "$src" "$build.tmp"
if ! (cd "$build.tmp" && patch -p1 --quiet <"$patch" &&
	./configure CFLAGS='-O0 -g' --disable-sasl --disable-extstore &&
	make -j"$(nproc)" memcached) >"$log" 2>&1; then
	echo "build.sh: building memcached failed; see $log" >&2
	exit 1
fi
mv "$build.tmp" "$build"
echo "$build/memcached"
