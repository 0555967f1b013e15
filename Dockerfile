# syntax=docker/dockerfile:1
# One image for every role: ROLE=api|relay|all runs `node server/dist/main.js`, the server built into plain
# JavaScript by scripts/build-server.ts (docs/adr/0038); the operator `node operator/src/main.ts` and the migration
# Job `node core/src/db/migrate-cli.ts` run their TypeScript as is on Node.js 24 (type stripping, docs/adr/0004).
# So the image holds the built server, the sources, production dependencies and the built console.
#
#   docker build -t turnpike/turnpike:0.1.0 .          (or podman / buildah bud)
#
# NODE_IMAGE builds; RUNTIME_IMAGE runs. Any Debian-based image with Node.js 24 at /usr/local/bin/node works for
# both (`make image` explains the Debian-made base it checks against).
ARG NODE_IMAGE=node:24-bookworm-slim
ARG RUNTIME_IMAGE=node:24-bookworm-slim

# --- dependencies: every workspace's manifest first, so a source change reuses this layer ---
FROM ${NODE_IMAGE} AS deps
# A build behind a TLS-inspecting proxy passes its CA bundle (mounted at this path) as a build argument.
ARG NODE_EXTRA_CA_CERTS
WORKDIR /src
COPY package.json package-lock.json ./
COPY core/package.json core/
COPY api/package.json api/
COPY relay/package.json relay/
COPY console/package.json console/
COPY operator/package.json operator/
COPY server/package.json server/
RUN npm ci --no-audit --no-fund --ignore-scripts

# --- build: the console's static files and the server's JavaScript ---
FROM deps AS build
COPY . .
RUN npm run build -w @turnpike/console \
 && node scripts/build-server.ts \
 && npm prune --omit=dev --no-audit --no-fund --ignore-scripts \
 && rm -rf console/node_modules console/src console/e2e

# --- runtime: non-root, nothing writable but /tmp (the chart mounts it), no package manager needed ---
FROM ${RUNTIME_IMAGE} AS runtime
# glibc returns allocations of 64 KiB and more to the system when they are freed: without it the C++ garbage of
# loading the modules (Node's package.json reader) stays in the heap as ~40 MiB of an idle process (bench/README.md)
ENV NODE_ENV=production \
    GLIBC_TUNABLES=glibc.malloc.mmap_threshold=65536 \
    ROLE=all \
    PORT=3000 \
    DATA_DIR=/tmp/turnpike
WORKDIR /app
COPY --from=build --chown=0:0 /src/package.json ./
COPY --from=build --chown=0:0 /src/node_modules ./node_modules
COPY --from=build --chown=0:0 /src/core ./core
COPY --from=build --chown=0:0 /src/api ./api
COPY --from=build --chown=0:0 /src/relay ./relay
COPY --from=build --chown=0:0 /src/operator ./operator
COPY --from=build --chown=0:0 /src/server ./server
COPY --from=build --chown=0:0 /src/console/dist ./console/dist
COPY --from=build --chown=0:0 /src/console/package.json ./console/
USER 10001:10001
EXPOSE 3000 8081
# a young generation of at most 2 x 16 MiB: left to itself V8 grows it to ~120 MiB while the modules load and
# keeps it resident for good (bench/README.md "Memory")
CMD ["node", "--max-semi-space-size=16", "server/dist/main.js"]
