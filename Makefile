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

## generated: fail when `go generate ./...` changes a generated file or adds
## one that is not committed yet.
generated:
	$(GO) generate ./...
	@if [ -n "$$(git status --porcelain -- '*.lua.go')" ]; then \
		echo "go generate ./... changed or added generated files; commit them with their .lua scripts:"; \
		git status --short -- '*.lua.go'; exit 1; \
	fi

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
