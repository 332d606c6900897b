package luagenimpl

import (
	"math"
	"strconv"
	"time"

	"github.com/luagen/luagen/runtime"
)

// The decoders below turn a reply into the Go type a script header declares
// with ---@return or ---@field. Each returns a *[runtime.DecodeError]
// naming s when the reply has another shape; generated code calls them and
// holds no decoding logic of its own.

// intOf returns the integer an integer reply holds, or a bulk string
// that is integer text in base 10 ("1700000000000", as HGET, ZSCORE of an
// integral score or a number kept as text by the script returns it).
// Integer text carries all 64 bits, where a Lua number is exact only to
// 2^53, so a script may return a number as text to keep it whole.
func intOf(v runtime.Value) (int64, bool) {
	switch v.Kind {
	case runtime.KindInt:
		return v.Int, true
	case runtime.KindString:
		n, err := strconv.ParseInt(v.Str, 10, 64)
		return n, err == nil
	}
	return 0, false
}

// Int64 decodes an integer reply (Lua number, truncated toward zero by
// Redis) or a bulk string of integer text; anything else, "1.5" and
// "1e+15" included, is a *[runtime.DecodeError].
func Int64(s *runtime.Script, v runtime.Value) (int64, error) {
	n, ok := intOf(v)
	if !ok {
		return 0, &runtime.DecodeError{Script: s.Name(), Want: "int64 (an integer, or integer text)", Got: v}
	}
	return n, nil
}

// String decodes a bulk or status string reply.
func String(s *runtime.Script, v runtime.Value) (string, error) {
	if v.Kind != runtime.KindString {
		return "", &runtime.DecodeError{Script: s.Name(), Want: "string", Got: v}
	}
	return v.Str, nil
}

// Bytes decodes a bulk string reply into a new []byte.
func Bytes(s *runtime.Script, v runtime.Value) ([]byte, error) {
	if v.Kind != runtime.KindString {
		return nil, &runtime.DecodeError{Script: s.Name(), Want: "[]byte", Got: v}
	}
	return []byte(v.Str), nil
}

// Bool decodes a script boolean. In RESP2 mode Redis turns Lua true into
// the integer 1 and Lua false into a nil reply, so 1 is true and 0 or nil is
// false; a RESP3 boolean is accepted too.
func Bool(s *runtime.Script, v runtime.Value) (bool, error) {
	switch v.Kind {
	case runtime.KindInt:
		if v.Int == 0 || v.Int == 1 {
			return v.Int == 1, nil
		}
	case runtime.KindNil:
		return false, nil
	case runtime.KindBool:
		return v.Int != 0, nil
	}
	return false, &runtime.DecodeError{Script: s.Name(), Want: "bool (1 or 0)", Got: v}
}

// Float64 decodes a number sent as a string (Lua scripts must return
// non-integers as strings: a Lua number reply is truncated to an integer),
// an integer, or a RESP3 double.
func Float64(s *runtime.Script, v runtime.Value) (float64, error) {
	switch v.Kind {
	case runtime.KindString:
		if f, err := strconv.ParseFloat(v.Str, 64); err == nil {
			return f, nil
		}
	case runtime.KindInt:
		return float64(v.Int), nil
	case runtime.KindDouble:
		return v.Float, nil
	}
	return 0, &runtime.DecodeError{Script: s.Name(), Want: "float64", Got: v}
}

// Duration decodes an integer count of unit (time.Millisecond or
// time.Second), such as a PTTL or TTL result. Negative values are returned
// as they are, so a caller can still see PTTL's -1 (no expiry) and -2 (no key).
// A count a time.Duration cannot hold (beyond about ±292 years, i.e.
// ±9,223,372,036,854 ms) is a *[runtime.DecodeError], not a wrapped-around value.
func Duration(s *runtime.Script, v runtime.Value, unit time.Duration) (time.Duration, error) {
	n, ok := intOf(v)
	if !ok {
		return 0, &runtime.DecodeError{Script: s.Name(), Want: "time.Duration (an integer, or integer text)", Got: v}
	}
	if n > math.MaxInt64/int64(unit) || n < math.MinInt64/int64(unit) {
		return 0, &runtime.DecodeError{Script: s.Name(), Want: "time.Duration (an integer count of " + unitName(unit) + " within ±292 years)", Got: v}
	}
	return time.Duration(n) * unit, nil
}

// Time decodes an integer Unix time in unit (time.Millisecond or
// time.Second). A count of seconds time.Time cannot hold (past about the
// year 292 billion, where its int64 of seconds from year 1 overflows) is a
// *[runtime.DecodeError].
func Time(s *runtime.Script, v runtime.Value, unit time.Duration) (time.Time, error) {
	n, ok := intOf(v)
	if !ok {
		return time.Time{}, &runtime.DecodeError{Script: s.Name(), Want: "time.Time (an integer, or integer text)", Got: v}
	}
	if unit == time.Second {
		// time.Time counts seconds from year 1 in an int64: the Unix
		// seconds from 1 to 1970 must still fit.
		const unixToInternal = 62135596800
		if n > math.MaxInt64-unixToInternal {
			return time.Time{}, &runtime.DecodeError{Script: s.Name(), Want: "time.Time (Unix seconds time.Time can hold)", Got: v}
		}
		return time.Unix(n, 0), nil
	}
	return time.UnixMilli(n), nil
}

// unitName names a wire unit for error messages.
func unitName(unit time.Duration) string {
	if unit == time.Second {
		return "seconds"
	}
	return "milliseconds"
}

// Array checks that v is an array and returns its elements.
func Array(s *runtime.Script, v runtime.Value) ([]runtime.Value, error) {
	if v.Kind != runtime.KindArray {
		return nil, &runtime.DecodeError{Script: s.Name(), Want: "array", Got: v}
	}
	return v.Array, nil
}

// Tuple checks that v is an array of exactly n elements (a ---@return tuple)
// and returns them.
func Tuple(s *runtime.Script, v runtime.Value, n int) ([]runtime.Value, error) {
	if v.Kind != runtime.KindArray || len(v.Array) != n {
		return nil, &runtime.DecodeError{Script: s.Name(), Want: "array of " + strconv.Itoa(n), Got: v}
	}
	return v.Array, nil
}

// StringMap decodes a flat array of field, value, ... (as HGETALL returns it
// in RESP2) or a RESP3 map into a map.
func StringMap(s *runtime.Script, v runtime.Value) (map[string]string, error) {
	if (v.Kind != runtime.KindArray && v.Kind != runtime.KindMap) || len(v.Array)%2 != 0 {
		return nil, &runtime.DecodeError{Script: s.Name(), Want: "map[string]string (flat array)", Got: v}
	}
	m := make(map[string]string, len(v.Array)/2)
	for i := 0; i < len(v.Array); i += 2 {
		k, vv := v.Array[i], v.Array[i+1]
		if k.Kind != runtime.KindString || vv.Kind != runtime.KindString {
			return nil, &runtime.DecodeError{Script: s.Name(), Want: "map[string]string (flat array)", Got: v}
		}
		m[k.Str] = vv.Str
	}
	return m, nil
}

// Slice decodes an array by applying elem to each element.
func Slice[T any](s *runtime.Script, v runtime.Value, elem func(*runtime.Script, runtime.Value) (T, error)) ([]T, error) {
	arr, err := Array(s, v)
	if err != nil {
		return nil, err
	}
	out := make([]T, len(arr))
	for i, e := range arr {
		if out[i], err = elem(s, e); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Optional decodes an optional (---@return T?) reply: nil for a nil reply,
// else a pointer to elem's result.
func Optional[T any](s *runtime.Script, v runtime.Value, elem func(*runtime.Script, runtime.Value) (T, error)) (*T, error) {
	if v.Kind == runtime.KindNil {
		return nil, nil
	}
	x, err := elem(s, v)
	if err != nil {
		return nil, err
	}
	return &x, nil
}

// Raw is the decode function of a script without ---@return, passed to
// [runtime.Queue]: the reply as it came.
func Raw(v runtime.Value) (runtime.Value, error) { return v, nil }
