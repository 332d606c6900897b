package gen

import "time"

// Scalar is one of the value types a header may name for an ---@arg, a
// ---@return or a ---@field.
type Scalar int

// The scalar types, spelled in headers as their Go names.
const (
	String   Scalar = iota + 1 // string
	Bytes                      // []byte
	Int64                      // int64
	Float64                    // float64
	Bool                       // bool
	Duration                   // time.Duration, with a unit
	Time                       // time.Time, with a unit
)

var scalarNames = map[Scalar]string{
	String: "string", Bytes: "[]byte", Int64: "int64", Float64: "float64",
	Bool: "bool", Duration: "time.Duration", Time: "time.Time",
}

func (s Scalar) String() string { return scalarNames[s] }

// needsUnit reports whether the type is sent or received as a number of a
// unit (ms or s) that the header must state.
func (s Scalar) needsUnit() bool { return s == Duration || s == Time }

// Shape is the form of a ---@return or ---@field type.
type Shape int

// The shapes a reply can have.
const (
	ShapeNone     Shape = iota // no ---@return: the raw runtime.Value
	ShapeScalar                // T
	ShapeOptional              // T?: a nil reply is a nil *T
	ShapeSlice                 // []T: an array
	ShapeMap                   // map[string]string: a flat array field, value, ...
	ShapeStatus                // status: a status reply such as OK; the call returns only error
	ShapeTuple                 // tuple Name: a positional array decoded into struct Name
	ShapeDiscard               // none: the reply is discarded; the call returns only error
)

// Type is a declared value type. Unit is time.Millisecond or time.Second
// for Duration and Time (also as slice or optional elements), else 0.
type Type struct {
	Shape Shape
	Elem  Scalar
	Unit  time.Duration
	// Truncated is set by the word truncated after an integer reply type
	// (---@return int64 truncated): a Lua number with a fraction is meant
	// to reach the caller as Redis truncates it, toward zero (7 / 2 → 3).
	Truncated bool
}

// Script is one .lua file with its parsed header.
type Script struct {
	Path    string // the file as the user named it, for diagnostics
	File    string // the file relative to the module root, with forward slashes
	Body    string // the file's text with its ---@include files inlined, sent to Redis verbatim
	Name    string // Go name: ---@script, else the file name in PascalCase
	NamePos Pos    // where Name was declared (1:1 when derived from the file name)
	Doc     []string

	Flags          []string // shebang flags, in order
	ReadOnly       bool     // flags=no-writes
	AllowCrossSlot bool     // flags=allow-cross-slot-keys

	Keys   []*Param
	Args   []*Param
	Return *Return // nil when the header has no ---@return

	Errors   []*Reply // ---@error, in order
	Statuses []*Reply // ---@status, in order

	Idempotent    string // ---@idempotent reason; calls are retried after transient failures
	IdempotentPos Pos

	Coalesce    int // ---@coalesce [max]: most calls per merged run; 0 without the tag
	CoalescePos Pos
	// functionLimits are what only function mode's wrapping would make
	// Lua refuse to compile (limits.go); Generate reports them with
	// Config.Functions.
	functionLimits Diagnostics

	UnsafeKeys    string // ---@unsafe-keys reason, or unsafeKeysFlag; disables the cluster-safety lint
	UnsafeKeysPos Pos    // where the header says ---@unsafe-keys; zero under the flag alone

	// Unused are the ---@unused lines: declared keys and args the script
	// keeps for its callers without reading them.
	Unused []*Unused
	// Elems are the ---@elem lines: elements of decoded args laid out in
	// a key family.
	Elems []*Elem

	// Includes are the file's include lines, in order; Spans map
	// the lines of Body to the files they come from, nil when Body is the
	// file's text alone (see include.go).
	Includes     []*Include
	Spans        []Span
	includeSites []includeSite

	Families   []*Family // ---@keys declared in this file
	family     *famModel // the family whose fields are all of the script's keys
	slotFamily *famModel // the family every key is laid out in (fields or methods)

	// Every ---@key and ---@arg line in order, including lines with errors
	// (as a Param with what could be read: an empty Name when not even the
	// name parsed). A bad line still holds its KEYS/ARGV position, so the
	// lint checks the others' use instead of waiting for the fix.
	keySlots, argSlots []*Param

	// tagged is set by any ---@ line. unknownMeant holds the tags that an
	// unknown tag may have been meant as (its suggestion, or every tag when
	// there is none): checks that need what such a tag would have declared
	// (KEYS[n] declared, ---@field after a ---@return tuple, ...) stay
	// silent instead of reporting a knock-on of the misspelling.
	tagged       bool
	unknownMeant map[string]bool
}

// Declared returns the keys and args the header declares, in KEYS and ARGV
// order, and whether those lists are the whole truth: ok is false for a
// plain script (no ---@ line at all, so nothing is declared, not even
// "none") and when a ---@key or ---@arg line did not parse or an unknown
// tag may have meant one, so that a key or arg may be missing.
func (s *Script) Declared() (keys, args []*Param, ok bool) {
	ok = s.tagged && !s.mayLack("@key") && !s.mayLack("@arg") &&
		len(s.keySlots) == len(s.Keys) && len(s.argSlots) == len(s.Args)
	return s.Keys, s.Args, ok
}

// Elem is an ---@elem line: an element of an arg the script decodes
// (local args = cmsgpack.unpack(ARGV[1]), or cjson.decode) laid out in a
// key family, as BullMQ passes its queue's prefix inside a msgpack array.
type Elem struct {
	Arg   string // the arg's name
	Index int    // the element, 1-based: args[Index]
	Param        // its name (a field of the family struct) and its Template
}

// Unused is an ---@unused line: a declared key or arg that the script does
// not read, kept because callers still pass it (an older version read it).
type Unused struct {
	Name   string // the key's or arg's name
	Reason string
	Pos    Pos // of the name
	used   bool
}

// mayLack reports whether an unknown tag in the header may have been meant
// as tag.
func (s *Script) mayLack(tag string) bool { return s.unknownMeant[tag] }

// meant records that a diagnostic already blames a line that meant to
// declare tag, so checks of what tag declares stay quiet.
func (s *Script) meant(tag string) {
	if s.unknownMeant == nil {
		s.unknownMeant = map[string]bool{}
	}
	s.unknownMeant[tag] = true
}

// unsafeKeysFlag is Script.UnsafeKeys of a script without its own
// ---@unsafe-keys line in a package generated with Config.UnsafeKeys.
const unsafeKeysFlag = "luagen generate -unsafe-keys: keys are the callers' business in this package"

// Param is a declared key, arg or tuple field.
type Param struct {
	Name     string // as written in the header, e.g. "holdCount"
	GoName   string // e.g. "HoldCount"
	Variadic bool   // ---@key ...name / ---@arg ...name: the rest of KEYS/ARGV
	Type     Type   // args and fields; keys are strings
	Desc     string
	Pos      Pos          // the name's position
	Template *KeyTemplate // a key's layout in its family; nil when the header gives none
	// Range is the constraint an ---@arg line gives after its type
	// ([1,1000], {a|b}); nil when it gives none.
	Range *ArgRange
	// Check is what the generated method checks before sending: Range,
	// or for a number the script turns into a Lua number the bound the
	// reply-shape analysis assumed (see numbers.go); nil for none.
	Check *ArgRange
	used  bool
}

// ArgRange is a constraint on an ---@arg's value, checked by the
// generated method before anything is sent: for int64 and float64 a
// closed interval of the value, for time.Time one of its Unix time in
// the wire unit, for string and []byte an interval of the length in
// bytes, or a set of allowed values.
type ArgRange struct {
	Text    string // as written in the header, e.g. "[1,1000]"; empty for a bound of the analysis
	Pos     Pos
	numeric bool     // lo..hi holds the value (or, for a string, its length)
	lo, hi  float64  // inclusive
	oneOf   []string // the allowed strings, for {a|b|c}
}

// Return is the ---@return declaration.
type Return struct {
	Type
	Tuple  string   // the struct name for ShapeTuple
	Fields []*Param // ---@field lines for ShapeTuple
	Desc   string
	Pos    Pos // position of the type token
}

// Reply is an ---@error or ---@status declaration.
type Reply struct {
	Value    string // "-1", "nil", "OUT_OF_STOCK", "OK", "0"
	ValuePos Pos
	Name     string // as written, e.g. "OutOfStock"
	GoName   string // e.g. "OutOfStock"
	NamePos  Pos
	Desc     string
}

// pkgModel is what the scripts of one package declare together: the
// errors several of them share.
type pkgModel struct {
	shared     map[string]*sharedError // by GoName
	sharedList []*sharedError          // the same, in the order they first appear
	families   *familySet
}

// sharedError is an ---@error name that more than one script declares,
// with one value: one sentinel, declared in PackageFile.
type sharedError struct {
	Reply   *Reply    // the first declaration, with the first description given
	Scripts []*Script // every script that declares it, in file order
}

// newPackage collects what scripts share. It runs on checked scripts, where
// every ---@error of one name has one value.
func newPackage(scripts []*Script) *pkgModel {
	byName := map[string]*sharedError{}
	var order []string
	for _, s := range scripts {
		for _, e := range s.Errors {
			se := byName[e.GoName]
			if se == nil {
				r := *e
				se = &sharedError{Reply: &r}
				byName[e.GoName] = se
				order = append(order, e.GoName)
			}
			if se.Reply.Desc == "" {
				se.Reply.Desc = e.Desc
			}
			se.Scripts = append(se.Scripts, s)
		}
	}
	p := &pkgModel{shared: map[string]*sharedError{}}
	for _, n := range order {
		if se := byName[n]; len(se.Scripts) > 1 {
			p.shared[n] = se
			p.sharedList = append(p.sharedList, se)
		}
	}
	return p
}
