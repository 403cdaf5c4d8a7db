package ksgen

import (
	"sort"
	"strings"
)

// AllFeatures returns the names Features can give, each with what it
// means.
func AllFeatures() []Feature {
	return []Feature{
		{"fanout-call", "a call of a helper with one variable in two argument positions, (h u u)"},
		{"alias", "a let binding a variable to another, (let (y u) ...)"},
		{"dup-tuple", "a tuple of one variable twice, (tuple u u)"},
		{"shadow", "a binder (let, tuple pattern, lambda) reusing a name in scope, parameters included"},
		{"inline", "($inline (h ...))"},
		{"const-cond", "an if on true, false or a comparison of an expression with itself"},
		{"tensor2", "a Tensor 2 Float value"},
		{"tensor2-arg", "an entry function taking a Tensor 2 Float"},
		{"build2", "a build over (tuple n m)"},
		{"size2", "the size of a Tensor 2, a pair"},
		{"vecvec", "a Vec (Vec Float) value"},
		{"vecvec-arg", "an entry function taking a Vec (Vec Float)"},
		{"int-from-active", "the size of a vector or matrix feeding an index, a loop's size or $ranhashdoub"},
		{"ranhashdoub", "$ranhashdoub"},
		{"recursion", "a helper calling itself"},
		{"tail-recursion", "a helper whose call of itself is its value (a branch of an if, after lets or not)"},
		{"call", "a call of a helper"},
		{"hand-rev", "a call of a helper whose [rev] is written by hand (as the [rev] of a twin of its body)"},
		{"let", "a let"},
		{"tuple-pattern", "a let of a tuple pattern, (let ((a b) e) ...)"},
		{"if", "an if"},
		{"build", "a build over an Integer"},
		{"sumbuild", "a sumbuild"},
		{"sparse", "a buildFromSparse"},
		{"map", "a map"},
		{"fold", "a fold"},
		{"index", "an index"},
		{"dot", "a dot"},
		{"sum", "a sum"},
	}
}

// A Feature is a construct a program may exercise.
type Feature struct {
	Name, Doc string
}

// Features returns the names of the constructs the program exercises
// (AllFeatures) in the functions the entry calls, directly or not,
// sorted. It reads the program's tree, so it holds for a shrunk program
// too.
func (p *Program) Features() []string {
	set := map[string]bool{}
	funcs := map[string]*Func{}
	for _, f := range p.Funcs {
		funcs[f.Name] = f
	}
	// The functions the entry calls, directly or not: the others are
	// not run.
	reached := map[string]bool{p.Entry().Name: true}
	for i := len(p.Funcs) - 1; i >= 0; i-- {
		if f := p.Funcs[i]; reached[f.Name] {
			for _, n := range allNodes(f.Body) {
				if funcs[n.Head] != nil {
					reached[n.Head] = true
				}
			}
		}
	}
	for i, f := range p.Funcs {
		if !reached[f.Name] {
			continue
		}
		if f.HandRev && i < len(p.Funcs)-1 {
			set["hand-rev"] = true
		}
		scope := map[string]int{}
		for _, q := range f.Params {
			scope[q.Name]++
			if i == len(p.Funcs)-1 {
				switch q.T.K {
				case Tensor2:
					set["tensor2-arg"] = true
				case VecVec:
					set["vecvec-arg"] = true
				}
			}
			kindFeatures(q.T, set)
		}
		w := walker{f: f, funcs: funcs, scope: scope, set: set}
		w.walk(f.Body)
	}
	var out []string
	for name := range set {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

func kindFeatures(t Type, set map[string]bool) {
	switch t.K {
	case Tensor2:
		set["tensor2"] = true
	case VecVec:
		set["vecvec"] = true
	}
}

// walker finds the features of a function's body.
type walker struct {
	f     *Func
	funcs map[string]*Func
	scope map[string]int // how many bindings of each name are in scope
	set   map[string]bool
}

func (w *walker) walk(n *Node) {
	set := w.set
	kindFeatures(n.T, set)
	switch h := n.Head; h {
	case "":
		return
	case "let", "let2", "build", "sumbuild", "build2", "map", "fold", "sparse":
		if h == "let" && isVar(n.Kids[0]) {
			set["alias"] = true
		}
		name := map[string]string{"let2": "tuple-pattern", "build2": "build2"}[h]
		if name == "" {
			name = h
		}
		set[name] = true
		if h == "build" || h == "sumbuild" || h == "build2" {
			if hasSize(n.Kids[0]) {
				set["int-from-active"] = true
			}
		}
		if h == "build2" {
			set["build"] = true
		}
		// The kids outside the binding's scope, then those inside it: the
		// lambda's body is the first kid of map and fold, the last of the
		// rest.
		outside, inside := n.Kids[:1], n.Kids[1:]
		switch h {
		case "map", "fold":
			outside, inside = n.Kids[1:], n.Kids[:1]
		case "sparse":
			outside, inside = n.Kids[:2], n.Kids[2:]
		}
		for _, k := range outside {
			w.walk(k)
		}
		bound := n.binds()
		for _, b := range bound {
			if w.scope[b] > 0 {
				set["shadow"] = true
			}
			w.scope[b]++
		}
		for _, k := range inside {
			w.walk(k)
		}
		for _, b := range bound {
			w.scope[b]--
		}
		return
	case "$inline":
		set["inline"] = true
	case "if":
		set["if"] = true
		for _, k := range n.Kids[1:] {
			for k.Head == "let" {
				k = k.Kids[1]
			}
			if k.Head == w.f.Name {
				set["tail-recursion"] = true
			}
		}
		c := n.Kids[0]
		if c.Head == "" || len(c.Kids) == 2 && c.Kids[0].String() == c.Kids[1].String() {
			set["const-cond"] = true
		}
	case "$ranhashdoub":
		set["ranhashdoub"] = true
		if hasSize(n.Kids[0]) {
			set["int-from-active"] = true
		}
	case "index":
		set["index"] = true
		if hasSize(n.Kids[0]) {
			set["int-from-active"] = true
		}
	case "size":
		if n.Kids[0].T.K == Tensor2 {
			set["size2"] = true
		}
	case "dot", "sum":
		set[h] = true
	case "tuple":
		if len(n.Kids) == 2 && isVar(n.Kids[0]) && n.Kids[0].Text == n.Kids[1].Text {
			set["dup-tuple"] = true
		}
	}
	if w.funcs[n.Head] != nil {
		set["call"] = true
		if n.Head == w.f.Name {
			set["recursion"] = true
		}
		seen := map[string]bool{}
		for _, k := range n.Kids {
			if isVar(k) && k.T.K != Integer {
				if seen[k.Text] {
					set["fanout-call"] = true
				}
				seen[k.Text] = true
			}
		}
	}
	for _, k := range n.Kids {
		w.walk(k)
	}
}

// allNodes returns the nodes of a tree.
func allNodes(n *Node) []*Node {
	out := []*Node{n}
	for _, k := range n.Kids {
		out = append(out, allNodes(k)...)
	}
	return out
}

// isVar reports whether n is a variable.
func isVar(n *Node) bool {
	return n.Head == "" && n.Text != "" && n.Text != "true" && n.Text != "false" &&
		!strings.ContainsAny(n.Text[:1], "0123456789-.")
}

// hasSize reports whether n computes a size.
func hasSize(n *Node) bool {
	if n.Head == "size" {
		return true
	}
	for _, k := range n.Kids {
		if hasSize(k) {
			return true
		}
	}
	return false
}
