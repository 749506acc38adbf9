#!/bin/sh
# Adds deb-src entries mirroring the machine's Debian deb822 sources, unless
# some deb-src entry exists already (make system-deps runs it as root).
# `apt-get source memcached` needs them to fetch Debian's memcached source.
set -eu
src=/etc/apt/sources.list.d/debian.sources
dst=/etc/apt/sources.list.d/cctrace-deb-src.sources
if grep -rqsE '^(deb-src|Types:.*deb-src)' /etc/apt/sources.list /etc/apt/sources.list.d/; then
	exit 0
fi
if [ ! -f "$src" ]; then
	echo "add-deb-src: no $src to mirror; add a deb-src line for Debian yourself" >&2
	exit 1
fi
sed 's/^Types:.*/Types: deb-src/' "$src" >"$dst.tmp"
mv "$dst.tmp" "$dst"
echo "add-deb-src: wrote $dst"
