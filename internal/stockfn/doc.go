// Package stockfn is lua/stock generated in function mode (luagen generate
// -functions): the same scripts as package stock, compiled into one Redis
// function library and called with FCALL. It exists so the function-mode
// path is built and tested end to end against real servers: package
// stock's real-server suites (the seckill race, FUNCTION FLUSH, restart,
// failover, a killed primary, batches; single node and cluster, both
// executors) run against it too (stock/mode_test.go). Applications use
// package stock, or generate their own package with -functions.
package stockfn

//go:generate go tool luagen generate -functions ../../lua/stock
