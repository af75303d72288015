#!/usr/bin/env bash
# Builds the release archives of switchboard: one static binary (CGO_ENABLED=0,
# -trimpath) per target with the version stamped into it, packed with README.md
# into switchboard_VERSION_OS_ARCH.tar.gz (.zip for Windows), and SHA256SUMS for
# them all.
#
# Usage: scripts/release.sh [-o DIR] [VERSION]
#   VERSION   what `switchboard version` prints; default: git describe --tags --always --dirty
#   -o DIR    where the archives go; default: dist (it is emptied of earlier archives)
#   SWITCHBOARD_TARGETS   the OS/ARCH pairs to build, space-separated; default: the six below
#
# Needs go, tar, zip, and sha256sum or shasum. Nothing is downloaded but Go
# modules. To check an archive: sha256sum -c SHA256SUMS (shasum -a 256 -c on macOS).
set -euo pipefail
cd "$(dirname "$0")/.."

out=dist
if [[ ${1-} == -o ]]; then
	out=${2:?"-o needs a directory"}
	shift 2
fi
if [[ $# -gt 1 || ${1-} == -* ]]; then
	echo "usage: scripts/release.sh [-o DIR] [VERSION]" >&2
	exit 2
fi
version=${1:-$(git describe --tags --always --dirty)}
if [[ ! $version =~ ^[A-Za-z0-9._+-]+$ ]]; then
	echo "release: version $version may hold only letters, digits and . _ + -" >&2
	exit 2
fi
targets=${SWITCHBOARD_TARGETS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64}

for tool in go tar zip; do
	command -v "$tool" >/dev/null || {
		echo "release: $tool is not installed" >&2
		exit 1
	}
done
if command -v sha256sum >/dev/null; then
	sha256=(sha256sum)
elif command -v shasum >/dev/null; then
	sha256=(shasum -a 256)
else
	echo "release: neither sha256sum nor shasum is installed" >&2
	exit 1
fi

mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out"/switchboard_*.tar.gz "$out"/switchboard_*.zip "$out"/SHA256SUMS
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

archives=()
for target in $targets; do
	goos=${target%/*} goarch=${target#*/}
	name=switchboard_${version}_${goos}_${goarch}
	exe=switchboard
	[[ $goos == windows ]] && exe=switchboard.exe
	mkdir "$stage/$name"
	echo "building $name"
	CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch go build -trimpath \
		-ldflags "-s -w -X main.version=$version" -o "$stage/$name/$exe" ./cmd/switchboard
	cp README.md "$stage/$name/"
	if [[ $goos == windows ]]; then
		(cd "$stage" && zip -q -r -X "$out/$name.zip" "$name")
		archives+=("$name.zip")
	else
		tar -C "$stage" -czf "$out/$name.tar.gz" "$name"
		archives+=("$name.tar.gz")
	fi
done
(cd "$out" && "${sha256[@]}" "${archives[@]}" >SHA256SUMS)
echo "wrote ${#archives[@]} archives and SHA256SUMS to $out"
