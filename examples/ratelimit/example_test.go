package ratelimit_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/redis/rueidis"

	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/redistest"
	"github.com/luagen/luagen/runtime"

	"example.com/ratelimit"
)

// A service limits each user to 2 requests per hour. The example starts
// its own redis-server with redistest; a service dials its Redis instead.
func Example() {
	dir, err := os.MkdirTemp("", "ratelimit-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	srv, err := redistest.NewServer(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Stop()

	// One rueidis client per process, shared by every limiter. For a
	// cluster, list a few nodes in InitAddress: rueidis finds the rest.
	client, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{srv.Addr}})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	ctx := context.Background()
	limiter := ratelimit.NewSlidingWindow(runtime.NewRueidisExecutor(client), 2, time.Hour)
	for _, id := range []string{"req-1", "req-2", "req-3"} {
		d, err := limiter.Allow(ctx, "user:42", id)
		if err != nil {
			log.Fatal(err)
		}
		if d.Allowed {
			fmt.Printf("%s: allowed, %d left this hour\n", id, d.Remaining)
		} else {
			fmt.Printf("%s: refused, retry in about %v\n", id, d.RetryAfter.Round(time.Minute))
		}
	}
	// Output:
	// req-1: allowed, 1 left this hour
	// req-2: allowed, 0 left this hour
	// req-3: refused, retry in about 1h0m0s
}

// The same limiter offline: luatest runs the scripts in-process on a
// virtual clock that only moves when told to.
func ExampleTokenBucket() {
	r := luatest.New(luatest.WithTime(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)))
	defer r.Close()

	ctx := context.Background()
	bucket := ratelimit.NewTokenBucket(r, 3, time.Second, ratelimit.WithClock(r.Now)) // bursts of 3, 1/s after
	for range 4 {
		d, err := bucket.Allow(ctx, "api-key-7")
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s allowed=%t remaining=%d retry-after=%v\n", r.Now().Format(time.TimeOnly), d.Allowed, d.Remaining, d.RetryAfter)
	}
	r.Advance(1500 * time.Millisecond)
	d, err := bucket.Allow(ctx, "api-key-7")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s allowed=%t remaining=%d retry-after=%v\n", r.Now().Format("15:04:05.000"), d.Allowed, d.Remaining, d.RetryAfter)
	// Output:
	// 00:00:00 allowed=true remaining=2 retry-after=0s
	// 00:00:00 allowed=true remaining=1 retry-after=0s
	// 00:00:00 allowed=true remaining=0 retry-after=0s
	// 00:00:00 allowed=false remaining=0 retry-after=1s
	// 00:00:01.500 allowed=true remaining=0 retry-after=0s
}
