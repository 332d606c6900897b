# luagen's developer commands. `make test` is what CI runs (.ci/run).
SHELL := /bin/bash
GO ?= go
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: test redis vet generated adoption unit demo cluster bench

## test: everything CI checks: redis-server present, go vet, generated code
## fresh, every test with the race detector, and the README's adoption path
## on a copy of examples/ratelimit outside the repository.
test: redis vet generated
	$(GO) test -race -count=1 -timeout 30m ./...
	GO=$(GO) .ci/adoption.sh

## redis: install redis-server 7 (Debian package) when it is missing, and
## fail with a clear message when the one in PATH is not version 7.
redis:
	@if ! command -v redis-server >/dev/null 2>&1; then \
		echo "redis-server not found; installing it with apt-get"; \
		$(SUDO) apt-get update -qq && $(SUDO) DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null; \
	fi
	@v=$$(redis-server --version | sed -n 's/.* v=\([0-9][0-9.]*\).*/\1/p'); \
	case "$$v" in \
		7.*) echo "redis-server $$v";; \
		*) echo "luagen's tests need redis-server 7 (luatest mirrors Redis 7.0); $$(command -v redis-server) is version '$$v'."; \
		   echo "Install redis-server 7 (Debian 12 and Ubuntu 24.04 ship 7.0) first in PATH."; exit 1;; \
	esac

vet:
	$(GO) vet ./...
	cd bench && $(GO) vet ./...
	@test -z "$$(gofmt -l $$(git -c core.quotepath=off ls-files '*.go'))" || { echo "gofmt would change:"; gofmt -l $$(git -c core.quotepath=off ls-files '*.go'); exit 1; }

## generated: fail when a generated file is missing, stale, or left over
## from a deleted script. `luagen diff ./...` runs every go:generate line
## that runs luagen generate, with that line's arguments, from its package's
## directory (generate's own code path, writing nothing), and names each file
## generate would change; no list of packages to keep up to date.
## examples/ratelimit and bench are modules of their own, which ./... does
## not reach.
generated:
	@status=0; \
	$(GO) tool luagen diff ./... || status=1; \
	for m in examples/ratelimit bench; do \
		if ! out=$$(cd $$m && $(GO) tool luagen diff ./... 2>&1); then \
			echo "in $$m:"; echo "$$out"; status=1; \
		fi; \
	done; \
	if [ $$status != 0 ]; then echo "generated code is out of date: run go generate ./... and commit the *.lua.go files with their scripts"; fi; \
	exit $$status

## adoption: the README's "Use luagen in your module" commands (go get
## -tool, go mod tidy, go generate changing nothing, go vet, go test -race)
## on a copy of examples/ratelimit in a temporary directory; see the script
## for the one line that differs from what a user types. examples/ratelimit
## is a module of its own, so ./... above does not reach it.
adoption: redis
	GO=$(GO) .ci/adoption.sh

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
