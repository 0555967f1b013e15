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

# Smoke run: ROLE=all as user 10001 with the embedded database in /tmp; the console API and the relay's /metrics
# answer on a loopback port.
port=$((20000 + RANDOM % 20000))
ctr="$(buildah from "$TAG")"
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; buildah rm "$ctr" >/dev/null' EXIT
buildah run --user 10001:10001 -e PORT="$port" -e HOST=127.0.0.1 -e LOG_LEVEL=warn "$ctr" -- node server/src/main.ts &
server=$!
for _ in $(seq 1 120); do
  if curl -fsS "http://127.0.0.1:$port/api/status" >/dev/null 2>&1; then break; fi
  kill -0 "$server" 2>/dev/null || { echo "the server in the image stopped" >&2; exit 1; }
  sleep 1
done
curl -fsS "http://127.0.0.1:$port/api/status" | grep -q '"success":true'
curl -fsS "http://127.0.0.1:$port/metrics" | grep -q '^turnpike_relay_inflight_requests '
echo "$TAG serves /api/status and /metrics as user 10001"
