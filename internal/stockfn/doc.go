// Package stockfn is lua/stock generated in function mode (luagen generate
// -functions): the same scripts as package stock, compiled into one Redis
// function library and called with FCALL. It exists so the function-mode
// path is built and tested end to end against real servers (single node
// and cluster, both executors, restart and failover); applications use
// package stock, or generate their own package with -functions.
package stockfn

//go:generate go tool luagen generate -functions ../../lua/stock
