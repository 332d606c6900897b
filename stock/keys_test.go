package stock_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/runtime"
	"github.com/luagen/luagen/stock"
)

// TestKeysFor pins the layout the ---@keys and ---@key templates in
// lua/stock/deduct.lua generate: the one a deployed sale's data already
// uses, so a template edit that moves it fails here.
func TestKeysFor(t *testing.T) {
	k := stock.KeysFor("seckill:", "42")
	assert.Equal(t, stock.SKUKeys{Stock: "seckill:{42}:stock", Orders: "seckill:{42}:orders", Buyers: "seckill:{42}:buyers"}, k)
	assert.Equal(t, stock.DeductKeys{Stock: k.Stock, Orders: k.Orders, Buyers: k.Buyers}, k.Deduct())
	assert.Equal(t, stock.CancelKeys{Stock: k.Stock, Orders: k.Orders, Buyers: k.Buyers}, k.Cancel())
	assert.Equal(t, stock.AuditKeys{Stock: k.Stock, Orders: k.Orders, Buyers: k.Buyers}, k.Audit())
	require.NoError(t, runtime.CheckSlots("stock", []string{k.Stock, k.Orders, k.Buyers}))

	// "{}" is no hash tag: Redis hashes the whole key, so they spread.
	e := stock.KeysFor("seckill:", "")
	assert.ErrorIs(t, runtime.CheckSlots("stock", []string{e.Stock, e.Orders, e.Buyers}), runtime.ErrCrossSlot)
}

// TestOneSentinelPerError checks that the three scripts share their common
// errors: one sentinel each, declared by the package.
func TestOneSentinelPerError(t *testing.T) {
	for _, sc := range stock.All() {
		for _, ce := range sc.Errors() {
			switch ce.Name() {
			case "NoSuchSKU":
				assert.Same(t, stock.ErrNoSuchSKU, ce, sc.Name())
			case "BadArgument":
				assert.Same(t, stock.ErrBadArgument, ce, sc.Name())
			}
		}
	}
	assert.Equal(t, "stock", stock.ErrNoSuchSKU.Script())
	assert.Equal(t, "stock: NoSuchSKU: the stock key does not exist; nothing changed (reply -2)", stock.ErrNoSuchSKU.Error())
}
