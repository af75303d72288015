#!/usr/bin/env bash
# Checks that switchboard builds for every platform it is released for: for each of
# linux, darwin and windows on amd64 and arm64 it runs go vet (tests included, so
# platform-specific test helpers are checked too) and builds cmd/switchboard; then it
# runs scripts/release.sh for the host's target and checks its archive: the checksum,
# and that the binary in it prints the version it was given.
#
# Usage: scripts/cross.sh [packages to vet]   (default ./...)
# scripts/test.sh runs it. The first run compiles everything once per target (minutes
# on a 2-core machine); later runs are served from the build cache (seconds).
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -gt 0 ]] || set -- ./...

targets=(linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64)
for target in "${targets[@]}"; do
	echo "$target: go vet $*; go build ./cmd/switchboard"
	# CGO_ENABLED=0, as release builds: the binary is static, and vet for the host
	# target shares the cache with the builds of the other five.
	CGO_ENABLED=0 GOOS=${target%/*} GOARCH=${target#*/} go vet "$@"
	CGO_ENABLED=0 GOOS=${target%/*} GOARCH=${target#*/} go build -o /dev/null ./cmd/switchboard
done

host=$(go env GOHOSTOS)/$(go env GOHOSTARCH)
echo "$host: scripts/release.sh"
dist=$(mktemp -d)
trap 'rm -rf "$dist"' EXIT
SWITCHBOARD_TARGETS=$host scripts/release.sh -o "$dist" v0.0.0-cross-check >/dev/null
(cd "$dist" && sha256sum -c --quiet SHA256SUMS)
name=switchboard_v0.0.0-cross-check_${host/\//_}
tar -C "$dist" -xzf "$dist/$name.tar.gz"
got=$("$dist/$name/switchboard" version)
if [[ $got != "switchboard v0.0.0-cross-check "* ]]; then
	echo "release.sh: the binary says \"$got\", not the version it was built with" >&2
	exit 1
fi
echo ok
