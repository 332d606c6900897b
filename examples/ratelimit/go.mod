module example.com/ratelimit

go 1.26.0

require (
	github.com/luagen/luagen v0.0.0-00010101000000-000000000000
	github.com/redis/go-redis/v9 v9.23.0
	github.com/redis/rueidis v1.0.79
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/dave/jennifer v1.7.1 // indirect
	github.com/yuin/gopher-lua v1.1.2 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.49.0 // indirect
)

// The example lives in luagen's repository and builds against the checkout
// around it; a service of your own leaves this line out (see the README).
replace github.com/luagen/luagen => ../..

tool github.com/luagen/luagen/cmd/luagen
