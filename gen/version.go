package gen

import "github.com/dave/jennifer/jen"

// GenVersion is the version of the code this generator writes, checked at
// compile time against the runtime the user's module builds with (see
// versionGuard).
//
// The rule: a version names one set of runtime and luagenimpl identifiers
// (types, fields, functions, methods, constants) that generated code may
// use, and its meaning. Any change to that set raises GenVersion, and
// luagenimpl.MaxVersion with it: generated code that starts to use
// something new, and equally a rename, removal or change of meaning of
// anything generated code of an accepted version uses (a ScriptSpec field
// renamed, a function's parameters changed). When the runtime stops
// running what older versions use, luagenimpl.MinVersion rises past
// them, so their files fail at the guard rather than anywhere else. Each
// version from MinVersion to MaxVersion has its testdata/version<N>,
// written by the first generator of that version, which
// TestVersionsTheRuntimeRuns builds against today's runtime.
//
// Version 1 (commit 1e71b95) set ScriptSpec.Coalesce, which was renamed
// CoalesceLimit without raising the version, so version-1 files were of two
// incompatible kinds; version 2 recycles call buffers with
// CallPool.Recycle and luagenimpl.ReleasesArgs; version 3 checks the
// caller's arguments before sending (luagenimpl.Check*, runtime.BadArgError,
// runtime.NewFailedFuture). The runtime runs versions 2 and 3.
const GenVersion = 3

// versionGuard emits protobuf-go's compile-time version check: a constant
// conversion to the unsigned luagenimpl.EnforceVersion fails to compile
// when it is negative, i.e. when the file is older than the runtime's
// MinVersion or newer than its MaxVersion.
func versionGuard(f *jen.File) {
	f.Comment("A build failure on the next two lines means that this file was generated")
	f.Comment("by a luagen version the runtime in go.mod cannot run: regenerate with the")
	f.Comment("luagen version matching your runtime, or update github.com/luagen/luagen.")
	f.Const().Id("_").Op("=").Add(impl("EnforceVersion")).Call(jen.Lit(GenVersion).Op("-").Add(impl("MinVersion")))
	f.Const().Id("_").Op("=").Add(impl("EnforceVersion")).Call(impl("MaxVersion").Op("-").Lit(GenVersion))
}
