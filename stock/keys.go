package stock

// SKUKeys names the three keys of one SKU: its stock counter, its order
// records (a hash of order id → record) and its buyer counters (a hash of
// buyer → units held). They share the SKU's {hash tag}, so on a cluster
// every script of one SKU runs in one slot, on one primary, and different
// SKUs spread over the shards.
type SKUKeys struct {
	Stock  string // string counter: units left
	Orders string // hash: order id → "state qty at reply buyer"
	Buyers string // hash: buyer → units held
}

// KeysFor returns the keys of sku under prefix: prefix{sku}:stock,
// prefix{sku}:orders and prefix{sku}:buyers, e.g. KeysFor("seckill:", "42")
// gives seckill:{42}:stock. An empty sku has no hash tag, so its keys land
// in different slots and every call fails with runtime.ErrCrossSlot.
func KeysFor(prefix, sku string) SKUKeys {
	tag := prefix + "{" + sku + "}:"
	return SKUKeys{Stock: tag + "stock", Orders: tag + "orders", Buyers: tag + "buyers"}
}

// Deduct returns the keys as [Scripts.Deduct] takes them.
func (k SKUKeys) Deduct() DeductKeys { return DeductKeys(k) }

// Cancel returns the keys as [Scripts.Cancel] takes them.
func (k SKUKeys) Cancel() CancelKeys { return CancelKeys(k) }

// Audit returns the keys as [Scripts.Audit] and [Scripts.Reconcile] take them.
func (k SKUKeys) Audit() AuditKeys { return AuditKeys(k) }
