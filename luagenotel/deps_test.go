package luagenotel_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRuntimeCompilesNoOpenTelemetry: the packages a program uses to run
// scripts (runtime with its rueidis executor, runtime/goredis, the
// generated stock package, lock) import no OpenTelemetry package, so a
// program that does not import luagenotel compiles none; luagenotel
// itself does (the check checks something).
func TestRuntimeCompilesNoOpenTelemetry(t *testing.T) {
	deps := func(pkg string) string {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		require.NoError(t, err, "%s", out)
		return string(out)
	}
	for _, pkg := range []string{"github.com/luagen/luagen/runtime", "github.com/luagen/luagen/runtime/goredis", "github.com/luagen/luagen/stock", "github.com/luagen/luagen/lock"} {
		assert.NotContains(t, deps(pkg), "go.opentelemetry.io/", pkg)
	}
	assert.True(t, strings.Contains(deps("github.com/luagen/luagen/luagenotel"), "go.opentelemetry.io/otel/trace\n"))
}
