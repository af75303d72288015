#!/usr/bin/env bash
# Checks that switchboard builds for every platform it is released for, linux, darwin
# and windows on amd64 and arm64, at the least cost of compiling: go vet (tests
# included, so platform-specific test helpers are checked too) once per OS, on amd64,
# since what differs between the two architectures of one OS is only code generation;
# a build of cmd/switchboard for every other target; then scripts/release.sh for the
# host's target, whose archive it checks: the checksum, and that the binary in it
# prints the version it was given. linux/amd64 (the host here) is vetted by
# scripts/test.sh's own go vet and built by release.sh, so it is not compiled again.
#
# Usage: scripts/cross.sh [packages to vet]   (default ./...)
# scripts/test.sh runs it. Each target compiles every dependency once (the pure-Go
# SQLite driver above all: minutes per target on a 2-core machine with a cold
# cache); later runs are served from the build cache (seconds).
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -gt 0 ]] || set -- ./...

host=$(go env GOHOSTOS)/$(go env GOHOSTARCH)
vetted=(darwin/amd64 windows/amd64)
built=(linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64)
if [[ $host != linux/amd64 ]]; then
	vetted+=(linux/amd64) # scripts/test.sh's go vet covered the host's OS instead
fi
for target in "${built[@]}"; do
	[[ $target == "$host" ]] && continue # release.sh builds it, below
	vet=
	for v in "${vetted[@]}"; do [[ $v == "$target" ]] && vet=1; done
	echo "$target: ${vet:+go vet $*; }go build ./cmd/switchboard"
	# CGO_ENABLED=0, as release builds: the binary is static, and vet shares the
	# compiled packages with the build of the same target.
	if [[ -n $vet ]]; then
		CGO_ENABLED=0 GOOS=${target%/*} GOARCH=${target#*/} go vet "$@"
	fi
	CGO_ENABLED=0 GOOS=${target%/*} GOARCH=${target#*/} go build -o /dev/null ./cmd/switchboard
done

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
