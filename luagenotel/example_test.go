package luagenotel_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/rueidis"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/luagen/luagen/luagenotel"
	"github.com/luagen/luagen/runtime"
	"github.com/luagen/luagen/stock"
)

// Example runs the generated stock.Deduct twice through a hooked rueidis
// executor (on an embedded miniredis) and prints the spans and the
// calls metric the OpenTelemetry SDK received. The first call finds the
// script cache empty (NOSCRIPT, then EVAL); the second is refused with
// the declared stock.ErrOutOfStock, an answer and not a failure: its span
// keeps status Unset.
func Example() {
	ctx := context.Background()
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	hook, err := luagenotel.NewHook(luagenotel.WithTracerProvider(tp), luagenotel.WithMeterProvider(mp))
	if err != nil {
		panic(err)
	}

	mr := miniredis.NewMiniRedis()
	if err := mr.Start(); err != nil {
		panic(err)
	}
	defer mr.Close()
	client, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{mr.Addr()}, DisableCache: true, ForceSingleClient: true})
	if err != nil {
		panic(err)
	}
	defer client.Close()
	// miniredis rejects the Redis 7 shebang: WithoutShebang (which keeps
	// the hook of the executor it wraps).
	scripts := stock.New(runtime.WithoutShebang(runtime.NewRueidisExecutor(client, runtime.WithHook(hook))))

	k := stock.KeysFor("shop:", "42")
	mr.Set(k.Stock, "1")
	for _, buyer := range []string{"u1", "u2"} {
		left, err := scripts.Deduct(ctx, k.Deduct(), stock.DeductArgs{Order: "o-" + buyer, Buyer: buyer, Qty: 1, At: time.UnixMilli(1700000000000)})
		fmt.Printf("%s: left %d, out of stock %v\n", buyer, left, errors.Is(err, stock.ErrOutOfStock))
	}

	for _, s := range spans.GetSpans() {
		fmt.Printf("span %q kind=%s status=%s\n", s.Name, s.SpanKind, s.Status.Code)
		for _, kv := range s.Attributes {
			if kv.Key == "server.port" {
				continue // miniredis' random port
			}
			fmt.Printf("  %s=%s\n", kv.Key, kv.Value.Emit())
		}
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		panic(err)
	}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		switch data := m.Data.(type) {
		case metricdata.Sum[int64]:
			if m.Name != "luagen.script.calls" && m.Name != "luagen.script.fallbacks" {
				continue
			}
			var lines []string
			for _, dp := range data.DataPoints {
				lines = append(lines, fmt.Sprintf("%s{%s} %d", m.Name, labels(dp.Attributes, "luagen.outcome", "luagen.error.name", "db.operation.name", "luagen.fallback"), dp.Value))
			}
			slices.Sort(lines)
			fmt.Println(strings.Join(lines, "\n"))
		case metricdata.Histogram[float64]:
			var n uint64
			for _, dp := range data.DataPoints {
				n += dp.Count
			}
			fmt.Printf("%s: %d calls recorded, unit %s\n", m.Name, n, m.Unit)
		}
	}
	// Output:
	// u1: left 0, out of stock false
	// u2: left 0, out of stock true
	// span "EVAL stock.Deduct" kind=client status=Unset
	//   db.system.name=redis
	//   luagen.script=stock.Deduct
	//   luagen.script.file=lua/stock/deduct.lua
	//   db.operation.name=EVAL
	//   db.query.summary=EVAL stock.Deduct
	//   luagen.outcome=ok
	//   luagen.attempts=1
	//   server.address=127.0.0.1
	//   luagen.noscript=1
	// span "EVALSHA stock.Deduct" kind=client status=Unset
	//   db.system.name=redis
	//   luagen.script=stock.Deduct
	//   luagen.script.file=lua/stock/deduct.lua
	//   db.operation.name=EVALSHA
	//   db.query.summary=EVALSHA stock.Deduct
	//   luagen.outcome=declared
	//   luagen.attempts=1
	//   server.address=127.0.0.1
	//   luagen.error.name=OutOfStock
	// db.client.operation.duration: 2 calls recorded, unit s
	// luagen.script.calls{luagen.outcome=declared luagen.error.name=OutOfStock db.operation.name=EVALSHA} 1
	// luagen.script.calls{luagen.outcome=ok db.operation.name=EVAL} 1
	// luagen.script.fallbacks{luagen.fallback=noscript} 1
}

// labels formats the attributes of set named by keys, in keys' order.
func labels(set attribute.Set, keys ...attribute.Key) string {
	var parts []string
	for _, k := range keys {
		if v, ok := set.Value(k); ok {
			parts = append(parts, string(k)+"="+v.Emit())
		}
	}
	return strings.Join(parts, " ")
}
