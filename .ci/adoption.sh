#!/usr/bin/env bash
# Walks the README's "Use luagen in your module" path on a copy of
# examples/ratelimit in an empty directory outside the repository, as a
# service of one's own would: its go.mod starts without luagen, the README's
# commands add the tool, tidy, generate, vet and test it. `make test` runs it.
#
# What differs from a user's machine: the replace points at this checkout
# (an absolute path), so the commands build this commit of luagen. GOPROXY
# for `go get -tool` is the README's ('https://proxy.golang.org|off'): no
# proxy has luagen yet, and a proxy that answers 403 rather than 404/410
# for an unknown module would make the lookup a hard error; '|' moves on
# after any error and "off" answers "not found", so the go command uses the
# replace (cmd/go/internal/modload/query.go, replacementRepo.Versions).
# Every other command runs verbatim, in the README's order.
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

step "GOPROXY='https://proxy.golang.org|off'" go get -tool github.com/luagen/luagen/cmd/luagen@latest
GOPROXY='https://proxy.golang.org|off' $go get -tool github.com/luagen/luagen/cmd/luagen@latest

# Step 3 in the README's order: generate, tidy, vet, test.
cp -R "$svc" "$work/before"
step go generate ./...
$go generate ./...
if ! diff -ru "$work/before" "$svc"; then
	echo "go generate ./... changed examples/ratelimit (above): run it there and commit the result"
	exit 1
fi

step go mod tidy
$go mod tidy
if ! diff -u "$work/go.mod.committed" go.mod; then
	echo "the README's commands give another go.mod than examples/ratelimit's (above); update one of them"
	exit 1
fi
# Tidy must leave nothing for go generate to change either.
rm -rf "$work/before"
cp -R "$svc" "$work/before"
$go generate ./...
if ! diff -ru "$work/before" "$svc"; then
	echo "go generate ./... after go mod tidy changed examples/ratelimit (above)"
	exit 1
fi
step go mod tidy -diff
$go mod tidy -diff

# The README's CI check passes on the fresh tree and names a file edited
# since (the edit is undone before the tests).
step go tool luagen diff ./...
$go tool luagen diff ./...
cp allow.lua.go "$work/allow.lua.go"
echo '// edited' >>allow.lua.go
if out=$($go tool luagen diff ./...) || [ "$out" != "allow.lua.go: stale" ]; then
	echo "go tool luagen diff ./... after editing allow.lua.go: want \"allow.lua.go: stale\" and exit 1, got: $out"
	exit 1
fi
cp "$work/allow.lua.go" allow.lua.go

step go vet ./...
$go vet ./...
step go test -race ./...
$go test -race ./...
