package luagenimpl

import (
	"strconv"
	"time"

	"github.com/luagen/luagen/internal/hashtag"
	"github.com/luagen/luagen/runtime"
)

// The Check functions are the argument checks a generated method makes
// before it sends anything: each returns nil, or a *runtime.BadArgError
// naming the script (its Go name, "stock.Deduct"), the argument as the
// header names it, the value and the bound (as the header writes it, for
// the error text). Bounds are inclusive. See gen's "Reply-shape analysis"
// for where a bound the header does not write comes from.

// CheckInt checks lo <= v <= hi.
func CheckInt(script, arg string, v, lo, hi int64, bound string) error {
	if v < lo || v > hi {
		return &runtime.BadArgError{Script: script, Arg: arg, Value: v, Bound: bound}
	}
	return nil
}

// CheckInts checks lo <= v <= hi for every v of a variadic argument.
func CheckInts(script, arg string, vs []int64, lo, hi int64, bound string) error {
	for _, v := range vs {
		if err := CheckInt(script, arg, v, lo, hi, bound); err != nil {
			return err
		}
	}
	return nil
}

// CheckFloat checks lo <= v <= hi (false for NaN).
func CheckFloat(script, arg string, v, lo, hi float64, bound string) error {
	if !(v >= lo && v <= hi) {
		return &runtime.BadArgError{Script: script, Arg: arg, Value: v, Bound: bound}
	}
	return nil
}

// CheckDuration checks lo <= d/unit <= hi: the number sent, in unit
// (time.Millisecond or time.Second).
func CheckDuration(script, arg string, d, unit time.Duration, lo, hi int64, bound string) error {
	if n := int64(d / unit); n < lo || n > hi {
		return &runtime.BadArgError{Script: script, Arg: arg, Value: d, Bound: bound}
	}
	return nil
}

// CheckTime checks lo <= the Unix time of t in unit <= hi: the number
// sent. A time.Time beyond what Unix milliseconds in an int64 hold (after
// the year 292277026, say) fails too, since its number would be wrong.
func CheckTime(script, arg string, t time.Time, unit time.Duration, lo, hi int64, bound string) error {
	n := t.Unix()
	if unit != time.Second {
		// Seconds first: UnixMilli overflows silently far from 1970.
		if n < lo/1000-1 || n > hi/1000+1 {
			return &runtime.BadArgError{Script: script, Arg: arg, Value: t, Bound: bound}
		}
		n = t.UnixMilli()
	}
	if n < lo || n > hi {
		return &runtime.BadArgError{Script: script, Arg: arg, Value: t, Bound: bound}
	}
	return nil
}

// CheckLen checks lo <= len(v) <= hi, the length in bytes.
func CheckLen(script, arg, v string, lo, hi int, bound string) error {
	if n := len(v); n < lo || n > hi {
		return &runtime.BadArgError{Script: script, Arg: arg, Value: v, Bound: bound}
	}
	return nil
}

// CheckOneOf checks that v is one of allowed.
func CheckOneOf(script, arg, v string, bound string, allowed ...string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return &runtime.BadArgError{Script: script, Arg: arg, Value: v, Bound: bound}
}

// CheckPrefix checks that v, a key prefix laid out in a key family (an
// ---@arg with a template, such as bull:{q}:), carries a hash tag and
// hashes to the slot of key, a key of the same family the script is given
// (keyName is its header name): the keys the script builds by appending
// to v are then on key's slot, as the cluster lint assumed. A prefix left
// empty, built by hand without its {tag}, or of another family member
// fails before anything is sent.
func CheckPrefix(script, arg, v, keyName, key string) error {
	if _, _, ok := hashtag.Span(v); ok && runtime.Slot(v) == runtime.Slot(key) {
		return nil
	}
	return &runtime.BadArgError{Script: script, Arg: arg, Value: strconv.Quote(v),
		Bound: "a prefix with the hash tag of key " + keyName + " (" + strconv.Quote(key) + "): build it with the family's constructor"}
}

// CheckPrefixIn is CheckPrefix against keys, the values of a variadic
// key of the family: against the first, the others sharing its slot or
// failing the call's slot check. No keys at all fails too: nothing would
// route the call to the prefix's slot.
func CheckPrefixIn(script, arg, v, keyName string, keys []string) error {
	if len(keys) == 0 {
		return &runtime.BadArgError{Script: script, Arg: arg, Value: strconv.Quote(v),
			Bound: "a prefix that goes with a key of " + keyName + ", but none is given: give one, so that the call reaches the prefix's slot"}
	}
	return CheckPrefix(script, arg, v, keyName, keys[0])
}
