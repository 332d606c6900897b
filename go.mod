module github.com/luagen/luagen

go 1.26

require (
	github.com/alicebob/miniredis/v2 v2.40.0
	github.com/redis/rueidis v1.0.79
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/yuin/gopher-lua v1.1.2 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.47.0 // indirect
)
