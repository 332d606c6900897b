package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/runtime"
)

// takeLua takes ARGV[1] units from the counter at KEYS[1] and replies
// with the units left, or -1 when fewer are left than asked.
const takeLua = `local left = tonumber(redis.call('GET', KEYS[1]) or '0')
local n = tonumber(ARGV[1])
if left < n then
  return -1
end
return redis.call('DECRBY', KEYS[1], n)
`

// ErrNotEnough is Take's error when the counter holds fewer units than
// asked: the script's reply -1, which Exec turns into this sentinel.
var ErrNotEnough = runtime.NewCodeError("inventory.Take", "NotEnough", "-1", "fewer units left than asked")

var takeScript = runtime.NewScript(runtime.ScriptSpec{
	Name:   "inventory.Take",
	File:   "inventory/take.lua",
	Body:   takeLua,
	Errors: []*runtime.CodeError{ErrNotEnough},
})

// Take takes n units from the counter at key and returns how many are
// left; ErrNotEnough when fewer than n are.
func Take(ctx context.Context, e runtime.Executor, key string, n int64) (int64, error) {
	v, err := takeScript.Exec(ctx, e, []string{key}, []string{strconv.FormatInt(n, 10)})
	if err != nil {
		return 0, err
	}
	return decodeLeft(v)
}

// QueueTake puts the call Take makes on b; its Future holds what Take
// would have returned once b is sent.
func QueueTake(b *runtime.Batch, e runtime.Executor, key string, n int64) *runtime.Future[int64] {
	return runtime.Queue(b, e, takeScript, []string{key}, []string{strconv.FormatInt(n, 10)}, decodeLeft)
}

// decodeLeft turns Take's reply into the units left.
func decodeLeft(v runtime.Value) (int64, error) {
	if v.Kind != runtime.KindInt {
		return 0, &runtime.DecodeError{Script: takeScript.Name(), Want: "int64", Got: v}
	}
	return v.Int, nil
}

// A wrapper written by hand for a script luagen does not generate: the
// script runs with EVALSHA (EVAL after NOSCRIPT), its declared reply -1
// comes back as a sentinel for errors.Is, and its calls can share a Batch.
// luatest's offline server stands in for Redis; a [runtime.NewRueidisExecutor]
// executor runs the same code on a real one.
func Example_handWritten() {
	ctx := context.Background()
	r := luatest.New()
	defer r.Close()
	r.Set("stock", "5")

	left, err := Take(ctx, r, "stock", 3)
	fmt.Println(left, err)
	_, err = Take(ctx, r, "stock", 3)
	fmt.Println(errors.Is(err, ErrNotEnough), err)

	var b runtime.Batch
	one := QueueTake(&b, r, "stock", 1)
	many := QueueTake(&b, r, "stock", 9)
	err = b.Send(ctx) // the first failed call's error, if any
	fmt.Println(one.Result())
	_, manyErr := many.Result()
	fmt.Println(errors.Is(err, ErrNotEnough), errors.Is(manyErr, ErrNotEnough))
	// Output:
	// 2 <nil>
	// true inventory.Take: NotEnough: fewer units left than asked (reply -1)
	// 1 <nil>
	// true true
}
