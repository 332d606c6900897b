package main

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestVersionOf(t *testing.T) {
	dep := func(m *debug.Module) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Path: "example.com/svc", Version: "(devel)"},
			Deps: []*debug.Module{{Path: "github.com/dave/jennifer", Version: "v1.7.1"}, m}}
	}
	for _, tc := range []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		{"no build info", nil, "(devel)"},
		{"main module, no VCS stamp", &debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: "(devel)"}}, "(devel)"},
		// Go 1.24+ stamps the main module from git: not deterministic.
		{"main module, VCS stamp", &debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: "v0.0.0-20260101120000-0123456789ab+dirty"}}, "(devel)"},
		{"go tool in a user's module", dep(&debug.Module{Path: modulePath, Version: "v0.4.0"}), "v0.4.0"},
		{"pseudo-version dependency", dep(&debug.Module{Path: modulePath, Version: "v0.4.1-0.20260101120000-0123456789ab"}), "v0.4.1-0.20260101120000-0123456789ab"},
		{"replaced by a directory", dep(&debug.Module{Path: modulePath, Version: "v0.0.0-00010101000000-000000000000",
			Replace: &debug.Module{Path: "../.."}}), "(devel)"},
		{"replaced by a fork's version", dep(&debug.Module{Path: modulePath, Version: "v0.4.0",
			Replace: &debug.Module{Path: "example.com/fork/luagen", Version: "v0.4.0-fix1"}}), "v0.4.0-fix1"},
		{"not among the dependencies", dep(&debug.Module{Path: "example.com/other", Version: "v1.0.0"}), "(devel)"},
	} {
		assert.Equal(t, tc.want, versionOf(tc.bi), tc.name)
	}
}

func TestVersionCommand(t *testing.T) {
	// Tests run as luagen's own module: "(devel)".
	assert.Equal(t, result{0, "luagen (devel)\n", ""}, luagen(t, nil, "version"))
	r := luagen(t, nil, "version", "extra")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, `unexpected argument "extra"`)
	r = luagen(t, nil, "help")
	assert.Contains(t, r.stdout, "\tluagen version\n")
}
