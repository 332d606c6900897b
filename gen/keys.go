package gen

import (
	"fmt"
	"go/token"
	"go/types"
	"path"
	"slices"
	"strings"
)

// Key templates: how a key is built from typed parts.
//
// A package declares a key family once, in any of its scripts:
//
//	---@keys SKUKeys KeysFor prefix{sku}   the keys of one SKU
//
// and each key of a script names its layout within the family:
//
//	---@key stock   {sku}:stock    string counter holding the units left
//	---@key latch   {name}:latch:<owner>.<seq:int64>
//
// The family's template is literal text and <part>s around the hash-tag
// part in braces (prefix{sku}, <prefix>:{queue}, {prefix}:<queue>). A
// key's template starts with the family's {tag}, which stands for the
// family's whole template, and goes on with literal text and <part> or
// <part:int64> placeholders. luagen generates the struct (SKUKeys, a field per key
// without placeholders, a method per key with them), the constructor
// (KeysFor(prefix, sku string) SKUKeys) and, for each script whose keys all
// are fields of one family, a method that returns the script's Keys struct
// (SKUKeys.Deduct() DeductKeys). Keys built from one family share its hash
// tag, so they share a slot by construction. A variadic key may have a
// template too: it lays out each element, which the caller builds with the
// family's method (or field) and lists.

// Family is a ---@keys declaration.
type Family struct {
	Type     string // Go type, e.g. "SKUKeys"
	Ctor     string // constructor, e.g. "KeysFor"
	Template string // as written, e.g. "prefix{sku}" or "<prefix>:{queue}"
	Tag      string // the hash-tag part, e.g. "sku"
	Desc     string
	Pos      Pos // position of Type
	CtorPos  Pos // position of Ctor
	TplPos   Pos // position of the template
	// pieces are the template in order: literal text, <part>s, and the
	// tag (the piece with tag set).
	pieces []tplPiece
	s      *Script
}

// Layout spells the family's template as the header does: prefix{sku}.
func (f *Family) Layout() string { return f.Template }

// partNames are the family's parts in template order: its constructor's
// parameters.
func (f *Family) partNames() []string {
	var out []string
	for _, p := range f.pieces {
		if p.Part != nil {
			out = append(out, p.Part.Name)
		}
	}
	return out
}

// KeyTemplate is the layout of a ---@key (or of an ---@arg that is a key
// prefix) within its family: the family's {tag}, standing for the family's
// whole template, and then literal text and typed parts.
type KeyTemplate struct {
	Raw    string     // as written, e.g. "{sku}:stock"
	Tag    string     // the tag part it starts with
	suffix []tplPiece // after the tag
	Pos    Pos        // the template's position
	family *famModel  // resolved by checkFamilies
	parts  []*Param   // the <part> placeholders, in order
	keyOf  *Param     // the key (or arg) it lays out
	script *Script    // the script that declares it
}

// tplPiece is literal text, or a part when Part is set (the family's hash
// tag when tag is set too).
type tplPiece struct {
	Lit  string
	Part *Param // Name, GoName (unexported Go parameter name) and Type (String or Int64)
	tag  bool
}

// fixed reports whether the key has no placeholders: a field of its family.
func (t *KeyTemplate) fixed() bool { return len(t.parts) == 0 }

// sameLayout reports whether t and o build the same key from the same parts.
func (t *KeyTemplate) sameLayout(o *KeyTemplate) bool { return t.Raw == o.Raw }

// keysFamily parses a "---@keys Type Ctor template description" line.
func (p *headerParser) keysFamily(ws []word) {
	if len(ws) < 4 {
		p.r.errorf(p.pos(ws[0].col), "malformed ---@keys: want ---@keys Type Constructor prefix{tag} description, e.g. ---@keys SKUKeys KeysFor prefix{sku}")
		return
	}
	typ, ctor, tpl := ws[1], ws[2], ws[3]
	for i, w := range []word{typ, ctor} {
		if !token.IsIdentifier(w.s) || w.s == "_" {
			p.r.errorf(p.pos(w.col), "malformed ---@keys: %q is not a Go identifier; want ---@keys Type Constructor prefix{tag}", w.s)
			return
		}
		// Both are package-level names of the generated code, so they obey
		// the rules of Config.Check's -new; main in package main is
		// checkPackage's, which knows the package. The family is declared
		// all the same, so that its keys are not reported as orphans.
		if reason := reservedReason(w.s); reason != "" {
			p.r.errorf(p.pos(w.col), "---@keys %s name %q %s; choose another name", [...]string{"type", "constructor"}[i], w.s, reason)
		}
	}
	f := &Family{Type: typ.s, Ctor: ctor.s, Template: tpl.s, Desc: p.desc(ws, 4), Pos: p.pos(typ.col), CtorPos: p.pos(ctor.col), TplPos: p.pos(tpl.col), s: p.s}
	if !p.familyTemplate(f, tpl) {
		return
	}
	for _, part := range f.partNames() {
		if part == f.Type {
			p.r.errorf(p.pos(tpl.col), "---@keys template %q: a part named %s would hide the type %s in its constructor; choose another name", tpl.s, f.Type, f.Type)
			return
		}
	}
	if prev, ok := p.seen["@keys "+f.Type]; ok {
		p.r.errorf(p.pos(typ.col), "duplicate ---@keys %s (first at line %d)", f.Type, prev.Line)
		return
	}
	p.seen["@keys "+f.Type] = p.pos(typ.col)
	p.s.Families = append(p.s.Families, f)
}

// familyTemplate parses a family's template w into f.pieces and f.Tag:
// literal text and <part>s around one {part}, the hash tag, so that a
// project keeps the key names its data already has (bull:{q}:wait is
// <prefix>:{queue}, {bull}:q:wait is {prefix}:<queue>). A name right
// before the tag with nothing before it (prefix{sku}) is a part, as
// luagen has always read it. Every part is a string.
func (p *headerParser) familyTemplate(f *Family, w word) bool {
	s, raw := w.s, w.s
	bad := func(off int, format string, args ...any) bool {
		p.r.errorf(p.pos(w.col+off), "---@keys template %q: "+format, append([]any{raw}, args...)...)
		return false
	}
	open := strings.IndexByte(s, '{')
	if open < 0 {
		p.r.errorf(p.pos(w.col), "---@keys template %q has no {hash tag}: the keys of a family share a slot through it; write it as prefix{tag}, e.g. prefix{sku}, or with the tag where your keys have it, e.g. <prefix>:{queue}", s)
		return false
	}
	legacy := open > 0 && isLuaName(s[:open])
	if legacy {
		s = "<" + s[:open] + ">" + s[open:] // prefix{sku}
	}
	// orig maps an offset of s back to raw, which lacks the legacy "<>".
	orig := func(i int) int {
		switch {
		case !legacy:
			return i
		case i <= open:
			return max(i-1, 0)
		}
		return i - 2
	}
	seen := map[string]bool{}
	lit := ""
	flush := func() {
		if lit != "" {
			f.pieces = append(f.pieces, tplPiece{Lit: lit})
			lit = ""
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		col := orig(i)
		switch c {
		case '}', '>':
			return bad(col, "%q without its opening %q", string(c), map[byte]string{'}': "{", '>': "<"}[c])
		case '{', '<':
			end := map[byte]byte{'{': '}', '<': '>'}[c]
			j := strings.IndexByte(s[i:], end)
			if j < 0 {
				return bad(col, "%q is not closed", string(c))
			}
			name := s[i+1 : i+j]
			if c == '{' && f.Tag != "" {
				return bad(col, "a second {…}: a family has one hash tag, and Redis hashes only the first {…} of a key")
			}
			if strings.ContainsAny(name, "{<:") {
				return bad(orig(i+1), "part %q is not a name; the parts of a family are strings, written <name>", name)
			}
			if msg := partNameProblem(name); msg != "" {
				return bad(orig(i+1), "%s", msg)
			}
			if seen[name] {
				return bad(orig(i+1), "names part %s twice; name the parts differently", name)
			}
			seen[name] = true
			flush()
			f.pieces = append(f.pieces, tplPiece{Part: &Param{Name: name, GoName: name, Type: Type{Shape: ShapeScalar, Elem: String}}, tag: c == '{'})
			if c == '{' {
				f.Tag = name
			}
			i += j
		default:
			lit += string(c)
		}
	}
	flush()
	if f.Tag == "" {
		return bad(0, "the hash tag is missing") // cannot happen: open >= 0
	}
	return true
}

// partNameProblem says why name cannot be a part (a parameter of a
// generated Go function), or returns "".
func partNameProblem(name string) string {
	switch {
	case name == "":
		return "a part needs a name"
	case !isLuaName(name):
		return fmt.Sprintf("part %q is not a name (letters, digits and _; in the text after the tag, a part is written <name> or <name:int64>)", name)
	case token.IsKeyword(name):
		return fmt.Sprintf("part %q is a Go keyword and cannot name a parameter; choose another name", name)
	case name == "k" || name == "tag" || slices.Contains(importNames, name):
		return fmt.Sprintf("part %q is a name the generated code uses itself; choose another name", name)
	case types.Universe.Lookup(name) != nil:
		return fmt.Sprintf("part %q would shadow Go's predeclared %s in the generated function; choose another name", name, name)
	}
	return ""
}

// isTemplate reports whether the word after a ---@key name is a key
// template rather than the start of the description.
func isTemplate(s string) bool { return strings.ContainsAny(s, "{}<>") }

// keyTemplate parses the template w of key prm, or reports why it cannot
// and returns nil.
func (p *headerParser) keyTemplate(w word, prm *Param) *KeyTemplate {
	t := &KeyTemplate{Raw: w.s, Pos: p.pos(w.col), keyOf: prm, script: p.s}
	s := w.s
	if !strings.HasPrefix(s, "{") {
		if strings.Contains(s, "{") {
			p.r.errorf(p.pos(w.col), "key template %q must start with its family's {tag}, e.g. {sku}:stock; the {tag} stands for the family's whole template (the text around its tag in ---@keys), which its constructor adds", s)
		} else {
			p.r.errorf(p.pos(w.col), "key template %q has no {hash tag}, so luagen cannot put it in a slot with other keys: start it with the {tag} of a ---@keys family, e.g. {sku}:stock", s)
		}
		return nil
	}
	end := strings.IndexByte(s, '}')
	if end < 0 {
		p.r.errorf(p.pos(w.col), "key template %q: the hash tag is not closed; want {tag} and then the rest, e.g. {sku}:stock", s)
		return nil
	}
	t.Tag = s[1:end]
	if msg := partNameProblem(t.Tag); msg != "" {
		p.r.errorf(p.pos(w.col+1), "key template %q: %s", s, msg)
		return nil
	}
	seen := map[string]bool{t.Tag: true}
	rest, col := s[end+1:], w.col+end+1
	lit := ""
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		switch c {
		case '{', '}':
			p.r.errorf(p.pos(col+i), "key template %q: a key has one hash tag, at its start; Redis hashes only the first {…}, so a second one is plain text that reads like a tag: drop it", s)
			return nil
		case '>':
			p.r.errorf(p.pos(col+i), "key template %q: '>' without '<'; a part is written <name> or <name:int64>", s)
			return nil
		case '<':
			j := strings.IndexByte(rest[i:], '>')
			if j < 0 {
				p.r.errorf(p.pos(col+i), "key template %q: '<' is not closed; a part is written <name> or <name:int64>", s)
				return nil
			}
			spec := rest[i+1 : i+j]
			name, typ, typed := strings.Cut(spec, ":")
			if msg := partNameProblem(name); msg != "" {
				p.r.errorf(p.pos(col+i+1), "key template %q: %s", s, msg)
				return nil
			}
			elem := String
			if typed {
				switch typ {
				case "string":
				case "int64":
					elem = Int64
				default:
					p.r.errorf(p.pos(col+i+1+len(name)+1), "key template %q: part %s has type %q; a part is a string (the default) or an int64", s, name, typ)
					return nil
				}
			}
			if seen[name] {
				p.r.errorf(p.pos(col+i+1), "key template %q names part %s twice", s, name)
				return nil
			}
			seen[name] = true
			if lit != "" {
				t.suffix = append(t.suffix, tplPiece{Lit: lit})
				lit = ""
			}
			part := &Param{Name: name, GoName: name, Type: Type{Shape: ShapeScalar, Elem: elem}, Pos: p.pos(col + i + 1)}
			t.suffix = append(t.suffix, tplPiece{Part: part})
			t.parts = append(t.parts, part)
			i += j
		default:
			lit += string(c)
		}
	}
	if lit != "" {
		t.suffix = append(t.suffix, tplPiece{Lit: lit})
	}
	return t
}

// familySet is the families of a package and the keys laid out in them.
type familySet struct {
	list  []*famModel
	byTag map[string]*famModel
}

// famModel is one family with its keys, in the order scripts declare them.
type famModel struct {
	*Family
	keys    []*KeyTemplate          // one per key name, the first declaration
	byName  map[string]*KeyTemplate // by key GoName
	scripts []*Script               // scripts whose keys are all fields of this family
	desc    map[string]string       // by key GoName: the description scripts give it
	mixed   map[string]bool         // by key GoName: scripts describe it differently
}

// checkPlainKeys reports a key that is not laid out in a family in a
// script with more than one key: nothing then makes the keys share a hash
// slot, and on Redis Cluster the call fails with CROSSSLOT unless every
// caller happens to tag them alike; so is a script's one plain key beside
// key prefixes (prefixes, the args checkFamilies resolved), since the keys
// it builds from them need not share its slot. A variadic key is the
// caller's list (as MGET's keys are) and is not reported itself. A script that opts out
// of the cluster lint (---@unsafe-keys) or spans slots on purpose
// (flags=allow-cross-slot-keys) is not reported.
func checkPlainKeys(s *Script, prefixes []*Param, errorf func(s *Script, at Pos, format string, args ...any)) {
	n := len(s.Keys)
	var prefix *Param
	if len(prefixes) > 0 {
		prefix = prefixes[0]
	}
	if s.UnsafeKeys != "" || s.AllowCrossSlot || n < 2 && (n == 0 || prefix == nil) {
		return
	}
	for i, k := range s.Keys {
		if k.Template != nil || k.Variadic {
			continue
		}
		if n == 1 { // its only key, beside keys the script builds from a prefix
			errorf(s, k.Pos, "key %s is not laid out in a ---@keys family, so nothing makes it share a hash slot with the keys the script builds from the prefix arg %s: on Redis Cluster a call fails with CROSSSLOT or a non-local key unless every caller gives them one {hash tag}; lay it out in %s's family (---@key %s {tag}:suffix), or opt out with ---@unsafe-keys reason",
				k.Name, prefix.Name, prefix.Name, k.Name)
			return
		}
		other := s.Keys[(i+1)%n]
		errorf(s, k.Pos, "key %s is not laid out in a ---@keys family, so nothing makes it share a hash slot with key %s: on Redis Cluster a call fails with CROSSSLOT unless every caller gives them one {hash tag}; declare a family (---@keys Type Ctor prefix{tag}) and lay the keys out in it (---@key %s {tag}:suffix), or opt out with ---@unsafe-keys reason",
			k.Name, other.Name, k.Name)
		return
	}
}

// checkPrefixes reports a key prefix (an ---@arg laid out in a family)
// that the script's keys do not route: Redis Cluster sends a script to the
// node of its KEYS' slot (any node when it has none), so the keys a script
// builds from a prefix are local only when a key of the same family is
// among its KEYS. first is the script's first key laid out in a family.
func checkPrefixes(s *Script, prefixes []*Param, first *KeyTemplate, errorf func(s *Script, at Pos, format string, args ...any)) {
	if s.UnsafeKeys != "" || s.AllowCrossSlot {
		return
	}
	for _, a := range prefixes {
		t := a.Template
		switch {
		case first == nil || first.family == nil:
			errorf(s, t.Pos, "arg %s is a key prefix of %s, but none of the script's KEYS is laid out in %s: Redis Cluster routes a script by its KEYS (to any node when there are none), so the keys built from %s may live on another node; declare a key of the family that the script receives (---@key name {%s}:suffix)",
				a.Name, t.family.Type, t.family.Type, a.Name, t.Tag)
		case first.family != t.family:
			errorf(s, t.Pos, "arg %s has the hash tag {%s} of %s, but key %s has {%s} of %s: keys built from the prefix share the keys' slot only by chance; lay the prefix out in %s, or pass a key of %s",
				a.Name, t.Tag, t.family.Type, first.keyOf.Name, first.Tag, first.family.Type, first.family.Type, t.family.Type)
		}
	}
}

// checkFamilies resolves the key templates of every script against the
// package's families and reports conflicts: a family declared twice with
// different templates, two families with one tag, a template whose tag no
// family has, one key laid out twice differently, and a script whose keys
// come from families with different tags.
func checkFamilies(scripts []*Script) (*familySet, Diagnostics) {
	var diags Diagnostics
	errorf := func(s *Script, at Pos, format string, args ...any) {
		diags = append(diags, Diagnostic{Path: s.Path, Pos: at, Msg: fmt.Sprintf(format, args...)})
	}
	fs := &familySet{byTag: map[string]*famModel{}}
	byType := map[string]*famModel{}
	for _, s := range scripts {
		for _, f := range s.Families {
			if prev := byType[f.Type]; prev != nil {
				if prev.Ctor != f.Ctor || prev.Layout() != f.Layout() {
					errorf(s, f.TplPos, "---@keys %s is %s %s here but %s %s in %s: a family has one constructor and one template; declare it once, or the same way everywhere",
						f.Type, f.Ctor, f.Layout(), prev.Ctor, prev.Layout(), where(prev.s, prev.TplPos))
				}
				if prev.Desc == "" {
					prev.Desc = f.Desc
				}
				continue
			}
			if prev := fs.byTag[f.Tag]; prev != nil {
				errorf(s, f.TplPos, "---@keys %s: the tag part {%s} is already %s's (%s); key templates name their family by its tag, so give each family its own tag part",
					f.Type, f.Tag, prev.Type, where(prev.s, prev.TplPos))
				continue
			}
			m := &famModel{Family: f, byName: map[string]*KeyTemplate{}, desc: map[string]string{}, mixed: map[string]bool{}}
			byType[f.Type], fs.byTag[f.Tag] = m, m
			fs.list = append(fs.list, m)
		}
	}
	// member resolves the template of k, a key or an arg of s, against the
	// families and records it as a member of its family; nil when no
	// family has its tag.
	member := func(s *Script, k *Param) *famModel {
		t := k.Template
		m := fs.byTag[t.Tag]
		if m == nil {
			var known []string
			for _, f := range fs.list {
				known = append(known, "{"+f.Tag+"} ("+f.Type+", "+where(f.s, f.TplPos)+")")
			}
			hint := "declare the family with ---@keys Type Constructor prefix{" + t.Tag + "} (in one script of the package: if another script declares it, check this one together with it, as generate does with the whole directory)"
			if len(known) > 0 {
				hint = "known tags: " + strings.Join(known, ", ") + "; or " + hint
			}
			errorf(s, t.Pos, "key template %s: no ---@keys family has the tag part {%s}; %s", t.Raw, t.Tag, hint)
			return nil
		}
		t.family = m
		for _, part := range t.parts {
			if slices.Contains(m.partNames(), part.Name) {
				errorf(s, part.Pos, "key template %s: part %s is already a part of %s's template %s; choose another name", t.Raw, part.Name, m.Type, m.Template)
			}
		}
		if prev := m.byName[k.GoName]; prev != nil {
			switch {
			case k.Desc == "" || k.Desc == m.desc[k.GoName]:
			case m.desc[k.GoName] == "":
				m.desc[k.GoName] = k.Desc
			default:
				m.mixed[k.GoName] = true // scripts say different things: the family says none
			}
			if !prev.sameLayout(t) {
				errorf(s, t.Pos, "key %s is %s here but %s in %s: a key of family %s has one layout; make them equal, or name them differently",
					k.Name, t.Raw, prev.Raw, where(prev.script, prev.Pos), m.Type)
			}
		} else {
			m.byName[k.GoName] = t
			m.keys = append(m.keys, t)
			m.desc[k.GoName] = k.Desc
		}
		return m
	}
	for _, s := range scripts {
		var prefixes []*Param // args (and decoded args' elements) laid out in a family: key prefixes
		for _, a := range s.Args {
			if a.Template != nil && member(s, a) != nil {
				prefixes = append(prefixes, a)
			}
		}
		for _, e := range s.Elems {
			if member(s, &e.Param) != nil {
				prefixes = append(prefixes, &e.Param)
			}
		}
		var first *KeyTemplate // the first templated key, for the same-slot check
		all := len(s.Keys) > 0
		for _, k := range s.Keys {
			t := k.Template
			if t == nil {
				all = false
				continue
			}
			m := member(s, k)
			if m == nil {
				all = false
				continue
			}
			if !t.fixed() || k.Variadic {
				all = false // a method builds it, or the caller lists them
			}
			switch {
			case first == nil:
				first = t
			case first.family != m && !s.AllowCrossSlot:
				errorf(s, t.Pos, "key %s has the hash tag {%s} of %s, but key %s has {%s} of %s: keys of different families share a slot only by chance, so calls fail with runtime.ErrCrossSlot; give the script keys of one family (or, on a single node only, flags=allow-cross-slot-keys)",
					k.Name, t.Tag, m.Type, first.keyOf.Name, first.Tag, first.family.Type)
				all = false
			}
		}
		// slotFamily: every key is laid out in one family, so they share its
		// tag; family: also every key is a field, so a method can build them.
		one := first != nil && first.family != nil
		for _, k := range s.Keys {
			if one && (k.Template == nil || k.Template.family != first.family) {
				one = false
			}
		}
		if one {
			s.slotFamily = first.family
			if all {
				first.family.scripts = append(first.family.scripts, s)
				s.family = first.family
			}
		}
		checkPrefixes(s, prefixes, first, errorf)
		checkPlainKeys(s, prefixes, errorf)
	}
	for _, m := range fs.list {
		if len(m.keys) == 0 {
			errorf(m.s, m.TplPos, "---@keys %s has no keys: lay keys out in it with ---@key name {%s}:suffix, or drop it", m.Type, m.Tag)
		}
	}
	return fs, diags
}

// where names position p of script s in a message about another script:
// "file.lua:line:col".
func where(s *Script, p Pos) string {
	return fmt.Sprintf("%s:%d:%d", path.Base(s.Path), p.Line, p.Col)
}

// familyNames reports generated names of the families that collide with
// each other: a method (script conversion or key with parts) named like a
// field. Package-level names (the type and the constructor) are checked
// with the other package names.
func familyNames(fs *familySet) Diagnostics {
	var diags Diagnostics
	for _, m := range fs.list {
		members := map[string]string{}
		add := func(name, what string, s *Script, at Pos) {
			if prev, ok := members[name]; ok {
				diags = append(diags, Diagnostic{Path: s.Path, Pos: at, Msg: fmt.Sprintf(
					"%s.%s (from %s) is already declared by %s; generated names must be unique", m.Type, name, what, prev)})
				return
			}
			members[name] = where(s, at) + " (" + what + ")"
		}
		for _, t := range m.keys {
			add(t.keyOf.GoName, "key "+t.keyOf.Name+" "+t.Raw, t.script, t.keyOf.Pos)
		}
		for _, s := range m.scripts {
			add(namesOf(s).Method, "script "+s.Name+", whose keys are all in "+m.Type, s, s.NamePos) // emitFamily's method
		}
	}
	return diags
}

// keyDesc is the description of a family's key for the family's docs: what
// the scripts say of it, or "" when they disagree.
func (m *famModel) keyDesc(t *KeyTemplate) string {
	if m.mixed[t.keyOf.GoName] {
		return ""
	}
	return m.desc[t.keyOf.GoName]
}
