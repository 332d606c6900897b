package stockfn_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/internal/exectest"
	"github.com/luagen/luagen/internal/stockfn"
	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/redistest"
	"github.com/luagen/luagen/runtime"
	"github.com/luagen/luagen/stock"
)

// The real-server suites of package stock (the seckill race, the fault
// tests with FUNCTION FLUSH, a restart, a failover and a killed primary,
// batches on a cluster) run against this package too: see
// stock/mode_test.go. The tests here cover what only function mode has.

var at = time.UnixMilli(1700000000123)

func order(id, buyer string, qty int64) stockfn.DeductArgs {
	return stockfn.DeductArgs{Order: id, Buyer: buyer, Qty: qty, Limit: 0, At: at}
}

// The function library is what NewLibrary builds from lua/stock, and loads
// on a real server with one function per script and the shebang's flags.
func TestLibraryOnRealServer(t *testing.T) {
	lib := stockfn.Library()
	assert.Equal(t, "stockfn", lib.Package())
	assert.Equal(t, "stockfn_"+lib.Hash(), lib.Name())
	exectest.Run(t, func(t *testing.T, k exectest.Kind) {
		srv := redistest.Start(t)
		s := stockfn.New(k.Single(t, srv))
		require.NoError(t, s.Preload(context.Background()))
		list := srv.Do(t, "FUNCTION", "LIST", "LIBRARYNAME", lib.Name())
		for _, sc := range stockfn.All() {
			assert.Contains(t, list, sc.FunctionName())
		}
		assert.Contains(t, list, "no-writes", "audit.lua's flags=no-writes")
		assert.Contains(t, list, "Deduct takes qty units of a SKU", "the header is the description")
	})
}

// The same calls in EVAL mode (package stock) and function mode, offline:
// the same results, the same typed errors, and a runtime error names the
// same .lua line.
func TestOfflineSameAsEvalMode(t *testing.T) {
	ctx := context.Background()
	type outcome struct {
		v   string
		err string
	}
	run := func(deduct func(k [3]string, a stockfn.DeductArgs) (int64, error),
		cancel func(k [3]string, o string) (int64, error), r *luatest.Redis) []outcome {
		k := [3]string{"s:{1}:stock", "s:{1}:orders", "s:{1}:buyers"}
		var out []outcome
		rec := func(v int64, err error) {
			o := outcome{v: strconv.FormatInt(v, 10)}
			if err != nil {
				o.err = strings.ReplaceAll(err.Error(), "stockfn", "stock")
				var se *runtime.ScriptError
				if errors.As(err, &se) {
					o.err = fmt.Sprintf("%s:%d %s", se.File, se.Line, se.Message())
				}
			}
			out = append(out, o)
		}
		rec(deduct(k, order("o1", "u1", 2)))
		r.Set(k[0], "5")
		rec(deduct(k, order("o1", "u1", 2)))
		rec(deduct(k, order("o1", "u1", 2)))
		rec(deduct(k, order("o2", "u2", 9)))
		rec(deduct(k, order("", "u2", 1)))
		rec(deduct(k, order("o1", "u9", 2)))
		rec(cancel(k, "o1"))
		rec(cancel(k, "o1"))
		r.Do("DEL", k[0])
		r.Do("HSET", k[0], "f", "v")
		rec(deduct(k, order("o3", "u3", 1)))
		return out
	}
	r1 := luatest.Start(t, luatest.WithTime(at))
	s1 := stock.New(r1)
	evalMode := run(func(k [3]string, a stockfn.DeductArgs) (int64, error) {
		return s1.Deduct(ctx, stock.DeductKeys{Stock: k[0], Orders: k[1], Buyers: k[2]}, stock.DeductArgs(a))
	}, func(k [3]string, o string) (int64, error) {
		return s1.Cancel(ctx, stock.CancelKeys{Stock: k[0], Orders: k[1], Buyers: k[2]}, stock.CancelArgs{Order: o, At: at})
	}, r1)
	r2 := luatest.Start(t, luatest.WithTime(at))
	s2 := stockfn.New(r2)
	fnMode := run(func(k [3]string, a stockfn.DeductArgs) (int64, error) {
		return s2.Deduct(ctx, stockfn.DeductKeys{Stock: k[0], Orders: k[1], Buyers: k[2]}, a)
	}, func(k [3]string, o string) (int64, error) {
		return s2.Cancel(ctx, stockfn.CancelKeys{Stock: k[0], Orders: k[1], Buyers: k[2]}, stockfn.CancelArgs{Order: o, At: at})
	}, r2)
	assert.Equal(t, evalMode, fnMode)
	assert.Contains(t, fnMode[len(fnMode)-1].err, "lua/stock/deduct.lua:", "a WRONGTYPE inside the script names the .lua line")
	assert.Equal(t, fnMode[len(fnMode)-1].err[:strings.Index(fnMode[len(fnMode)-1].err, " ")],
		evalMode[len(evalMode)-1].err[:strings.Index(evalMode[len(evalMode)-1].err, " ")])
	// The call log speaks in .lua lines too.
	var lines []int
	for _, c := range r2.Calls() {
		lines = append(lines, c.Line)
	}
	var evalLines []int
	for _, c := range r1.Calls() {
		evalLines = append(evalLines, c.Line)
	}
	assert.Equal(t, evalLines, lines)
	t.Logf("%d outcomes equal in both modes", len(fnMode))
}
