package runtime

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSlotKnownValues(t *testing.T) {
	// Every value was read from CLUSTER KEYSLOT on redis-server 7.0.15.
	for key, want := range map[string]uint16{
		"123456789":             12739, // the CRC16/XMODEM check value 0x31C3 mod 16384
		"":                      0,
		"foo":                   12182,
		"bar":                   5061,
		"user1000":              3443,
		"{user1000}.following":  3443,
		"{user1000}.followers":  3443,
		"foo{}{bar}":            8363, // empty first tag: the whole key is hashed
		"foo{{bar}}zap":         4015, // tag is "{bar"
		"foo{bar}{zap}":         5061, // first tag only: "bar"
		"{":                     4092,
		"}{":                    12793,
		"seckill:{sku42}:stock": Slot("sku42"),
	} {
		assert.Equal(t, want, Slot(key), "Slot(%q)", key)
	}
}

func TestCheckSlots(t *testing.T) {
	require.NoError(t, CheckSlots("x", nil))
	require.NoError(t, CheckSlots("x", []string{"a"}))
	require.NoError(t, CheckSlots("x", []string{"s:{42}:stock", "s:{42}:log:u7", "{42}"}))

	err := CheckSlots("stock.Deduct", []string{"s:{42}:stock", "s:{43}:log"})
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrCrossSlot))
	var cs *CrossSlotError
	require.True(t, errors.As(err, &cs))
	assert.Equal(t, []KeySlot{{"s:{42}:stock", Slot("42")}, {"s:{43}:log", Slot("43")}}, cs.Keys)
	assert.Equal(t, `stock.Deduct: keys hash to different slots (CROSSSLOT; give them one {hash tag}): "s:{42}:stock"→8000, "s:{43}:log"→3937`, err.Error())
}

func TestCheckSlotsDoesNotAllocate(t *testing.T) {
	keys := []string{"s:{42}:stock", "s:{42}:log:u7"}
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = CheckSlots("x", keys) }))
}
