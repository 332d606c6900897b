package luagenotel_test

import (
	"context"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/luagen/luagen/luagenotel"
	"github.com/luagen/luagen/redistest"
	"github.com/luagen/luagen/runtime"
)

var benchScript = runtime.NewScript(runtime.ScriptSpec{Name: "bench.OK", File: "lua/bench/ok.lua", Body: "return 1"})

// BenchmarkHook measures one call on a real redis-server through rueidis
// with no hook and with the OpenTelemetry hook on a real SDK (always
// sampled, spans to a no-op exporter, metrics to a manual reader that is
// never read); runtime's BenchmarkHook has the no-op hook.
//
//	go test -run '^$' -bench Hook -benchtime 2s ./luagenotel ./runtime
func BenchmarkHook(b *testing.B) {
	ctx := context.Background()
	srv := redistest.Start(b)
	c := srv.Client(b)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithSpanProcessor(sdktrace.NewSimpleSpanProcessor(tracetest.NewNoopExporter())))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	h, err := luagenotel.NewHook(luagenotel.WithTracerProvider(tp), luagenotel.WithMeterProvider(mp))
	if err != nil {
		b.Fatal(err)
	}
	keys, args := []string{"{a}k"}, []string{"v"}
	for _, e := range []struct {
		name string
		e    runtime.Executor
	}{{"none", runtime.NewRueidisExecutor(c)}, {"otel", runtime.NewRueidisExecutor(c, runtime.WithHook(h))}} {
		b.Run(e.name, func(b *testing.B) {
			if err := benchScript.Load(ctx, e.e); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := benchScript.Exec(ctx, e.e, keys, args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
