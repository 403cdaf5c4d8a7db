package ir

import (
	"errors"
	"fmt"
	"math"

	ksrt "github.com/ksc-lang/ksc/runtime/go"
	"github.com/ksc-lang/ksc/types"
)

// A Prim is one row of the primitive table: a built-in function of the
// language (section 6) or of the prelude (section 7). A name may have
// several rows, one per overload.
//
// Every stage reads its facts about a primitive from here: the type
// checker its typing rule, the backends its spelling, and (later) the
// differentiation passes its derivative rules.
type Prim struct {
	Name string
	Doc  string

	// Arity is the number of argument parts (-1: any number). A call's
	// argument is split into parts: a single argument of a tuple type is
	// its fields when Arity > 1 or variadic, itself when Arity is 1.
	Arity int

	// Sig is the fixed signature of a monomorphic primitive, or nil.
	Sig *Sig
	// Check is the typing rule of a polymorphic primitive: it returns the
	// result type for the argument parts, or an error message.
	Check func(parts []*types.Type) (*types.Type, string)

	// C and Go spell a monomorphic scalar primitive in each backend as a
	// template: $0, $1, ... are the argument parts (already evaluated),
	// $ctx the runtime context and $pos the source position as a string
	// literal. An empty spelling means the backend generates the code
	// itself, by type (polymorphic primitives, loops, printing, and
	// prelude functions defined in ks).
	C, Go string

	// Pure says the primitive has no effect and cannot fail at run time,
	// so a backend may compute it inside an expression.
	Pure bool

	// Eval computes a scalar primitive on its argument parts (int64,
	// float64 and bool values), as the Go backend's spelling does (the
	// same runtime functions): the CL evaluator runs it, and the
	// optimiser folds calls of constants with it where Exact. An error is
	// the primitive's runtime error (integer division by zero).
	Eval func(x []any) (any, error)
	// Identity says the primitive's value is its argument: a hint to the
	// compiler ($inline, $copydown, $hoist), which the backends and the
	// evaluators compile or evaluate as the argument itself.
	Identity bool

	// Exact says IEEE arithmetic defines the result exactly, so it has the
	// same bits in every backend and the optimiser may compute it at
	// compile time (not exp, log and friends, whose last bit depends on
	// the library).
	Exact bool

	// Def is the ks definition of a prelude function over vectors; the
	// type checker compiles it and the lowering pass inlines it at each call.
	Def string
	// Fail is the runtime error of the asserts in Def ("size mismatch").
	Fail string

	// Lams lists the argument parts that are lambdas.
	Lams []int

	// D is the derivative rule: for each argument part, the linear map
	// from that part's tangent to the result's tangent, as a ks expression
	// over the argument parts x0, x1, ... and the result r. "" means the
	// result does not depend on that part differentiably (an index, a
	// count, a Bool). It feeds the Jacobian transform, and through it
	// forward and reverse mode. Primitives that take lambdas are
	// differentiated by rules of their own in package derive.
	D []string

	// LM marks the linear-map operations (lmprim.go): they exist between
	// differentiation and optimisation and must not reach a backend.
	LM bool
	// InPlace marks the accumulation primitives of derived code, which
	// update their first argument in place: that argument must not be used
	// again.
	InPlace bool
}

// A Sig is a fixed signature: argument parts and result.
type Sig struct {
	Args   []*types.Type
	Result *types.Type
}

// ArgType returns the argument type of the signature.
func (s *Sig) ArgType() *types.Type {
	if len(s.Args) == 1 {
		return s.Args[0]
	}
	return types.TupleOf(s.Args...)
}

// String returns the ks spelling of the overload, e.g. [add (Tuple Float Float)].
func (p *Prim) String() string {
	if p.Sig != nil {
		return "[" + p.Name + " " + p.Sig.ArgType().String() + "]"
	}
	return p.Name
}

// Parts splits a call's argument into the parts a primitive of the given
// arity receives.
func Parts(arity int, arg *types.Type) []*types.Type {
	if arity == 1 {
		return []*types.Type{arg}
	}
	if arg.Kind == types.Tuple {
		return arg.Elems
	}
	return []*types.Type{arg}
}

// TypeOf type-checks a call of p with the given argument type.
func (p *Prim) TypeOf(arg *types.Type) (*types.Type, string) {
	if p.Sig != nil {
		if !arg.Equal(p.Sig.ArgType()) {
			return nil, fmt.Sprintf("%s takes %s, not %s", p.Name, p.Sig.ArgType(), arg)
		}
		return p.Sig.Result, ""
	}
	parts := Parts(p.Arity, arg)
	if p.Arity >= 0 && len(parts) != p.Arity {
		return nil, fmt.Sprintf("%s takes %d arguments, got %d", p.Name, p.Arity, len(parts))
	}
	return p.Check(parts)
}

var (
	tI  = types.IntegerType
	tF  = types.FloatType
	tB  = types.BoolType
	tVF = types.VecOf(types.FloatType)
	tMF = types.TensorOf(2, types.FloatType)
)

func sig(result *types.Type, args ...*types.Type) *Sig { return &Sig{Args: args, Result: result} }

// The shapes of Prim.Eval.
func f1(f func(float64) float64) func([]any) (any, error) {
	return func(x []any) (any, error) { return f(x[0].(float64)), nil }
}

func ff(f func(a, b float64) float64) func([]any) (any, error) {
	return func(x []any) (any, error) { return f(x[0].(float64), x[1].(float64)), nil }
}

func ii(f func(a, b int64) int64) func([]any) (any, error) {
	return func(x []any) (any, error) { return f(x[0].(int64), x[1].(int64)), nil }
}

func cmp[T int64 | float64](f func(a, b T) bool) func([]any) (any, error) {
	return func(x []any) (any, error) { return f(x[0].(T), x[1].(T)), nil }
}

// idiv is Integer division (ksrt.Quo).
func idiv(x []any) (any, error) {
	q, ok := ksrt.Quo(x[0].(int64), x[1].(int64))
	if !ok {
		return nil, errors.New(ksrt.DivByZero)
	}
	return q, nil
}

// evalCheckIndex is $checkIndex: i, or the error of an index out of range.
func evalCheckIndex(x []any) (any, error) {
	i, n := x[0].(int64), x[1].(int64)
	if uint64(i) >= uint64(n) {
		return nil, fmt.Errorf("index %d out of range for size %d", i, n)
	}
	return i, nil
}

// table is the primitive table. It is read-only after initialisation.
var table = append(append(append(baseTable, lmTable...), bogTable...), jacTable...)

var baseTable = []*Prim{
	// Arithmetic (prelude). Integer arithmetic wraps around; integer
	// division truncates and fails on division by zero.
	{Name: "add", Sig: sig(tF, tF, tF), Eval: ff(func(a, b float64) float64 { return a + b }), Exact: true, D: []string{"(lmOne x0)", "(lmOne x1)"}, C: "($0 + $1)", Go: "($0 + $1)", Pure: true},
	{Name: "add", Sig: sig(tI, tI, tI), Eval: ii(func(a, b int64) int64 { return a + b }), Exact: true, C: "ks_iadd($0, $1)", Go: "($0 + $1)", Pure: true},
	{Name: "sub", Sig: sig(tF, tF, tF), Eval: ff(func(a, b float64) float64 { return a - b }), Exact: true, D: []string{"(lmOne x0)", "(lmScale x1 -1.0)"}, C: "($0 - $1)", Go: "($0 - $1)", Pure: true},
	{Name: "sub", Sig: sig(tI, tI, tI), Eval: ii(func(a, b int64) int64 { return a - b }), Exact: true, C: "ks_isub($0, $1)", Go: "($0 - $1)", Pure: true},
	{Name: "mul", Sig: sig(tF, tF, tF), Eval: ff(func(a, b float64) float64 { return a * b }), Exact: true, D: []string{"(lmScale x0 x1)", "(lmScale x1 x0)"}, C: "($0 * $1)", Go: "float64($0 * $1)", Pure: true},
	{Name: "mul", Sig: sig(tI, tI, tI), Eval: ii(func(a, b int64) int64 { return a * b }), Exact: true, C: "ks_imul($0, $1)", Go: "($0 * $1)", Pure: true},
	{Name: "div", Sig: sig(tF, tF, tF), Eval: ff(func(a, b float64) float64 { return a / b }), Exact: true, D: []string{"(lmScale x0 (div 1.0 x1))", "(lmScale x1 (neg (div r x1)))"}, C: "($0 / $1)", Go: "($0 / $1)", Pure: true},
	{Name: "div", Sig: sig(tI, tI, tI), Eval: idiv, Exact: true, C: "ks_idiv($ctx, $pos, $0, $1)", Go: "IDiv($pos, $0, $1)"},
	{Name: "$checkIndex", Sig: sig(tI, tI, tI), Eval: evalCheckIndex, C: "ks_checked_index($ctx, $pos, $0, $1)", Go: "CheckedIndex($pos, $0, $1)",
		Doc: "($checkIndex i n): i, failing as an index out of range does unless 0 <= i < n (optimise's gather, where an element is computed as it is read)"},
	{Name: "neg", Sig: sig(tF, tF), Eval: f1(func(a float64) float64 { return -a }), Exact: true, D: []string{"(lmScale x0 -1.0)"}, C: "(-$0)", Go: "(-$0)", Pure: true},
	{Name: "neg", Sig: sig(tI, tI), Eval: func(x []any) (any, error) { return -x[0].(int64), nil }, Exact: true, C: "ks_ineg($0)", Go: "(-$0)", Pure: true},
	{Name: "mul", Sig: sig(tF, tF, tI), Eval: func(x []any) (any, error) { return x[0].(float64) * float64(x[1].(int64)), nil }, Exact: true, D: []string{"(lmScale x0 (to_float x1))", ""}, C: "($0 * (double)$1)", Go: "float64($0 * float64($1))", Pure: true,
		Doc: "Float times Integer"},

	// Comparisons (prelude).
	{Name: "gt", Sig: sig(tB, tF, tF), Eval: cmp(func(a, b float64) bool { return a > b }), Exact: true, C: "($0 > $1)", Go: "($0 > $1)", Pure: true},
	{Name: "gt", Sig: sig(tB, tI, tI), Eval: cmp(func(a, b int64) bool { return a > b }), Exact: true, C: "($0 > $1)", Go: "($0 > $1)", Pure: true},
	{Name: "lt", Sig: sig(tB, tF, tF), Eval: cmp(func(a, b float64) bool { return a < b }), Exact: true, C: "($0 < $1)", Go: "($0 < $1)", Pure: true},
	{Name: "lt", Sig: sig(tB, tI, tI), Eval: cmp(func(a, b int64) bool { return a < b }), Exact: true, C: "($0 < $1)", Go: "($0 < $1)", Pure: true},
	{Name: "gte", Sig: sig(tB, tF, tF), Eval: cmp(func(a, b float64) bool { return a >= b }), Exact: true, C: "($0 >= $1)", Go: "($0 >= $1)", Pure: true},
	{Name: "gte", Sig: sig(tB, tI, tI), Eval: cmp(func(a, b int64) bool { return a >= b }), Exact: true, C: "($0 >= $1)", Go: "($0 >= $1)", Pure: true},
	{Name: "lte", Sig: sig(tB, tF, tF), Eval: cmp(func(a, b float64) bool { return a <= b }), Exact: true, C: "($0 <= $1)", Go: "($0 <= $1)", Pure: true},
	{Name: "lte", Sig: sig(tB, tI, tI), Eval: cmp(func(a, b int64) bool { return a <= b }), Exact: true, C: "($0 <= $1)", Go: "($0 <= $1)", Pure: true},

	// Logic (prelude); both arguments are evaluated.
	{Name: "and", Sig: sig(tB, tB, tB), Eval: func(x []any) (any, error) { return ksrt.And(x[0].(bool), x[1].(bool)), nil }, Exact: true, C: "($0 & $1)", Go: "And($0, $1)", Pure: true},
	{Name: "or", Sig: sig(tB, tB, tB), Eval: func(x []any) (any, error) { return ksrt.Or(x[0].(bool), x[1].(bool)), nil }, Exact: true, C: "($0 | $1)", Go: "Or($0, $1)", Pure: true},
	{Name: "not", Sig: sig(tB, tB), Eval: func(x []any) (any, error) { return !x[0].(bool), nil }, Exact: true, C: "(!$0)", Go: "(!$0)", Pure: true},

	// Conversions (prelude).
	{Name: "to_float", Sig: sig(tF, tI), Eval: func(x []any) (any, error) { return float64(x[0].(int64)), nil }, Exact: true, D: []string{""}, C: "((double)$0)", Go: "float64($0)", Pure: true},
	{Name: "bool_to_float", Sig: sig(tF, tB), Eval: func(x []any) (any, error) { return ksrt.BoolToFloat(x[0].(bool)), nil }, Exact: true, D: []string{""}, C: "($0 ? 1.0 : 0.0)", Go: "BoolToFloat($0)", Pure: true},

	// Elementary functions (prelude).
	{Name: "exp", Sig: sig(tF, tF), Eval: f1(ksrt.Exp), D: []string{"(lmScale x0 r)"}, C: "exp($0)", Go: "Exp($0)", Pure: true},
	{Name: "log", Sig: sig(tF, tF), Eval: f1(ksrt.Log), D: []string{"(lmScale x0 (div 1.0 x0))"}, C: "log($0)", Go: "Log($0)", Pure: true},
	{Name: "sin", Sig: sig(tF, tF), Eval: f1(ksrt.Sin), D: []string{"(lmScale x0 (cos x0))"}, C: "sin($0)", Go: "Sin($0)", Pure: true},
	{Name: "cos", Sig: sig(tF, tF), Eval: f1(ksrt.Cos), D: []string{"(lmScale x0 (neg (sin x0)))"}, C: "cos($0)", Go: "Cos($0)", Pure: true},
	{Name: "tanh", Sig: sig(tF, tF), Eval: f1(ksrt.Tanh), D: []string{"(lmScale x0 (sub 1.0 (mul r r)))"}, C: "tanh($0)", Go: "Tanh($0)", Pure: true},
	{Name: "sqrt", Sig: sig(tF, tF), Eval: f1(math.Sqrt), D: []string{"(lmScale x0 (div 0.5 r))"}, C: "sqrt($0)", Go: "math.Sqrt($0)", Pure: true},
	{Name: "erf", Sig: sig(tF, tF), Eval: f1(ksrt.Erf), D: []string{"(lmScale x0 (mul 1.1283791670955126 (exp (neg (mul x0 x0)))))"}, C: "erf($0)", Go: "Erf($0)", Pure: true},
	{Name: "lgamma", Sig: sig(tF, tF), Eval: f1(ksrt.Lgamma), D: []string{"(lmScale x0 (digamma x0))"}, C: "ks_lgamma($0)", Go: "Lgamma($0)", Pure: true},
	{Name: "digamma", Sig: sig(tF, tF), Eval: f1(ksrt.Digamma), C: "ks_digamma($0)", Go: "Digamma($0)", Pure: true,
		Doc: "the derivative of lgamma (not in Knossos' prelude, where programs edef it)"},
	{Name: "cosh", Sig: sig(tF, tF), Eval: f1(ksrt.Cosh), D: []string{"(lmScale x0 (mul 0.5 (sub (exp x0) (exp (neg x0)))))"}, C: "cosh($0)", Go: "Cosh($0)", Pure: true},
	{Name: "abs", Sig: sig(tF, tF), Eval: f1(math.Abs), D: []string{"(lmScale x0 (if (lt x0 0.0) -1.0 1.0))"}, C: "fabs($0)", Go: "math.Abs($0)", Pure: true},
	{Name: "pow", Sig: sig(tF, tF, tI), Eval: func(x []any) (any, error) { return ksrt.PowI(x[0].(float64), x[1].(int64)), nil }, D: []string{"(lmScale x0 (mul (to_float x1) (pow x0 (sub x1 1))))", ""}, C: "pow($0, (double)$1)", Go: "PowI($0, $1)", Pure: true},
	{Name: "max", Sig: sig(tF, tF, tF), Eval: ff(ksrt.Max), D: []string{"(lmScale x0 (if (lt x0 x1) 0.0 1.0))", "(lmScale x1 (if (lt x0 x1) 1.0 0.0))"}, C: "($0 < $1 ? $1 : $0)", Go: "Max($0, $1)", Pure: true,
		Doc: "the first argument unless the second is greater"},
	{Name: "pi", Sig: sig(tF), Eval: func([]any) (any, error) { return math.Pi, nil }, D: []string{}, C: "KS_PI", Go: "math.Pi", Pure: true},
	{Name: "$ranhashdoub", Sig: sig(tF, tI), Eval: func(x []any) (any, error) { return ksrt.Ranhashdoub(x[0].(int64)), nil }, C: "ks_ranhashdoub($0)", Go: "Ranhashdoub($0)", Pure: true},

	// Prelude functions over vectors, defined in ks. Size mismatches and
	// empty vectors are runtime errors at the call.
	{Name: "max", Sig: sig(tF, tVF), Fail: "max of an empty vector", Doc: "the first maximum of a non-empty vector", Def: `
(def max Float (v : Vec Float)
  (assert (gt (size v) 0)
    (index (imax v) v)))`},
	{Name: "imax", Sig: sig(tI, tVF), Fail: "imax of an empty vector", Doc: "the index of the first maximum of a non-empty vector", Def: `
(def imax Integer (v : Vec Float)
  (assert (gt (size v) 0)
    (get$1$3 (fold (lam (acc_x : Tuple (Tuple Integer Float Integer) Float)
                     (let ((acc x) acc_x)
                       (let ((best m k) acc)
                         (if (gt x m) (tuple k x (add k 1)) (tuple best m (add k 1))))))
                   (tuple 0 (index 0 v) 0) v))))`},
	{Name: "exp", Sig: sig(tVF, tVF), Doc: "element-wise exponential", Def: `
(def exp (Vec Float) (v : Vec Float)
  (build (size v) (lam (i : Integer) (exp (index i v)))))`},
	{Name: "sub", Sig: sig(tVF, tVF, tVF), Fail: "size mismatch", Doc: "element-wise difference of vectors of equal size", Def: `
(def sub (Vec Float) ((a : Vec Float) (b : Vec Float))
  (assert (eq (size a) (size b))
    (build (size a) (lam (i : Integer) (sub (index i a) (index i b))))))`},
	{Name: "sub", Sig: sig(tVF, tVF, tF), Doc: "a vector minus a scalar", Def: `
(def sub (Vec Float) ((a : Vec Float) (b : Float))
  (build (size a) (lam (i : Integer) (sub (index i a) b))))`},
	{Name: "mul", Sig: sig(tVF, tF, tVF), Doc: "a scalar times a vector", Def: `
(def mul (Vec Float) ((k : Float) (v : Vec Float))
  (build (size v) (lam (i : Integer) (mul k (index i v)))))`},
	{Name: "mul", Sig: sig(tVF, tMF, tVF), Fail: "size mismatch", Doc: "matrix times vector", Def: `
(def mul (Vec Float) ((m : Tensor 2 Float) (v : Vec Float))
  (let ((rows cols) (size m))
    (assert (eq cols (size v))
      (build rows (lam (i : Integer)
        (if (eq cols 0) 0.0
          (sumbuild cols (lam (j : Integer) (mul (index (tuple i j) m) (index j v))))))))))`},
	{Name: "dot", Sig: sig(tF, tVF, tVF), Fail: "size mismatch", Doc: "inner product of vectors of equal size", Def: `
(def dot Float ((a : Vec Float) (b : Vec Float))
  (assert (eq (size a) (size b))
    (if (eq (size a) 0) 0.0
      (sumbuild (size a) (lam (i : Integer) (mul (index i a) (index i b)))))))`},

	// Tensors (section 6).
	{Name: "build", Arity: 2, Check: checkBuild, Lams: []int{1},
		Doc: "tensor of the given size whose element i is f(i)"},
	{Name: "sumbuild", Arity: 2, Check: checkSumbuild, Lams: []int{1},
		Doc: "sum of f(i) over the index range; empty range: error"},
	{Name: "sum", D: []string{"(lmSum x0)"}, Arity: 1, Check: checkSum, Doc: "sum of the elements; empty: error"},
	{Name: "index", D: []string{"", "(lmIndex x0 x1)"}, Arity: 2, Check: checkIndex, Doc: "element at an index; out of range: error"},
	{Name: "size", Arity: 1, Check: checkSize, Pure: true, Doc: "size of a tensor"},
	{Name: "shape", Arity: 1, Check: checkShape, Doc: "the shape of a value (section 5): its sizes, and its elements' shapes where they differ"},
	{Name: "fold", Arity: 3, Check: checkFold, Lams: []int{0}, Doc: "left fold over a vector"},
	{Name: "map", Arity: 2, Check: checkMap, Lams: []int{0}, Doc: "element-wise function"},
	{Name: "map2", Arity: 3, Check: checkMap2, Lams: []int{0}, Doc: "element-wise function of two tensors of equal size"},
	{Name: "constVec", Arity: 2, Check: checkConstVec, Doc: "tensor filled with one value"},
	{Name: "deltaVec", Arity: 3, Check: checkDeltaVec, Doc: "zeros except the value at the index"},
	{Name: "delta", D: []string{"", "", "(lmScale x2 (bool_to_float (eq x0 x1)))"}, Arity: 3, Check: checkDelta, Doc: "the value if the indices are equal, else its zero"},
	{Name: "Vec_init", Arity: -1, Check: checkVecInit, Doc: "literal vector"},
	{Name: "unzip", Arity: 1, Check: checkUnzip, Doc: "tensor of tuples to tuple of tensors"},
	{Name: "buildFromSparse", Arity: 3, Check: checkBuildFromSparse, Lams: []int{2},
		Doc: "zeros of the given shape, then result[idx] += value for each (idx, value) = f(i), i over the count's index range"},

	// Tangent-space operations (section 6).
	{Name: "ts_add", D: []string{"(lmOne x0)", "(lmOne x1)"}, Arity: 2, Check: checkTsAdd, Doc: "add a tangent to a value"},
	{Name: "ts_scale", D: []string{"(lmCol x1)", "(lmScale x1 x0)"}, Arity: 2, Check: checkTsScale, Doc: "scale every Float"},
	{Name: "ts_dot", D: []string{"(lmRow x1)", "(lmRow x0)"}, Arity: 2, Check: checkTsDot, Doc: "inner product over all Floats"},
	{Name: "ts_neg", D: []string{"(lmScale x0 -1.0)"}, Arity: 1, Check: checkTsNeg, Doc: "negate every Float"},

	// Equality, printing and checks (section 6).
	{Name: "eq", Arity: 2, Check: checkEq, Doc: "structural equality"},
	{Name: "ne", Arity: 2, Check: checkEq, Doc: "structural inequality"},
	{Name: "print", Arity: -1, Check: checkPrint, Doc: "print each argument; returns the number of arguments - 1"},
	{Name: "$trace", D: []string{"(lmOne x0)"}, Arity: 1, Check: checkTrace, Doc: "print Trace[value] and return the value"},
	{Name: "$check", Arity: 5, Check: checkCheck, Lams: []int{0, 1}, Doc: "derivative check"},
	{Name: "$inline", D: []string{"(lmOne x0)"}, Arity: 1, Check: checkIdentity, Identity: true, Doc: "request to inline the call"},
	{Name: "$copydown", D: []string{"(lmOne x0)"}, Arity: 1, Check: checkIdentity, Identity: true, Doc: "memory-compaction hint; the identity"},
	{Name: "$hoist", D: []string{"(lmOne x0)"}, Arity: 1, Check: checkIdentity, Identity: true, Doc: "request to move what a loop's iterations compute alike out of it (optimise.hoistLoops); the identity"},
}

// byName indexes the table.
var byName = func() map[string][]*Prim {
	m := map[string][]*Prim{}
	for _, p := range table {
		if p.Sig != nil {
			p.Arity = len(p.Sig.Args)
		}
		m[p.Name] = append(m[p.Name], p)
	}
	return m
}()

// Prims returns every row of the primitive table.
func Prims() []*Prim { return table }

// LookupPrim returns the rows named name.
func LookupPrim(name string) []*Prim { return byName[name] }

// IsPrim reports whether name is a primitive.
func IsPrim(name string) bool { return len(byName[name]) > 0 }

func describeParts(parts []*types.Type) string {
	s := ""
	for i, p := range parts {
		if i > 0 {
			s += ", "
		}
		s += p.String()
	}
	return s
}

func lamParts(t *types.Type) (from, to *types.Type, ok bool) {
	if t.Kind != types.Lam {
		return nil, nil, false
	}
	return t.From, t.To, true
}

func checkBuild(p []*types.Type) (*types.Type, string) {
	rank := types.IndexRank(p[0])
	if rank == 0 {
		return nil, "build: the size must be an Integer or a tuple of Integers, not " + p[0].String()
	}
	from, to, ok := lamParts(p[1])
	if !ok || !from.Equal(p[0]) {
		return nil, fmt.Sprintf("build: the second argument must be a lambda taking %s", p[0])
	}
	return types.TensorOf(rank, to), ""
}

func checkSumbuild(p []*types.Type) (*types.Type, string) {
	if types.IndexRank(p[0]) == 0 {
		return nil, "sumbuild: the size must be an Integer or a tuple of Integers, not " + p[0].String()
	}
	from, to, ok := lamParts(p[1])
	if !ok || !from.Equal(p[0]) {
		return nil, fmt.Sprintf("sumbuild: the second argument must be a lambda taking %s", p[0])
	}
	if !Summable(to) {
		return nil, "sumbuild: cannot add values of type " + to.String()
	}
	return to, ""
}

// Summable reports whether values of t can be added: Integers, Floats, and
// tensors and tuples of summable types.
func Summable(t *types.Type) bool {
	switch t.Kind {
	case types.Integer, types.Float:
		return true
	case types.Tuple:
		for _, e := range t.Elems {
			if !Summable(e) {
				return false
			}
		}
		return true
	case types.Tensor:
		return Summable(t.Elem)
	}
	return false
}

func checkSum(p []*types.Type) (*types.Type, string) {
	if p[0].Kind != types.Tensor {
		return nil, "sum: expected a tensor, not " + p[0].String()
	}
	if !Summable(p[0].Elem) {
		return nil, "sum: cannot add values of type " + p[0].Elem.String()
	}
	return p[0].Elem, ""
}

func checkIndex(p []*types.Type) (*types.Type, string) {
	if p[1].Kind != types.Tensor {
		return nil, "index: the second argument must be a tensor, not " + p[1].String() + " (the index comes first)"
	}
	if !p[0].Equal(types.IndexType(p[1].Rank)) {
		return nil, fmt.Sprintf("index: a %s needs an index of type %s, not %s", p[1], types.IndexType(p[1].Rank), p[0])
	}
	return p[1].Elem, ""
}

func checkSize(p []*types.Type) (*types.Type, string) {
	if p[0].Kind != types.Tensor {
		return nil, "size: expected a tensor, not " + p[0].String()
	}
	return types.IndexType(p[0].Rank), ""
}

func checkFold(p []*types.Type) (*types.Type, string) {
	from, to, ok := lamParts(p[0])
	if !ok {
		return nil, "fold: the first argument must be a lambda"
	}
	acc, v := p[1], p[2]
	if v.Kind != types.Tensor || v.Rank != 1 {
		return nil, "fold: the third argument must be a vector, not " + v.String()
	}
	want := types.TupleOf(acc, v.Elem)
	if !from.Equal(want) || !to.Equal(acc) {
		return nil, fmt.Sprintf("fold: the lambda must have type (Lam %s %s), not %s", want, acc, p[0])
	}
	return acc, ""
}

func checkMap(p []*types.Type) (*types.Type, string) {
	from, to, ok := lamParts(p[0])
	if !ok || p[1].Kind != types.Tensor || !from.Equal(p[1].Elem) {
		return nil, "map: expected a lambda and a tensor of its argument type, got " + describeParts(p)
	}
	return types.TensorOf(p[1].Rank, to), ""
}

func checkMap2(p []*types.Type) (*types.Type, string) {
	from, to, ok := lamParts(p[0])
	if !ok || p[1].Kind != types.Tensor || p[2].Kind != types.Tensor || p[1].Rank != p[2].Rank ||
		!from.Equal(types.TupleOf(p[1].Elem, p[2].Elem)) {
		return nil, "map2: expected a lambda taking pairs and two tensors of the same rank, got " + describeParts(p)
	}
	return types.TensorOf(p[1].Rank, to), ""
}

func checkConstVec(p []*types.Type) (*types.Type, string) {
	rank := types.IndexRank(p[0])
	if rank == 0 {
		return nil, "constVec: the size must be an Integer or a tuple of Integers, not " + p[0].String()
	}
	if !p[1].IsValue() {
		return nil, "constVec: cannot store " + p[1].String()
	}
	return types.TensorOf(rank, p[1]), ""
}

func checkDeltaVec(p []*types.Type) (*types.Type, string) {
	rank := types.IndexRank(p[0])
	if rank == 0 || !p[1].Equal(p[0]) {
		return nil, "deltaVec: expected a size, an index of the same type and a value, got " + describeParts(p)
	}
	if !Summable(p[2]) {
		return nil, "deltaVec: the value must be of a type with a zero, not " + p[2].String()
	}
	return types.TensorOf(rank, p[2]), ""
}

func checkDelta(p []*types.Type) (*types.Type, string) {
	if types.IndexRank(p[0]) == 0 || !p[1].Equal(p[0]) {
		return nil, "delta: expected two indices of the same type and a value, got " + describeParts(p)
	}
	if !Summable(p[2]) {
		return nil, "delta: the value must be of a type with a zero, not " + p[2].String()
	}
	return p[2], ""
}

func checkVecInit(p []*types.Type) (*types.Type, string) {
	if len(p) == 0 {
		return nil, "Vec_init: needs at least one element"
	}
	for _, t := range p[1:] {
		if !t.Equal(p[0]) {
			return nil, "Vec_init: elements must have the same type, got " + describeParts(p)
		}
	}
	if !p[0].IsValue() {
		return nil, "Vec_init: cannot store " + p[0].String()
	}
	return types.VecOf(p[0]), ""
}

func checkUnzip(p []*types.Type) (*types.Type, string) {
	t := p[0]
	if t.Kind != types.Tensor || t.Elem.Kind != types.Tuple {
		return nil, "unzip: expected a tensor of tuples, not " + t.String()
	}
	elems := make([]*types.Type, len(t.Elem.Elems))
	for i, e := range t.Elem.Elems {
		elems[i] = types.TensorOf(t.Rank, e)
	}
	return types.TupleOf(elems...), ""
}

// checkBuildFromSparse checks (buildFromSparse sh n f): n is a loop count
// of any index type, as build's size, and f takes an index of that type
// to (Tuple index value), the index one of the result.
func checkBuildFromSparse(p []*types.Type) (*types.Type, string) {
	if types.IndexRank(p[1]) == 0 {
		return nil, "buildFromSparse: the count must be an Integer or a tuple of Integers, not " + p[1].String()
	}
	from, to, ok := lamParts(p[2])
	if !ok || !from.Equal(p[1]) || to.Kind != types.Tuple || len(to.Elems) != 2 {
		return nil, fmt.Sprintf("buildFromSparse: expected a shape, a count and a lambda from %s (the count's type) to (Tuple index value), got %s", p[1], describeParts(p))
	}
	idx, val := to.Elems[0], to.Elems[1]
	rank := types.IndexRank(idx)
	if rank == 0 || !Summable(val) {
		return nil, "buildFromSparse: the lambda must return (Tuple index value) with a summable value, not " + to.String()
	}
	res := types.TensorOf(rank, val)
	sh, _ := types.Shape(res)
	if !p[0].Equal(sh) {
		return nil, fmt.Sprintf("buildFromSparse: the shape of a %s has type %s, not %s", res, sh, p[0])
	}
	return res, ""
}

func checkTsAdd(p []*types.Type) (*types.Type, string) {
	dt, ok := types.Tangent(p[0])
	if !ok || !dt.Equal(p[1]) {
		return nil, "ts_add: expected a value and a tangent of its type, got " + describeParts(p)
	}
	return p[0], ""
}

func checkTsScale(p []*types.Type) (*types.Type, string) {
	if !p[0].Equal(tF) || !p[1].IsPlain() {
		return nil, "ts_scale: expected a Float and a value, got " + describeParts(p)
	}
	return p[1], ""
}

func checkTsDot(p []*types.Type) (*types.Type, string) {
	if !p[0].Equal(p[1]) || !p[0].IsPlain() {
		return nil, "ts_dot: expected two values of the same type, got " + describeParts(p)
	}
	return tF, ""
}

func checkTsNeg(p []*types.Type) (*types.Type, string) {
	if !p[0].IsPlain() {
		return nil, "ts_neg: cannot negate " + p[0].String()
	}
	return p[0], ""
}

func checkEq(p []*types.Type) (*types.Type, string) {
	if !p[0].Equal(p[1]) || !p[0].IsPlain() {
		return nil, "eq/ne: expected two values of the same type, got " + describeParts(p)
	}
	return tB, ""
}

func checkPrint(p []*types.Type) (*types.Type, string) {
	for _, t := range p {
		if !t.IsPlain() {
			return nil, "print: cannot print " + t.String()
		}
	}
	return tI, ""
}

func checkTrace(p []*types.Type) (*types.Type, string) {
	if !p[0].IsPlain() {
		return nil, "$trace: cannot print " + p[0].String()
	}
	return p[0], ""
}

func checkIdentity(p []*types.Type) (*types.Type, string) {
	if !p[0].IsValue() {
		return nil, "expected a value, not " + p[0].String()
	}
	return p[0], ""
}

func checkCheck(p []*types.Type) (*types.Type, string) {
	s, t, ok := lamParts(p[0])
	if !ok {
		return nil, "$check: the first argument must be a lambda (the function)"
	}
	ds, ok1 := types.Tangent(s)
	dt, ok2 := types.Tangent(t)
	if !ok1 || !ok2 {
		return nil, "$check: the function must take and return values"
	}
	rs, rt, ok := lamParts(p[1])
	if !ok || !rs.Equal(types.TupleOf(s, dt)) || !rt.Equal(ds) {
		return nil, fmt.Sprintf("$check: the second argument must be a lambda of type (Lam %s %s)", types.TupleOf(s, dt), ds)
	}
	if !p[2].Equal(s) || !p[3].Equal(ds) || !p[4].Equal(dt) {
		return nil, fmt.Sprintf("$check: expected the point (%s), a tangent (%s) and a cotangent (%s), got %s", s, ds, dt, describeParts(p[2:]))
	}
	return tF, ""
}
