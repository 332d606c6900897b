#!/usr/bin/env bash
# Walks the README's "Use luagen in your module" path on a copy of
# examples/ratelimit in an empty directory outside the repository, as a
# service of one's own would: its go.mod starts without luagen, the README's
# commands add the tool, tidy, generate, vet and test it. `make test` runs it.
#
# What differs from a user's machine, and why:
#  1. The copy's go.mod says `replace github.com/luagen/luagen => <this
#     checkout>` (an absolute path), so the commands build this commit of
#     luagen rather than a published version.
#  2. `go get -tool github.com/luagen/luagen/cmd/luagen@latest` runs with
#     GOPROXY set to its proxy URLs joined by '|' and followed by '|off'
#     ("direct" left out). luagen is not published, so no proxy has a
#     version of it. proxy.golang.org answers 404/410 for a module it cannot
#     find; the go command takes that as "no such module" and uses the
#     replace (cmd/go/internal/modload/query.go, replacementRepo.Versions).
#     A proxy that answers 403 instead, as the one this CI reaches does,
#     makes it a hard error, and "direct" fails on a machine that cannot
#     reach github.com; '|' moves on after any error and "off" answers
#     "not found", so the replace is used there too. Checksums of the other
#     modules still come from GOSUMDB (through the proxy). The tidy, vet
#     and test steps run with GOPROXY as it is.
# Every other command runs verbatim.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
go=${GO:-go}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
svc=$work/ratelimit
cp -R "$repo/examples/ratelimit" "$svc"
cd "$svc"
step() { echo "+ (in $svc) $*"; }

# The committed example must be tidy, or `go test` fails inside the
# repository with "missing go.sum entry".
$go mod edit -replace "github.com/luagen/luagen=$repo"
step go mod tidy -diff
$go mod tidy -diff || { echo "examples/ratelimit is not tidy: run go mod tidy there and commit go.mod and go.sum"; exit 1; }
cp go.mod "$work/go.mod.committed"

# Start where a user starts: a module whose go.mod does not know luagen.
$go mod edit -droptool github.com/luagen/luagen/cmd/luagen -droprequire github.com/luagen/luagen

proxies=$($go env GOPROXY | tr ',|' '\n\n' | grep -vx -e direct -e off -e '' | tr '\n' '|' || true)
step "GOPROXY='${proxies}off'" go get -tool github.com/luagen/luagen/cmd/luagen@latest
GOPROXY="${proxies}off" $go get -tool github.com/luagen/luagen/cmd/luagen@latest

step go mod tidy
$go mod tidy
if ! diff -u "$work/go.mod.committed" go.mod; then
	echo "the README's commands give another go.mod than examples/ratelimit's (above); update one of them"
	exit 1
fi

# go generate must find the committed generated files up to date.
cp -R "$svc" "$work/before"
step go generate ./...
$go generate ./...
if ! diff -ru "$work/before" "$svc"; then
	echo "go generate ./... changed examples/ratelimit (above): run it there and commit the result"
	exit 1
fi

step go vet ./...
$go vet ./...
step go test -race ./...
$go test -race ./...
