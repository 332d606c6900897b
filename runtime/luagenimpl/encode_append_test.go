package luagenimpl_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/luagen/luagen/runtime/luagenimpl"
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
			got = append(got, luagenimpl.AppendInt(&buf, n))
			want = append(want, luagenimpl.FormatInt(n))
		}
		for _, f := range []float64{0, 1.5, -2e-300, math.MaxFloat64, math.Inf(-1)} {
			got = append(got, luagenimpl.AppendFloat(&buf, f))
			want = append(want, luagenimpl.FormatFloat(f))
		}
		for _, u := range []time.Duration{time.Millisecond, time.Second} {
			got = append(got, luagenimpl.AppendDuration(&buf, 90*time.Second+5*time.Millisecond, u), luagenimpl.AppendTime(&buf, at, u))
			want = append(want, luagenimpl.FormatDuration(90*time.Second+5*time.Millisecond, u), luagenimpl.FormatTime(at, u))
		}
		assert.Equal(t, want, got, "room %d", room)
	}
}
