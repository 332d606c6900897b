package luagenotel_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/luagen/luagen/luagenotel"
	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/stock"
)

// The hook runs offline on luatest (luatest.WithHook), with the spans a
// server gives: the first Deduct finds no script cached (EVAL after
// NOSCRIPT), the second runs as EVALSHA and is refused with the declared
// ErrOutOfStock, which leaves the span's status unset.
func TestHookOnLuatest(t *testing.T) {
	ctx := context.Background()
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	hook, err := luagenotel.NewHook(luagenotel.WithTracerProvider(tp))
	require.NoError(t, err)
	r := luatest.Start(t, luatest.WithHook(hook))
	scripts := stock.New(r)

	k := stock.KeysFor("shop:", "42")
	r.Set(k.Stock, "1")
	_, err = scripts.Deduct(ctx, k.Deduct(), stock.DeductArgs{Order: "o1", Buyer: "u1", Qty: 1, At: time.UnixMilli(1700000000000)})
	require.NoError(t, err)
	_, err = scripts.Deduct(ctx, k.Deduct(), stock.DeductArgs{Order: "o2", Buyer: "u2", Qty: 1, At: time.UnixMilli(1700000000000)})
	require.True(t, errors.Is(err, stock.ErrOutOfStock), "%v", err)

	got := spans.GetSpans()
	require.Len(t, got, 2)
	assert.Equal(t, "EVAL stock.Deduct", got[0].Name)
	assert.Equal(t, "EVALSHA stock.Deduct", got[1].Name)
	attrs := func(s tracetest.SpanStub) map[attribute.Key]string {
		m := map[attribute.Key]string{}
		for _, kv := range s.Attributes {
			m[kv.Key] = kv.Value.Emit()
		}
		return m
	}
	assert.Equal(t, "1", attrs(got[0])["luagen.noscript"])
	assert.Equal(t, "ok", attrs(got[0])["luagen.outcome"])
	assert.Equal(t, "declared", attrs(got[1])["luagen.outcome"])
	assert.Equal(t, "OutOfStock", attrs(got[1])["luagen.error.name"])
	assert.Equal(t, "Unset", got[1].Status.Code.String())
}
