package main

import (
	"fmt"
	"runtime/debug"

	"github.com/luagen/luagen/gen"
)

// modulePath is luagen's module, looked up in the build information.
const modulePath = "github.com/luagen/luagen"

func init() {
	register(&command{
		name:  "version",
		args:  "",
		short: "print luagen's version, as generated files record it",
		run: func(e *env, args []string) int {
			fs := newFlagSet(e, "version")
			rest, status, ok := parseFlags(fs, args)
			if !ok {
				return status
			}
			if len(rest) > 0 {
				fmt.Fprintf(e.stderr, "luagen version: unexpected argument %q\n", rest[0])
				return exitUsage
			}
			fmt.Fprintf(e.stdout, "luagen %s\n", version())
			return exitOK
		},
	})
}

// version is luagen's version for the header of generated files.
func version() string {
	bi, _ := debug.ReadBuildInfo()
	return versionOf(bi)
}

// versionOf returns the version of luagen's module in bi: the module
// version when luagen is a dependency (go tool luagen in a user's module,
// or go install …@v1.2.3), and gen.DevelVersion when it is not a released
// version:
//   - luagen is the main module (go run ./cmd/luagen, go tool luagen in
//     this repository). Since Go 1.24 go build stamps a main module with a
//     version from git (v0.0.0-<time>-<commit>+dirty), which changes with
//     every commit: recorded in generated files, it would make them differ
//     between checkouts and between a commit and its parent.
//   - luagen is replaced by a directory (replace … => ../..): the code is
//     whatever is in that directory, which has no version; the example
//     module in this repository generates the same bytes there as in a copy
//     elsewhere.
//   - there is no build information (a binary built without modules).
//
// A replacement by another module version records that version.
func versionOf(bi *debug.BuildInfo) string {
	if bi == nil || bi.Main.Path == modulePath {
		return gen.DevelVersion
	}
	for _, m := range bi.Deps {
		if m.Path != modulePath {
			continue
		}
		if m.Replace != nil {
			m = m.Replace // a directory has no version
		}
		if m.Version == "" {
			return gen.DevelVersion
		}
		return m.Version
	}
	return gen.DevelVersion
}
