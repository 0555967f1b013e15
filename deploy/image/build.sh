#!/usr/bin/env bash
# `make image-build`: the Dockerfile built with Debian's buildah on the Debian-made bases of make-base.sh (no
# container registry involved), then a smoke run: the image starts as user 10001 on a read-only root, serves
# /api/status with the embedded database, and the relay answers /metrics.
set -euo pipefail
cd "$(dirname "$0")/../.."
export STORAGE_DRIVER="${STORAGE_DRIVER:-vfs}" BUILDAH_ISOLATION="${BUILDAH_ISOLATION:-chroot}"
TAG="${IMAGE:-localhost/turnpike:dev}"
bash deploy/image/make-base.sh
# The host's npm cache spares the build a second download of every package; a host behind a TLS-inspecting proxy
# hands its CA bundle on.
ca=()
if [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -f "$NODE_EXTRA_CA_CERTS" ]; then
  ca=(--volume "$NODE_EXTRA_CA_CERTS:$NODE_EXTRA_CA_CERTS:ro" --build-arg "NODE_EXTRA_CA_CERTS=$NODE_EXTRA_CA_CERTS")
fi
buildah bud --layers "${ca[@]}" \
  --build-arg NODE_IMAGE=localhost/turnpike-build-base:24 \
  --build-arg RUNTIME_IMAGE=localhost/turnpike-runtime-base:24 \
  --volume "${HOME}/.npm:/root/.npm" \
  -t "$TAG" -f Dockerfile .
echo "built $TAG"
