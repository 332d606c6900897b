package luagenotel_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/luagen/luagen/lock"
	"github.com/luagen/luagen/luagenotel"
	"github.com/luagen/luagen/redistest"
	"github.com/luagen/luagen/runtime"
	"github.com/luagen/luagen/stock"
)

// telemetry is an SDK with in-memory exporters and a Hook on it.
type telemetry struct {
	spans  *tracetest.InMemoryExporter
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
	hook   *luagenotel.Hook
}

func newTelemetry(t testing.TB) *telemetry {
	tel := &telemetry{spans: tracetest.NewInMemoryExporter(), reader: sdkmetric.NewManualReader()}
	tel.tp = sdktrace.NewTracerProvider(sdktrace.WithSyncer(tel.spans), sdktrace.WithSampler(sdktrace.AlwaysSample()))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(tel.reader))
	h, err := luagenotel.NewHook(luagenotel.WithTracerProvider(tel.tp), luagenotel.WithMeterProvider(mp))
	require.NoError(t, err)
	tel.hook = h
	return tel
}

// metrics collects the metrics by name.
func (tel *telemetry) metrics(t testing.TB) map[string]metricdata.Metrics {
	var rm metricdata.ResourceMetrics
	require.NoError(t, tel.reader.Collect(context.Background(), &rm))
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

// sum adds up the data points of a counter whose attributes include
// every one of match.
func sum(m metricdata.Metrics, match ...attribute.KeyValue) int64 {
	var n int64
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		if hasAll(dp.Attributes, match) {
			n += dp.Value
		}
	}
	return n
}

func hasAll(set attribute.Set, match []attribute.KeyValue) bool {
	for _, kv := range match {
		if v, ok := set.Value(kv.Key); !ok || v != kv.Value {
			return false
		}
	}
	return true
}

// TestSeckill runs the seckill demo's race (examples/seckill: buyers
// racing for units of one SKU through stock.Deduct, merged by a
// Coalescer, then stock.Reconcile) on a real redis-server, under a lock
// for one step as a service might, and checks what OpenTelemetry
// received: a span per call, named after the script, with real
// attributes, under the caller's span; the duration histogram and the
// counters adding up to the calls made. With -v it prints the trace and
// the metrics as text.
func TestSeckill(t *testing.T) {
	ctx := context.Background()
	tel := newTelemetry(t)
	srv := redistest.Start(t)
	client := srv.Client(t)
	exec := runtime.NewRueidisExecutor(client, runtime.WithHook(tel.hook))
	scripts := stock.New(runtime.NewCoalescer(exec))

	const buyers, units, concurrency = 200, 50, 16
	k := stock.KeysFor("seckill:", "42")
	srv.Do(t, "SET", k.Stock, strconv.Itoa(units))

	tracer := tel.tp.Tracer("seckill")
	ctx, root := tracer.Start(ctx, "seckill race")
	var (
		wg            sync.WaitGroup
		mu            sync.Mutex
		sold, refused int
	)
	next := make(chan int, buyers)
	for i := range buyers {
		next <- i
	}
	close(next)
	for range concurrency {
		wg.Go(func() {
			for i := range next {
				ctx, span := tracer.Start(ctx, "buy")
				_, err := scripts.Deduct(ctx, k.Deduct(), stock.DeductArgs{Order: "o" + strconv.Itoa(i), Buyer: "u" + strconv.Itoa(i), Qty: 1, At: time.Now()})
				span.End()
				mu.Lock()
				switch {
				case err == nil:
					sold++
				case errors.Is(err, stock.ErrOutOfStock):
					refused++
				default:
					t.Errorf("buyer %d: %v", i, err)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	rec, err := scripts.Reconcile(ctx, k.Audit(), units)
	require.NoError(t, err)
	require.True(t, rec.OK(), "%v", rec.Differences)

	// The operator's restock runs under a lock whose scripts go through
	// the same hook, and whose events feed the same meter.
	locks, err := lock.NewClient(client, lock.WithExecutor(exec), lock.WithHook(tel.hook.LockEvents()))
	require.NoError(t, err)
	defer locks.Close()
	m, err := lock.New(locks, "restock:42")
	require.NoError(t, err)
	held, err := m.Lock(ctx)
	require.NoError(t, err)
	require.NoError(t, held.Err())
	require.NoError(t, m.Unlock(ctx))
	root.End()

	assert.Equal(t, units, sold)
	assert.Equal(t, buyers-units, refused)

	// Spans: every Deduct span is a CLIENT span under its buyer's span.
	spans := tel.spans.GetSpans()
	byName := map[string]int{}
	parents := map[trace.SpanID]string{}
	for _, s := range spans {
		byName[s.Name]++
		parents[s.SpanContext.SpanID()] = s.Name
	}
	deducts := 0
	for _, s := range spans {
		if attr(s, "luagen.script") != "stock.Deduct" {
			continue
		}
		deducts++
		assert.Equal(t, trace.SpanKindClient, s.SpanKind)
		assert.Equal(t, "buy", parents[s.Parent.SpanID()])
		assert.Equal(t, "redis", attr(s, "db.system.name"))
		assert.Equal(t, "lua/stock/deduct.lua", attr(s, "luagen.script.file"))
		assert.Equal(t, "127.0.0.1", attr(s, "server.address"))
		assert.Equal(t, strconv.Itoa(srv.Port), attr(s, "server.port"))
		assert.Contains(t, []string{"ok", "declared"}, attr(s, "luagen.outcome"))
		assert.NotEmpty(t, attr(s, "luagen.merged.size"))
	}
	assert.Equal(t, buyers, deducts)
	assert.Equal(t, 1, byName["EVAL_RO stock.Audit"]+byName["EVALSHA_RO stock.Audit"], "Reconcile runs stock.Audit")

	mets := tel.metrics(t)
	calls := mets["luagen.script.calls"]
	deduct := attribute.String("luagen.script", "stock.Deduct")
	assert.Equal(t, int64(units), sum(calls, deduct, attribute.String("luagen.outcome", "ok")))
	assert.Equal(t, int64(buyers-units), sum(calls, deduct, attribute.String("luagen.outcome", "declared"), attribute.String("luagen.error.name", "OutOfStock")))
	var durations uint64
	for _, dp := range mets["db.client.operation.duration"].Data.(metricdata.Histogram[float64]).DataPoints {
		durations += dp.Count
		assert.Positive(t, dp.Sum)
	}
	assert.Equal(t, uint64(sum(calls)), durations, "one duration per call")
	var merged uint64
	for _, dp := range mets["luagen.script.merged.size"].Data.(metricdata.Histogram[int64]).DataPoints {
		merged += dp.Count
	}
	assert.Equal(t, uint64(buyers), merged, "every Deduct went through the Coalescer")
	assert.Equal(t, int64(1), sum(mets["luagen.lock.acquires"], attribute.String("luagen.lock.result", "acquired")))
	assert.Equal(t, int64(1), sum(mets["luagen.lock.releases"]))

	t.Log("trace (first buyers, the reconciliation and the lock):\n" + renderTrace(spans, 3))
	t.Log("metrics:\n" + renderMetrics(mets))
}

// attr returns the span's attribute k as text, or "".
func attr(s tracetest.SpanStub, k attribute.Key) string {
	for _, kv := range s.Attributes {
		if kv.Key == k {
			return kv.Value.Emit()
		}
	}
	return ""
}

// renderTrace draws the span tree, showing the first `first` children of
// the root's "buy" spans and every other span.
func renderTrace(spans tracetest.SpanStubs, first int) string {
	children := map[trace.SpanID][]tracetest.SpanStub{}
	var roots []tracetest.SpanStub
	for _, s := range spans {
		if s.Parent.IsValid() {
			children[s.Parent.SpanID()] = append(children[s.Parent.SpanID()], s)
		} else {
			roots = append(roots, s)
		}
	}
	for _, c := range children {
		slices.SortFunc(c, func(a, b tracetest.SpanStub) int { return a.StartTime.Compare(b.StartTime) })
	}
	var b strings.Builder
	var draw func(s tracetest.SpanStub, depth int)
	draw = func(s tracetest.SpanStub, depth int) {
		indent := strings.Repeat("  ", depth)
		fmt.Fprintf(&b, "%s%s  [%s, %s", indent, s.Name, s.SpanKind, s.EndTime.Sub(s.StartTime).Round(time.Microsecond))
		if s.Status.Code.String() != "Unset" {
			fmt.Fprintf(&b, ", status %s %q", s.Status.Code, s.Status.Description)
		}
		b.WriteString("]\n")
		for _, kv := range s.Attributes {
			fmt.Fprintf(&b, "%s    %s=%s\n", indent, kv.Key, kv.Value.Emit())
		}
		kids := children[s.SpanContext.SpanID()]
		buys := 0
		for _, c := range kids {
			if c.Name == "buy" {
				if buys++; buys > first {
					continue
				}
			}
			draw(c, depth+1)
		}
		if buys > first {
			fmt.Fprintf(&b, "%s  ... %d more buy spans\n", indent, buys-first)
		}
	}
	for _, r := range roots {
		draw(r, 0)
	}
	return b.String()
}

// renderMetrics prints every data point, one a line, sorted.
func renderMetrics(mets map[string]metricdata.Metrics) string {
	var lines []string
	labels := func(set attribute.Set) string {
		var parts []string
		for _, kv := range set.ToSlice() {
			parts = append(parts, string(kv.Key)+"="+kv.Value.Emit())
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	for name, m := range mets {
		switch data := m.Data.(type) {
		case metricdata.Sum[int64]:
			for _, dp := range data.DataPoints {
				lines = append(lines, fmt.Sprintf("%s%s = %d", name, labels(dp.Attributes), dp.Value))
			}
		case metricdata.Histogram[float64]:
			for _, dp := range data.DataPoints {
				lines = append(lines, fmt.Sprintf("%s%s count=%d sum=%.6f %s buckets=%v counts=%v", name, labels(dp.Attributes), dp.Count, dp.Sum, m.Unit, dp.Bounds, dp.BucketCounts))
			}
		case metricdata.Histogram[int64]:
			for _, dp := range data.DataPoints {
				lines = append(lines, fmt.Sprintf("%s%s count=%d sum=%d buckets=%v counts=%v", name, labels(dp.Attributes), dp.Count, dp.Sum, dp.Bounds, dp.BucketCounts))
			}
		}
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// TestScriptErrorSpan: an error raised in a script sets status Error and
// error.type: the reply's code for a failed redis.call, "script_error"
// for a Lua runtime error (whose text names a line) and for a reply
// without a code word (rueidis strips a leading "ERR ").
func TestScriptErrorSpan(t *testing.T) {
	ctx := context.Background()
	tel := newTelemetry(t)
	srv := redistest.Start(t)
	exec := runtime.NewRueidisExecutor(srv.Client(t), runtime.WithHook(tel.hook))
	srv.Do(t, "SET", "{e}s", "text")
	for _, body := range []string{"return redis.call('LPUSH', KEYS[1], 'x')", "return nil + 1"} {
		s := runtime.NewScript(runtime.ScriptSpec{Name: "e.Fail", File: "lua/e/fail.lua", Body: body})
		_, err := s.Exec(ctx, exec, []string{"{e}s"}, nil)
		require.Error(t, err)
	}
	spans := tel.spans.GetSpans()
	require.Len(t, spans, 2)
	for i, want := range []string{"WRONGTYPE", "script_error"} {
		assert.Equal(t, "Error", spans[i].Status.Code.String())
		assert.Equal(t, want, attr(spans[i], "error.type"))
		assert.Equal(t, "script_error", attr(spans[i], "luagen.outcome"))
	}
	assert.Equal(t, "WRONGTYPE", attr(spans[0], "db.response.status_code"))
}
