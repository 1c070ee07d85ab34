#!/usr/bin/env bash
# Packages an etld binary built on the host (CGO_ENABLED=0) into the
# scratch image of Dockerfile.prebuilt, with podman: no base image to pull,
# no daemon. The same directories, user and CA bundle as the Dockerfile's
# image.
#
# Usage: scripts/image.sh BINARY TAG [podman global options...]
#   e.g. scripts/image.sh build/etld localhost/etld:dev
#        scripts/image.sh build/etld localhost/etld:t --root R --runroot RR --storage-driver vfs
#   ETLD_CA_BUNDLE is the CA bundle to copy (default /etc/ssl/certs/ca-certificates.crt).
set -euo pipefail

if [[ $# -lt 2 ]]; then
	echo "usage: $0 BINARY TAG [podman global options...]" >&2
	exit 2
fi
bin=$1 tag=$2
shift 2
repo=$(cd "$(dirname "$0")/.." && pwd)
ca=${ETLD_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
[[ -x $bin ]] || { echo "$0: $bin is not an executable" >&2; exit 1; }
[[ -r $ca ]] || { echo "$0: no CA bundle at $ca (set ETLD_CA_BUNDLE)" >&2; exit 1; }

ctx=$(mktemp -d -t etld-image.XXXXXX)
trap 'rm -rf "$ctx"' EXIT
root=$ctx/rootfs
# /var/lib comes with rootfs, owned by root: COPY --chown would give
# the directories it creates to 65532 as well.
mkdir -p "$root/etc/etld/pipelines" "$root/etc/ssl/certs" "$root/tmp" "$root/var/lib" "$ctx/state/etld"
chmod 755 "$root" "$root/etc" "$root/var" "$root/var/lib" "$root/etc/etld" "$root/etc/etld/pipelines" "$ctx/state" "$ctx/state/etld"
chmod 1777 "$root/tmp"
cp "$bin" "$root/etld"
chmod 755 "$root/etld"
cp "$ca" "$root/etc/ssl/certs/ca-certificates.crt"
chmod 644 "$root/etc/ssl/certs/ca-certificates.crt"
echo 'etld:x:65532:65532:etld:/var/lib/etld:/sbin/nologin' >"$root/etc/passwd"
echo 'etld:x:65532:' >"$root/etc/group"
chmod 644 "$root/etc/passwd" "$root/etc/group"

podman "$@" build --format docker --file "$repo/Dockerfile.prebuilt" --tag "$tag" "$ctx"
