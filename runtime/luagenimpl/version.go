package luagenimpl

// EnforceVersion is the type of the compile-time version guard every
// generated file holds:
//
//	const _ = luagenimpl.EnforceVersion(N - luagenimpl.MinVersion)
//	const _ = luagenimpl.EnforceVersion(luagenimpl.MaxVersion - N)
//
// where N is the version of the generated code (gen.GenVersion of the
// luagen that wrote the file). A constant conversion to an unsigned type
// fails to compile when the value is negative, so the first line breaks
// the build when the file is older than [MinVersion] and the second when
// it is newer than [MaxVersion]. Either way the cure is to regenerate
// with the luagen version matching this runtime (go tool luagen, pinned
// by the same go.mod), or to update github.com/luagen/luagen.
type EnforceVersion uint

// The range of generated-code versions this package runs. A version names
// the set of runtime and luagenimpl identifiers generated code may use;
// any change to that set (an addition, a rename, a removal, a change of
// meaning) raises the version: the rule is written out, with the history,
// at gen.GenVersion.
const (
	// MinVersion is the oldest generated code this package still runs.
	// It rises when this package drops or changes something that older
	// generated code uses. Version 1 is refused: code of its first
	// generator sets ScriptSpec.Coalesce, since renamed CoalesceLimit.
	MinVersion = 2
	// MaxVersion is the newest generated code this package runs: the
	// gen.GenVersion of the luagen in the same module version. It rises
	// with GenVersion, when generated code starts to call something new
	// here.
	MaxVersion = 3
)
