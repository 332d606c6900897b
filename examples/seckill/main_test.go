package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/redistest"
)

// runJSON runs the demo with argv, which asks for -json, requires exit
// code 0 and returns the decoded report and what went to stderr.
func runJSON(t *testing.T, argv ...string) (rep map[string]any, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(argv, &out, &errOut)
	require.Equal(t, 0, code, errOut.String())
	require.NoError(t, json.Unmarshal(out.Bytes(), &rep))
	return rep, errOut.String()
}

// The demo on its embedded server: the JSON contract and the audit.
func TestRunEmbeddedJSON(t *testing.T) {
	rep, stderr := runJSON(t, "-buyers", "400", "-stock", "50", "-qty", "2", "-limit", "2", "-json")
	for _, k := range []string{"sold", "refused", "oversold", "errors", "ops_per_sec", "p99_us"} {
		assert.Contains(t, rep, k)
	}
	assert.Equal(t, 25.0, rep["sold"])
	assert.Equal(t, 50.0, rep["units_sold"])
	assert.Equal(t, 375.0, rep["refused"])
	assert.Equal(t, 0.0, rep["oversold"])
	assert.Equal(t, 0.0, rep["errors"])
	assert.Equal(t, 25.0, rep["records"])
	assert.Equal(t, []any{}, rep["differences"])
	assert.Contains(t, stderr, "seckill: reconciling the stock counter with 25 sales (stock.Reconcile)…\n")
	assert.Regexp(t, `seckill: reconciled in \S+: 0 differences, 25 orders recorded as sold, 0 units left\n`, stderr)
}

// The acceptance run, on a real redis-server: 5,000 buyers for 300
// units sell exactly 300, and the demo leaves no keys behind.
func TestRunOnRealServer(t *testing.T) {
	srv := redistest.Start(t)
	rep, _ := runJSON(t, "-buyers", "5000", "-stock", "300", "-redis", srv.Addr, "-json")
	assert.Equal(t, 300.0, rep["sold"])
	assert.Equal(t, 4700.0, rep["refused"])
	assert.Equal(t, 0.0, rep["oversold"])
	assert.Equal(t, 0.0, rep["errors"])
	assert.Equal(t, 0.0, rep["stock_left"])
	assert.Equal(t, "0", srv.Do(t, "DBSIZE"), "the demo deletes its SKU's keys")
}

// -coalesce merges concurrent Deducts into server-side runs: the same
// outcome, on the embedded server and on a real one.
func TestRunCoalesced(t *testing.T) {
	srv := redistest.Start(t)
	for _, redis := range []string{"", srv.Addr} {
		rep, _ := runJSON(t, "-buyers", "2000", "-stock", "300", "-coalesce", "-redis", redis, "-json")
		assert.Equal(t, true, rep["coalesce"])
		assert.Equal(t, 300.0, rep["sold"])
		assert.Equal(t, 1700.0, rep["refused"])
		assert.Equal(t, 0.0, rep["oversold"])
		assert.Equal(t, 0.0, rep["errors"])
		assert.Equal(t, 300.0, rep["records"])
		assert.Equal(t, []any{}, rep["differences"])
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	assert.Equal(t, 2, run([]string{"-limit", "-1"}, &out, &errOut))
	assert.Contains(t, errOut.String(), "-limit must be >= 0")
}
