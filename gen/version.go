package gen

import "github.com/dave/jennifer/jen"

// GenVersion is the version of the code this generator writes, checked at
// compile time against the runtime the user's module builds with (see
// versionGuard). Raise it, and luagenimpl.MaxVersion with it, when
// generated code starts to call something new in runtime or luagenimpl.
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
