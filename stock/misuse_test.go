package stock_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/runtime"
	"github.com/luagen/luagen/stock"
)

// The generated New refuses a nil executor where the mistake is made, and
// the methods of a zero Scripts return runtime.ErrNilExecutor instead of a
// nil-pointer panic deep in runtime; a nil ctx is runtime.ErrNilContext.
func TestGeneratedMisuse(t *testing.T) {
	assert.PanicsWithValue(t, "stock.New: the runtime.Executor is nil", func() { stock.New(nil) })
	k := keysFor("misuse")
	keys := stock.DeductKeys{Stock: k.Stock, Orders: k.Orders, Buyers: k.Buyers}
	args := stock.DeductArgs{Order: "o1", Buyer: "u1", Qty: 1, At: time.UnixMilli(1)}
	var zero stock.Scripts
	_, err := zero.Deduct(context.Background(), keys, args)
	assert.ErrorIs(t, err, runtime.ErrNilExecutor)
	assert.ErrorIs(t, zero.Preload(context.Background()), runtime.ErrNilExecutor)
	var b runtime.Batch
	f := zero.QueueDeduct(&b, keys, args)
	assert.ErrorIs(t, b.Send(context.Background()), runtime.ErrNilExecutor)
	assert.ErrorIs(t, f.Err(), runtime.ErrNilExecutor)
	var nilCtx context.Context
	_, err = stock.New(luatest.Start(t)).Deduct(nilCtx, keys, args)
	assert.ErrorIs(t, err, runtime.ErrNilContext)
}
