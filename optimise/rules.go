package optimise

import (
	"fmt"
	"math"
	"strings"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/lower"
	"github.com/ksc-lang/ksc/syntax"
	"github.com/ksc-lang/ksc/types"
)

// A compiled law: its patterns parsed.
type law struct {
	*Law
	lhs, rhs syntax.Expr
	head     string
}

// compileLaws parses the laws of the table.
func compileLaws(table []Law) ([]*law, error) {
	var out []*law
	for i := range table {
		l := &table[i]
		lhs, err := syntax.ParseExpr("law "+l.Name, []byte(l.LHS))
		if err != nil {
			return nil, fmt.Errorf("law %s: %w", l.Name, err)
		}
		rhs, err := syntax.ParseExpr("law "+l.Name, []byte(l.RHS))
		if err != nil {
			return nil, fmt.Errorf("law %s: %w", l.Name, err)
		}
		c, ok := lhs.(*syntax.Call)
		if !ok {
			return nil, fmt.Errorf("law %s: the left-hand side must be a call", l.Name)
		}
		for _, w := range l.When {
			switch f := strings.Fields(w); f[0] {
			case "notfree", "float", "integer", "pure", "cheap", "flat", "flatelem":
			default:
				return nil, fmt.Errorf("law %s: unknown side condition %q", l.Name, w)
			}
		}
		out = append(out, &law{Law: l, lhs: lhs, rhs: rhs, head: c.Fn.Base})
	}
	return out, nil
}

// bindings of a match: pattern variables to expressions, binder names to
// the binders they matched.
type bindings struct {
	exprs   map[string]ir.Expr
	binders map[string]*ir.Var
}

// match matches pattern p against e.
func (b *bindings) match(p syntax.Expr, e ir.Expr) bool {
	switch p := p.(type) {
	case *syntax.Var:
		if v, ok := b.binders[p.Name]; ok {
			x, isVar := e.(*ir.Var)
			return isVar && x.Name == v.Name
		}
		if prev, ok := b.exprs[p.Name]; ok {
			return ir.Equal(prev, e)
		}
		b.exprs[p.Name] = e
		return true
	case *syntax.Lit:
		c, ok := e.(*ir.Const)
		if !ok {
			return false
		}
		switch p.Kind {
		case syntax.IntLit:
			v, ok := c.Val.(int64)
			return ok && v == p.Int
		case syntax.FloatLit:
			v, ok := c.Val.(float64)
			return ok && v == p.Float && math.Signbit(v) == math.Signbit(p.Float)
		case syntax.BoolLit:
			v, ok := c.Val.(bool)
			return ok && v == p.Bool
		case syntax.StringLit:
			v, ok := c.Val.(string)
			return ok && v == p.Text
		}
	case *syntax.Call:
		c, ok := e.(*ir.Call)
		if !ok || c.Prim == nil || c.Prim.Name != p.Fn.Base || len(c.Args) != len(p.Args) {
			return false
		}
		for i, a := range p.Args {
			if !b.match(a, c.Args[i]) {
				return false
			}
		}
		return true
	case *syntax.Lam:
		l, ok := e.(*ir.Lam)
		if !ok {
			return false
		}
		b.binders[p.Param.Name] = l.Param
		return b.match(p.Body, l.Body)
	case *syntax.Tuple:
		t, ok := e.(*ir.Tuple)
		if !ok || len(t.Elems) != len(p.Elems) {
			return false
		}
		for i, x := range p.Elems {
			if !b.match(x, t.Elems[i]) {
				return false
			}
		}
		return true
	}
	return false
}

// holds checks a law's side conditions.
func (b *bindings) holds(when []string, eff lower.Effects) bool {
	for _, w := range when {
		f := strings.Fields(w)
		switch f[0] {
		case "notfree":
			v, e := b.binders[f[1]], b.exprs[f[2]]
			if v == nil || e == nil || ir.Occurs(v.Name, e) {
				return false
			}
		case "float", "integer":
			want := map[string]types.Kind{"float": types.Float, "integer": types.Integer}[f[0]]
			e := b.exprs[f[1]]
			if e == nil || e.Type().Kind != want {
				return false
			}
		case "pure":
			e := b.exprs[f[1]]
			if e == nil || lower.HasEffect(e, eff) {
				return false
			}
		case "cheap":
			if !cheapMap(b.exprs[f[1]]) {
				return false
			}
		case "flat":
			e := b.exprs[f[1]]
			if e == nil || e.Type().Contains(types.Tensor) || !e.Type().IsPlain() {
				return false
			}
		case "flatelem":
			e := b.exprs[f[1]]
			if e == nil || e.Type().Kind != types.Tensor || e.Type().Elem.Contains(types.Tensor) || !e.Type().IsPlain() {
				return false
			}
		}
	}
	return true
}

// build instantiates a right-hand side at pos.
func (b *bindings) build(s syntax.Expr, pos ir.Pos, env map[string]*ir.Var) (ir.Expr, error) {
	switch s := s.(type) {
	case *syntax.Var:
		if v, ok := env[s.Name]; ok {
			return ir.Ref(pos, v), nil
		}
		if e, ok := b.exprs[s.Name]; ok {
			return ir.Copy(e, ir.Pos{}), nil
		}
		return nil, fmt.Errorf("unbound %s", s.Name)
	case *syntax.Lit:
		switch s.Kind {
		case syntax.IntLit:
			return ir.Int(pos, s.Int), nil
		case syntax.FloatLit:
			return ir.Float(pos, s.Float), nil
		case syntax.BoolLit:
			return ir.Bool(pos, s.Bool), nil
		}
		return &ir.Const{P: pos, T: types.StringType, Val: s.Text}, nil
	case *syntax.Call:
		if zf, ok := zeroForms[s.Fn.Base]; ok && len(s.Args) == 1 {
			x, err := b.build(s.Args[0], pos, env)
			if err != nil {
				return nil, err
			}
			t := x.Type()
			if zf == 1 {
				if t.Kind != types.Tensor {
					return nil, fmt.Errorf("%s of %s, not a tensor", s.Fn.Base, t)
				}
				t = t.Elem
			}
			z, ok := zeroConst(pos, t)
			if !ok {
				return nil, fmt.Errorf("no constant zero tangent of %s", t)
			}
			return z, nil
		}
		if side, ok := lmExampleForms[s.Fn.Base]; ok && len(s.Args) == 1 {
			m, err := b.build(s.Args[0], pos, env)
			if err != nil {
				return nil, err
			}
			x, ok := lmExample(m, side)
			if !ok {
				return nil, fmt.Errorf("no example of the %s of %s", s.Fn.Base, ir.FormatExpr(m))
			}
			return x, nil
		}
		args := make([]ir.Expr, len(s.Args))
		for i, a := range s.Args {
			x, err := b.build(a, pos, env)
			if err != nil {
				return nil, err
			}
			args[i] = x
		}
		return ir.TryPrim(pos, s.Fn.Base, args...)
	case *syntax.Tuple:
		elems := make([]ir.Expr, len(s.Elems))
		for i, a := range s.Elems {
			x, err := b.build(a, pos, env)
			if err != nil {
				return nil, err
			}
			elems[i] = x
		}
		return ir.MkTuple(pos, elems...), nil
	case *syntax.Let:
		bind := s.Binds[0]
		rhs, err := b.build(bind.Rhs, pos, env)
		if err != nil {
			return nil, err
		}
		v, ok := b.binders[bind.Vars[0].Name]
		if !ok {
			return nil, fmt.Errorf("the let of %s must rebind a binder of the pattern", bind.Vars[0].Name)
		}
		inner := extend(env, bind.Vars[0].Name, v)
		body, err := b.build(s.Body, pos, inner)
		if err != nil {
			return nil, err
		}
		return ir.MkLet(pos, v, rhs, body), nil
	case *syntax.Lam:
		v, ok := b.binders[s.Param.Name]
		if !ok {
			return nil, fmt.Errorf("the lambda of %s must rebind a binder of the pattern", s.Param.Name)
		}
		body, err := b.build(s.Body, pos, extend(env, s.Param.Name, v))
		if err != nil {
			return nil, err
		}
		return ir.MkLam(pos, v, body), nil
	}
	return nil, fmt.Errorf("unsupported form %s in a law", syntax.FormatExpr(s))
}

func extend(env map[string]*ir.Var, name string, v *ir.Var) map[string]*ir.Var {
	out := map[string]*ir.Var{name: v}
	for k, x := range env {
		if k != name {
			out[k] = x
		}
	}
	return out
}

// A rewriter applies laws and user rules to a fixpoint.
type rewriter struct {
	laws  map[string][]*law // by head
	rules []*ir.Rule
	eff   lower.Effects
	steps int
	limit int
	used  map[string]int // rewrites per law, for tests and -stats
}

func newRewriter(laws []*law, rules []*ir.Rule, eff lower.Effects, limit int) *rewriter {
	r := &rewriter{laws: map[string][]*law{}, rules: rules, eff: eff, limit: limit, used: map[string]int{}}
	for _, l := range laws {
		r.laws[l.head] = append(r.laws[l.head], l)
	}
	return r
}

// node rewrites one expression with the first law or rule that applies.
func (r *rewriter) node(e ir.Expr) ir.Expr {
	c, ok := e.(*ir.Call)
	if !ok {
		return e
	}
	if r.steps >= r.limit {
		return e
	}
	if c.Prim != nil {
		for _, l := range r.laws[c.Prim.Name] {
			b := &bindings{exprs: map[string]ir.Expr{}, binders: map[string]*ir.Var{}}
			if !b.match(l.lhs, e) || !b.holds(l.When, r.eff) {
				continue
			}
			out, err := b.build(l.rhs, e.Pos(), nil)
			if err != nil || !out.Type().Equal(e.Type()) {
				continue // the law does not fit the types here
			}
			r.steps++
			r.used[l.Name]++
			return out
		}
	}
	for _, u := range r.rules {
		if out := r.userRule(u, e); out != nil {
			r.steps++
			r.used["rule "+u.Name]++
			return out
		}
	}
	return e
}

// userRule applies a rule written in the program, or returns nil.
func (r *rewriter) userRule(u *ir.Rule, e ir.Expr) ir.Expr {
	params := map[string]*ir.Var{}
	for _, v := range u.Params {
		params[v.Name] = v
	}
	bound := map[string]ir.Expr{}
	var match func(p, e ir.Expr) bool
	match = func(p, e ir.Expr) bool {
		if v, ok := p.(*ir.Var); ok {
			if pv, isParam := params[v.Name]; isParam {
				if !pv.T.Equal(e.Type()) {
					return false
				}
				if prev, ok := bound[v.Name]; ok {
					return ir.Equal(prev, e)
				}
				bound[v.Name] = e
				return true
			}
		}
		switch p := p.(type) {
		case *ir.Call:
			c, ok := e.(*ir.Call)
			if !ok || c.Fn != p.Fn || c.Prim != p.Prim || len(c.Args) != len(p.Args) {
				return false
			}
			for i := range p.Args {
				if !match(p.Args[i], c.Args[i]) {
					return false
				}
			}
			return true
		case *ir.Tuple:
			t, ok := e.(*ir.Tuple)
			if !ok || len(t.Elems) != len(p.Elems) {
				return false
			}
			for i := range p.Elems {
				if !match(p.Elems[i], t.Elems[i]) {
					return false
				}
			}
			return true
		case *ir.Get:
			g, ok := e.(*ir.Get)
			return ok && g.I == p.I && g.N == p.N && match(p.X, g.X)
		}
		return ir.Equal(p, e)
	}
	if !match(u.Lhs, e) {
		return nil
	}
	return ir.Subst(ir.Copy(u.Rhs, e.Pos()), bound)
}

// lmExampleForms are the forms of a law's right-hand side that stand for
// an example value of a linear map's source (side 0) or target (side 1).
var lmExampleForms = map[string]int{"$lmSource": 0, "$lmTarget": 1}

// lmExample returns an example value of the source (side 0) or the target
// (side 1) of the linear map m, read off its structure, if one is there
// and is cheap to copy (an atom, or a tuple of them: a zero tangent takes
// its shape from it, so it must have the sizes of the real values).
func lmExample(m ir.Expr, side int) (ir.Expr, bool) {
	other := 1 - side
	var x ir.Expr
	switch m := m.(type) {
	case *ir.Call:
		if m.Prim == nil {
			// A call of [D f] x: the map from the tangents of x.
			if side == 0 && len(m.Args) == 1 {
				x = m.Args[0]
			}
			break
		}
		a := m.Args
		switch m.Prim.Name {
		case "lmZero":
			x = a[side]
		case "lmOne", "lmScale":
			x = a[0]
		case "lmCompose":
			return lmExample(a[1-side], side)
		case "lmAdd":
			if x, ok := lmExample(a[0], side); ok {
				return x, true
			}
			return lmExample(a[1], side)
		case "lmTranspose":
			return lmExample(a[0], other)
		case "lmVCat", "lmHCat":
			if m.Prim.Name == "lmVCat" && side == 0 || m.Prim.Name == "lmHCat" && side == 1 {
				for _, l := range a {
					if x, ok := lmExample(l, side); ok {
						return x, true
					}
				}
				return nil, false
			}
			elems := make([]ir.Expr, len(a))
			for i, l := range a {
				e, ok := lmExample(l, side)
				if !ok {
					return nil, false
				}
				elems[i] = e
			}
			return ir.MkTuple(m.P, elems...), true
		case "lmIndex", "lmSum", "lmRow":
			if side == 0 {
				x = a[len(a)-1]
			}
		case "lmCol":
			if side == 1 {
				x = a[0]
			}
		case "lmScatter":
			if side == 0 {
				x = a[2]
			}
		}
	}
	if x == nil || !exampleAtom(x) {
		return nil, false
	}
	return ir.Copy(x, ir.Pos{}), true
}

// exampleAtom reports whether copying e costs nothing: a variable, a
// constant, or a tuple of them.
func exampleAtom(e ir.Expr) bool {
	switch e := e.(type) {
	case *ir.Var, *ir.Const:
		return true
	case *ir.Tuple:
		for _, x := range e.Elems {
			if !exampleAtom(x) {
				return false
			}
		}
		return true
	}
	return false
}

// cheapMap reports whether m is a linear map whose copies cost nothing to
// apply beside the original: a zero, an identity, or a scaling by an atom.
func cheapMap(m ir.Expr) bool {
	c, ok := m.(*ir.Call)
	if !ok || c.Prim == nil {
		return false
	}
	switch c.Prim.Name {
	case "lmZero", "lmOne":
		return true
	case "lmScale":
		return exampleAtom(c.Args[1])
	}
	return false
}

// zeroForms are the forms of a law's right-hand side that stand for the
// zero tangent of a value's type (0) or of a tensor's elements (1).
var zeroForms = map[string]int{"$zeroOf": 0, "$zeroOfElem": 1}

// zeroConst returns the zero tangent of t as a constant expression, if t
// holds no tensor (whose zero needs sizes).
func zeroConst(pos ir.Pos, t *types.Type) (ir.Expr, bool) {
	switch t.Kind {
	case types.Float:
		return ir.Float(pos, 0), true
	case types.Integer, types.Bool, types.String:
		return ir.MkTuple(pos), true
	case types.Tuple:
		elems := make([]ir.Expr, len(t.Elems))
		for i, e := range t.Elems {
			z, ok := zeroConst(pos, e)
			if !ok {
				return nil, false
			}
			elems[i] = z
		}
		return ir.MkTuple(pos, elems...), true
	}
	return nil, false
}
