package runtime_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/luagen/luagen/runtime"
)

// The Append encoders give the Format encoders' text, and a string once
// returned keeps its text while more is appended, within the buffer's
// room and past it.
func TestAppendEncodersMatchFormat(t *testing.T) {
	at := time.UnixMilli(1_700_000_000_123)
	for _, room := range []int{0, 8, 200} {
		buf := make([]byte, 0, room)
		var got, want []string
		for _, n := range []int64{0, 7, -1, math.MaxInt64, math.MinInt64} {
			got = append(got, runtime.AppendInt(&buf, n))
			want = append(want, runtime.FormatInt(n))
		}
		for _, f := range []float64{0, 1.5, -2e-300, math.MaxFloat64, math.Inf(-1)} {
			got = append(got, runtime.AppendFloat(&buf, f))
			want = append(want, runtime.FormatFloat(f))
		}
		for _, u := range []time.Duration{time.Millisecond, time.Second} {
			got = append(got, runtime.AppendDuration(&buf, 90*time.Second+5*time.Millisecond, u), runtime.AppendTime(&buf, at, u))
			want = append(want, runtime.FormatDuration(90*time.Second+5*time.Millisecond, u), runtime.FormatTime(at, u))
		}
		assert.Equal(t, want, got, "room %d", room)
	}
}
