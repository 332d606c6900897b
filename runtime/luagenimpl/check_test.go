package luagenimpl

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/luagen/luagen/runtime"
)

// TestChecks pins each check at its bounds: inclusive ends pass, one past
// fails with a *runtime.BadArgError that matches runtime.ErrBadArg and
// carries the value as given.
func TestChecks(t *testing.T) {
	bad := func(err error, value any) {
		t.Helper()
		var be *runtime.BadArgError
		if assert.True(t, errors.As(err, &be), "%v", err) {
			assert.True(t, errors.Is(err, runtime.ErrBadArg))
			assert.Equal(t, value, be.Value)
			assert.Equal(t, "s.X", be.Script)
			assert.Equal(t, "x", be.Arg)
		}
	}
	assert.NoError(t, CheckInt("s.X", "x", 1, 1, 1000, "[1,1000]"))
	assert.NoError(t, CheckInt("s.X", "x", 1000, 1, 1000, "[1,1000]"))
	bad(CheckInt("s.X", "x", 1001, 1, 1000, "[1,1000]"), int64(1001))
	assert.EqualError(t, CheckInt("s.X", "x", 0, 1, 1000, "[1,1000]"), "s.X: arg x = 0 is outside its bound [1,1000]; nothing was sent")
	bad(CheckInts("s.X", "x", []int64{5, 2000}, 1, 1000, "[1,1000]"), int64(2000))
	assert.NoError(t, CheckInts("s.X", "x", nil, 1, 1000, "[1,1000]"))

	assert.ErrorIs(t, CheckFloat("s.X", "x", math.NaN(), -1, 1, "[-1,1]"), runtime.ErrBadArg)
	bad(CheckFloat("s.X", "x", 1.5, -1, 1, "[-1,1]"), 1.5)
	assert.NoError(t, CheckFloat("s.X", "x", -1, -1, 1, "[-1,1]"))

	assert.NoError(t, CheckDuration("s.X", "x", 86400*time.Second, time.Millisecond, 1, 86400000, "[1,86400000]"))
	bad(CheckDuration("s.X", "x", 999*time.Microsecond, time.Millisecond, 1, 86400000, "[1,86400000]"), 999*time.Microsecond)

	const maxMS = math.MaxInt64 / int64(time.Millisecond)
	now := time.UnixMilli(1_700_000_000_000)
	assert.NoError(t, CheckTime("s.X", "x", now, time.Millisecond, -maxMS, maxMS, "b"))
	// Far from 1970 UnixMilli overflows: the check must not be fooled.
	far := time.Date(300_000_000, 1, 1, 0, 0, 0, 0, time.UTC)
	bad(CheckTime("s.X", "x", far, time.Millisecond, -maxMS, maxMS, "b"), far)
	bad(CheckTime("s.X", "x", time.Time{}, time.Second, 0, math.MaxInt64, "[0,]"), time.Time{})

	assert.NoError(t, CheckLen("s.X", "x", "a", 1, 64, "[1,64]"))
	bad(CheckLen("s.X", "x", "", 1, 64, "[1,64]"), "")
	assert.NoError(t, CheckOneOf("s.X", "x", "M", "{S|M}", "S", "M"))
	bad(CheckOneOf("s.X", "x", "XL", "{S|M}", "S", "M"), "XL")
}
