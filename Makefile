# luagen's developer commands. `make test` is what CI runs (.ci/run).
SHELL := /bin/bash
GO ?= go
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: test redis vet generated unit demo cluster bench

## test: everything CI checks: redis-server present, go vet, generated code
## fresh, and every test with the race detector.
test: redis vet generated
	$(GO) test -race -count=1 -timeout 30m ./...

## redis: install redis-server 7 (Debian package) when it is missing.
redis:
	@if ! command -v redis-server >/dev/null 2>&1; then \
		echo "redis-server not found; installing it with apt-get"; \
		$(SUDO) apt-get update -qq && $(SUDO) DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null; \
	fi
	@redis-server --version

vet:
	$(GO) vet ./...
	cd bench && $(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt would change:"; gofmt -l $$(git ls-files '*.go'); exit 1; }

## generated: fail when a generated file is missing, stale, or left over
## from a deleted script. Every `//go:generate go tool luagen generate ARGS`
## line runs again as `go tool luagen diff ARGS` in its file's directory
## (generate's own code path, writing nothing), which names each file that
## generate would change; no list of packages to keep up to date.
GENERATE_LINE := ^//go:generate go tool luagen generate
generated:
	@status=0; \
	for file in $$(git grep -l '$(GENERATE_LINE) ' -- '*.go'); do \
		dir=$$(dirname "$$file"); \
		pkg=$$(sed -n 's/^package \([A-Za-z0-9_]*\).*/\1/p' "$$file" | head -n 1); \
		while IFS= read -r line; do \
			eval "args=($${line#//go:generate go tool luagen generate })"; \
			if ! out=$$(cd "$$dir" && GOPACKAGE="$$pkg" $(GO) tool luagen diff "$${args[@]}" 2>&1); then \
				echo "$$file: go tool luagen diff $${args[*]} (in $$dir):"; echo "$$out"; status=1; \
			fi; \
		done < <(grep '$(GENERATE_LINE) ' "$$file"); \
	done; \
	if [ $$status != 0 ]; then echo "generated code is out of date: run go generate ./... and commit the *.lua.go files with their scripts"; fi; \
	exit $$status

## unit: the fast tests only (no redis-server needed).
unit:
	$(GO) test -count=1 ./gen/... ./runtime/... ./cmd/...

## demo: the main job on an embedded Redis.
demo:
	$(GO) run ./examples/seckill

## cluster: run a local 3+3 Redis Cluster in the foreground (Ctrl-C stops it).
cluster: redis
	$(GO) run ./redistest/localcluster

## bench: the peer benchmarks in the separate bench/ module, against local
## redis-servers (and a 3+3 cluster); each package prints its table.
bench: redis
	cd bench && $(GO) test -run '^$$' -bench . ./...
