package runtime

import (
	"errors"
	"fmt"
	"strings"

	"github.com/luagen/luagen/internal/hashtag"
)

// SlotCount is the number of hash slots in Redis Cluster (16384).
const SlotCount = 16384

// ErrCrossSlot matches every [*CrossSlotError] with errors.Is. Redis itself
// answers such a call with "CROSSSLOT Keys in request don't hash to the same
// slot"; luagen refuses it before sending so the mistake shows on a single
// node too, not only after moving to a cluster.
var ErrCrossSlot = errors.New("CROSSSLOT keys in request don't hash to the same slot")

// Slot returns the Redis Cluster hash slot (0..16383) of key: CRC16/XMODEM of
// the key modulo 16384, where only the hash tag is hashed when the key has one.
// The hash tag is the text between the first '{' and the first '}' after it,
// if that text is not empty; "foo{}{bar}" therefore hashes whole.
// Source: https://redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/#hash-tags
func Slot(key string) uint16 {
	if i, j, ok := hashtag.Span(key); ok {
		key = key[i:j]
	}
	return crc16(key) & (SlotCount - 1)
}

// crc16 is CRC16/XMODEM (polynomial 0x1021, init 0), the checksum Redis
// Cluster uses for keys (cluster-spec, appendix A).
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc = crc<<8 ^ crc16tab[byte(crc>>8)^s[i]]
	}
	return crc
}

var crc16tab = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()

// KeySlot is one key of a call and its hash slot.
type KeySlot struct {
	Key  string
	Slot uint16
}

// CrossSlotError reports a call whose KEYS hash to more than one slot. It
// names every key with its slot so the fix (a shared {hash tag}) is obvious.
// It matches [ErrCrossSlot] with errors.Is.
//
// [Script.Exec] returns it for every script except those with the shebang
// flag allow-cross-slot-keys; a cluster executor ([NewRueidisExecutor] on a cluster
// client) returns it for those too, with OnCluster set, since Redis Cluster
// refuses KEYS of different slots in one call whatever the flags.
type CrossSlotError struct {
	Script string    // Go name of the script, e.g. "stock.Deduct"
	Keys   []KeySlot // every key of the call, in KEYS order
	// OnCluster is set when a cluster executor refused the call although
	// the script declares flags=allow-cross-slot-keys.
	OnCluster bool
}

func (e *CrossSlotError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: keys hash to different slots (CROSSSLOT; give them one {hash tag}", e.Script)
	if e.OnCluster {
		b.WriteString("; flags=allow-cross-slot-keys does not lift this on a cluster, which routes a script by its KEYS: " +
			"they must share one slot there, or run the script on a single node")
	}
	b.WriteString("):")
	for i, k := range e.Keys {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, " %q→%d", k.Key, k.Slot)
	}
	return b.String()
}

// Is reports whether target is [ErrCrossSlot].
func (e *CrossSlotError) Is(target error) bool { return target == ErrCrossSlot }

// CheckSlots returns nil when all keys hash to one slot (or there are fewer
// than two keys) and a [*CrossSlotError] naming script otherwise. It does not
// allocate unless it fails.
func CheckSlots(script string, keys []string) error {
	if len(keys) < 2 {
		return nil
	}
	first := Slot(keys[0])
	for _, k := range keys[1:] {
		if Slot(k) != first {
			e := &CrossSlotError{Script: script, Keys: make([]KeySlot, len(keys))}
			for i, k := range keys {
				e.Keys[i] = KeySlot{Key: k, Slot: Slot(k)}
			}
			return e
		}
	}
	return nil
}
