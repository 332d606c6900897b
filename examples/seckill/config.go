package main

import (
	"fmt"
	"strings"
)

// config is the command line.
type config struct {
	Buyers      int
	Stock       int
	Qty         int
	Limit       int
	Concurrency int
	Redis       string
	SKU         string
	JSON        bool
	Coalesce    bool
}

func (c *config) validate() error {
	switch {
	case c.Buyers < 1:
		return fmt.Errorf("-buyers must be >= 1, got %d", c.Buyers)
	case c.Stock < 0:
		return fmt.Errorf("-stock must be >= 0, got %d", c.Stock)
	case c.Qty < 1:
		return fmt.Errorf("-qty must be >= 1, got %d", c.Qty)
	case c.Limit < 0:
		return fmt.Errorf("-limit must be >= 0, got %d", c.Limit)
	case c.Concurrency < 1:
		return fmt.Errorf("-concurrency must be >= 1, got %d", c.Concurrency)
	case strings.ContainsAny(c.SKU, "{}"):
		return fmt.Errorf("-sku must not contain '{' or '}' (it becomes the keys' hash tag), got %q", c.SKU)
	}
	return nil
}

// addrs returns the -redis seed list, or nil for the embedded server.
func (c *config) addrs() []string {
	var out []string
	for _, a := range strings.Split(c.Redis, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}
