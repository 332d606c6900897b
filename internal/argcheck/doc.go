// Package argcheck holds scripts whose numbers the analysis bounds through
// the argument checks of their generated methods (issue 33): a local
// assigned twice, a number written as text, a local helper reading ARGV[i]
// and math.floor of a product with a fraction. Each is exact for every
// argument its method accepts, and its method refuses the others with
// runtime.ErrBadArg before anything is sent. Its tests run on luatest and
// on redis-server through both executors.
package argcheck

//go:generate go tool luagen generate .
