package runtime

import (
	"math"
	"strconv"
	"time"
)

// The decoders below turn a reply into the Go type a script header declares
// with ---@return or ---@field. Each returns a *[DecodeError] naming s when
// the reply has another shape; generated code calls them and holds no
// decoding logic of its own.

// Int64 decodes an integer reply (Lua number, truncated toward zero by Redis).
func Int64(s *Script, v Value) (int64, error) {
	if v.Kind != KindInt {
		return 0, &DecodeError{Script: s.name, Want: "int64", Got: v}
	}
	return v.Int, nil
}

// String decodes a bulk or status string reply.
func String(s *Script, v Value) (string, error) {
	if v.Kind != KindString {
		return "", &DecodeError{Script: s.name, Want: "string", Got: v}
	}
	return v.Str, nil
}

// Bytes decodes a bulk string reply into a new []byte.
func Bytes(s *Script, v Value) ([]byte, error) {
	if v.Kind != KindString {
		return nil, &DecodeError{Script: s.name, Want: "[]byte", Got: v}
	}
	return []byte(v.Str), nil
}

// Bool decodes a script boolean. In RESP2 mode Redis turns Lua true into
// the integer 1 and Lua false into a nil reply, so 1 is true and 0 or nil is
// false; a RESP3 boolean is accepted too.
func Bool(s *Script, v Value) (bool, error) {
	switch v.Kind {
	case KindInt:
		if v.Int == 0 || v.Int == 1 {
			return v.Int == 1, nil
		}
	case KindNil:
		return false, nil
	case KindBool:
		return v.Int != 0, nil
	}
	return false, &DecodeError{Script: s.name, Want: "bool (1 or 0)", Got: v}
}

// Float64 decodes a number sent as a string (Lua scripts must return
// non-integers as strings: a Lua number reply is truncated to an integer),
// an integer, or a RESP3 double.
func Float64(s *Script, v Value) (float64, error) {
	switch v.Kind {
	case KindString:
		if f, err := strconv.ParseFloat(v.Str, 64); err == nil {
			return f, nil
		}
	case KindInt:
		return float64(v.Int), nil
	case KindDouble:
		return v.Float, nil
	}
	return 0, &DecodeError{Script: s.name, Want: "float64", Got: v}
}

// Duration decodes an integer count of unit (time.Millisecond or
// time.Second), such as a PTTL or TTL result. Negative values are returned
// as they are, so a caller can still see PTTL's -1 (no expiry) and -2 (no key).
// A count a time.Duration cannot hold (beyond about ±292 years, i.e.
// ±9,223,372,036,854 ms) is a *[DecodeError], not a wrapped-around value.
func Duration(s *Script, v Value, unit time.Duration) (time.Duration, error) {
	if v.Kind != KindInt {
		return 0, &DecodeError{Script: s.name, Want: "time.Duration (integer)", Got: v}
	}
	if v.Int > math.MaxInt64/int64(unit) || v.Int < math.MinInt64/int64(unit) {
		return 0, &DecodeError{Script: s.name, Want: "time.Duration (an integer count of " + unitName(unit) + " within ±292 years)", Got: v}
	}
	return time.Duration(v.Int) * unit, nil
}

// Time decodes an integer Unix time in unit (time.Millisecond or
// time.Second). A count of seconds time.Time cannot hold (past about the
// year 292 billion, where its int64 of seconds from year 1 overflows) is a
// *[DecodeError].
func Time(s *Script, v Value, unit time.Duration) (time.Time, error) {
	if v.Kind != KindInt {
		return time.Time{}, &DecodeError{Script: s.name, Want: "time.Time (integer)", Got: v}
	}
	if unit == time.Second {
		// time.Time counts seconds from year 1 in an int64: the Unix
		// seconds from 1 to 1970 must still fit.
		const unixToInternal = 62135596800
		if v.Int > math.MaxInt64-unixToInternal {
			return time.Time{}, &DecodeError{Script: s.name, Want: "time.Time (Unix seconds time.Time can hold)", Got: v}
		}
		return time.Unix(v.Int, 0), nil
	}
	return time.UnixMilli(v.Int), nil
}

// unitName names a wire unit for error messages.
func unitName(unit time.Duration) string {
	if unit == time.Second {
		return "seconds"
	}
	return "milliseconds"
}

// Array checks that v is an array and returns its elements.
func Array(s *Script, v Value) ([]Value, error) {
	if v.Kind != KindArray {
		return nil, &DecodeError{Script: s.name, Want: "array", Got: v}
	}
	return v.Array, nil
}

// Tuple checks that v is an array of exactly n elements (a ---@return tuple)
// and returns them.
func Tuple(s *Script, v Value, n int) ([]Value, error) {
	if v.Kind != KindArray || len(v.Array) != n {
		return nil, &DecodeError{Script: s.name, Want: "array of " + strconv.Itoa(n), Got: v}
	}
	return v.Array, nil
}

// StringMap decodes a flat array of field, value, ... (as HGETALL returns it
// in RESP2) or a RESP3 map into a map.
func StringMap(s *Script, v Value) (map[string]string, error) {
	if (v.Kind != KindArray && v.Kind != KindMap) || len(v.Array)%2 != 0 {
		return nil, &DecodeError{Script: s.name, Want: "map[string]string (flat array)", Got: v}
	}
	m := make(map[string]string, len(v.Array)/2)
	for i := 0; i < len(v.Array); i += 2 {
		k, vv := v.Array[i], v.Array[i+1]
		if k.Kind != KindString || vv.Kind != KindString {
			return nil, &DecodeError{Script: s.name, Want: "map[string]string (flat array)", Got: v}
		}
		m[k.Str] = vv.Str
	}
	return m, nil
}

// Slice decodes an array by applying elem to each element.
func Slice[T any](s *Script, v Value, elem func(*Script, Value) (T, error)) ([]T, error) {
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
func Optional[T any](s *Script, v Value, elem func(*Script, Value) (T, error)) (*T, error) {
	if v.Kind == KindNil {
		return nil, nil
	}
	x, err := elem(s, v)
	if err != nil {
		return nil, err
	}
	return &x, nil
}
