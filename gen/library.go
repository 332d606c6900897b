package gen

import (
	"fmt"

	"github.com/dave/jennifer/jen"
)

// Function mode (Config.Functions, luagen generate -functions): the
// package's scripts also form one Redis function library, declared in
// scripts.lua.go as
//
//	var library = runtime.NewLibrary(runtime.LibrarySpec{Name: "stock", Scripts: All()})
//
// runtime.NewLibrary wraps each .lua file into a registered function (see
// runtime.Library for the wrapping, the line mapping and how versions
// live side by side: a hash of the scripts ends the library's name and
// every function name) and attaches the scripts to it, so the per-script
// methods stay exactly as in EVAL mode: Script.Exec sends FCALL on an
// executor that runs functions and EVALSHA/EVAL on any other. The .lua
// files and the script bodies in the generated files stay the plain
// scripts.

// emitLibrary declares the library and its accessor.
func emitLibrary(f *jen.File, cfg Config) {
	f.Add(docComment(wrap(fmt.Sprintf("library is this package's scripts as one Redis function library (luagen generate -functions): "+
		"each script a function, loaded with FUNCTION LOAD and called with FCALL. It is named %q plus a hash of the scripts, "+
		"which also ends every function name, so binaries built from other scripts run side by side with this one; "+
		"see [runtime.Library].", cfg.Package+"_<hash>"), 76)...))
	f.Var().Id(libraryVar).Op("=").Add(rt("NewLibrary")).Call(rt("LibrarySpec").Values(jen.Dict{
		jen.Id("Name"):    jen.Lit(cfg.Package),
		jen.Id("Scripts"): jen.Id(allFunc).Call(), // runtime.LibrarySpec's field
	}))
	f.Add(docComment(wrap("Library returns this package's function library, e.g. to load it with Library().Load or to find its versioned name.", 76)...))
	f.Func().Id(libraryFunc).Params().Op("*").Add(rt("Library")).Block(jen.Return(jen.Id(libraryVar)))
}

// preloadDoc is the doc comment of the generated Preload method.
func preloadDoc(cfg Config) string {
	if cfg.Functions {
		return "Preload loads this package's function library on every primary that does not hold it (FUNCTION LOAD; Redis replicates it to replicas), " +
			"leaving other versions of it in place for binaries built from other scripts (see [runtime.Library]). " +
			"It is optional: a call that meets \"Function not found\" loads the library and calls again. " +
			"On an executor without functions it adds the scripts to the script cache instead (SCRIPT LOAD)."
	}
	return "Preload adds every script of this package to the script cache of every node (SCRIPT LOAD). It is optional: calls fall back to EVAL on NOSCRIPT."
}
