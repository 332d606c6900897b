package gen

// The names luagen declares once in a package (emitPackage, emitLibrary),
// which checkPackage and Config.Check keep scripts and -new from taking.
const (
	scriptsType   = "Scripts" // the type whose methods run the scripts
	allFunc       = "All"     // the function that lists the scripts
	preloadMethod = "Preload" // the method of Scripts that loads them
	libraryFunc   = "Library" // with -functions: the function that returns the library
	libraryVar    = "library" // with -functions: the variable that holds it
)

// packageDecls returns the package-level names luagen declares for cfg,
// but for the constructor (cfg.New), whose collisions have their own
// message, and for the methods of Scripts (preloadMethod).
func packageDecls(cfg Config) []string {
	names := []string{scriptsType, allFunc}
	if cfg.Functions {
		names = append(names, libraryFunc, libraryVar)
	}
	return names
}

// scriptNames are the Go identifiers the generated code declares for one
// script, all derived here: the emitter (emit.go) declares and links them
// and the collision check (checkPackage, generate.go) checks them, so a
// name cannot be emitted without being checked. A name the script does not
// get is "". The examples are those of a script named Deduct.
type scriptNames struct {
	// Method is the method of Scripts that runs the script: Deduct. Key
	// families also name their method for the script's keys so.
	Method string
	// Queue is the method of Scripts that queues a call on a
	// runtime.Batch: QueueDeduct.
	Queue string
	// Script is the exported function that returns the *runtime.Script:
	// DeductScript.
	Script string
	// Var is the *runtime.Script variable: deductScript.
	Var string
	// Body is the constant that holds the script's text: deductBody.
	Body string
	// Decode is the function that decodes a reply: deductDecode. It is
	// reserved for every script, declared for one with a ---@return.
	Decode string
	// Call is the call buffer type of a script whose keys and args all
	// have a fixed length: deductCall. Reserved for every script.
	Call string
	// Calls is the runtime.CallPool of Call: deductCalls. Reserved for
	// every script.
	Calls string
	// Keys is the struct of the KEYS, "" without ---@key: DeductKeys.
	Keys string
	// Args is the struct of the ARGV, "" without ---@arg: DeductArgs.
	Args string
	// Reply is the named type of the reply of a script with ---@status
	// lines: DeductReply; "" without them.
	Reply string
	// Statuses are the constants of the ---@status lines, by index in
	// Script.Statuses: DeductSoldOut.
	Statuses []string
	// Tuple is the struct of a ---@return tuple, named by the annotation;
	// "" for any other return.
	Tuple string
	// Errors are the sentinels of the ---@error lines, by index in
	// Script.Errors: ErrOutOfStock. Scripts that declare one error name
	// share its sentinel (see pkgModel).
	Errors []string
}

// namesOf derives every Go identifier the generated code declares for s.
func namesOf(s *Script) scriptNames {
	lower := lowerCamel(s.Name)
	n := scriptNames{
		Method: s.Name,
		Queue:  "Queue" + s.Name,
		Script: s.Name + "Script",
		Var:    lower + "Script",
		Body:   lower + "Body",
		Decode: lower + "Decode",
		Call:   lower + "Call",
		Calls:  lower + "Calls",
	}
	if len(s.Keys) > 0 {
		n.Keys = s.Name + "Keys"
	}
	if len(s.Args) > 0 {
		n.Args = s.Name + "Args"
	}
	if len(s.Statuses) > 0 {
		n.Reply = s.Name + "Reply"
	}
	for _, st := range s.Statuses {
		n.Statuses = append(n.Statuses, s.Name+st.GoName)
	}
	if r := s.Return; r != nil && r.Shape == ShapeTuple {
		n.Tuple = r.Tuple
	}
	for _, e := range s.Errors {
		n.Errors = append(n.Errors, sentinelName(e))
	}
	return n
}

// sentinelName is the sentinel error of an ---@error line: ErrOutOfStock.
// namesOf uses it for a script's errors, emitSharedErrors for the errors
// scripts share.
func sentinelName(e *Reply) string { return "Err" + e.GoName }

// decl is a name the generated code declares, as the collision check
// reports it.
type decl struct {
	name   string
	method bool   // a method of Scripts; else a package-level name
	at     Pos    // the annotation it comes from
	tag    string // that annotation, as diagnostics quote it
}

// fromName returns the names n derives from the script's name, but for
// Method itself, with the annotation each comes from: the script's name,
// or its ---@status line. The collision check adds them in this order once
// Method is free; Tuple and Errors it checks on their own.
func (n scriptNames) fromName(s *Script) []decl {
	tag := nameTag(s)
	d := func(name string) decl { return decl{name: name, at: s.NamePos, tag: tag} }
	out := []decl{{name: n.Queue, method: true, at: s.NamePos, tag: tag},
		d(n.Script), d(n.Body), d(n.Decode), d(n.Call), d(n.Calls)}
	if n.Var != n.Script { // equal only for a lower-case name, which the header check reports
		out = append(out, d(n.Var))
	}
	for _, name := range []string{n.Keys, n.Args} {
		if name != "" {
			out = append(out, d(name))
		}
	}
	if n.Reply != "" {
		out = append(out, decl{name: n.Reply, at: s.NamePos, tag: tag + " with ---@status"})
	}
	for i, st := range s.Statuses {
		out = append(out, decl{name: n.Statuses[i], at: st.NamePos, tag: "---@status " + st.Value + " " + st.Name})
	}
	return out
}

// nameTag is where a script's name comes from, as diagnostics quote it.
func nameTag(s *Script) string {
	if s.NamePos == (Pos{1, 1}) {
		return "the file name"
	}
	return "---@script " + s.Name
}
