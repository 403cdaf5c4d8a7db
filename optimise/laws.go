package optimise

// A Law is a rewrite rule of the optimiser, written in ks: every
// identifier of LHS that is not in call position is a pattern variable
// matching any expression (the same variable twice must match equal
// expressions), a lambda's or let's binder matches any binder and RHS
// reuses it, and When lists side conditions from a closed set:
//
//	notfree v e   the binder v does not occur free in e
//	float x       x has type Float
//	integer x     x has type Integer
//	pure x        evaluating x prints nothing
//	cheap m       m is a linear map costing O(1) per element to apply
//	              (lmZero, lmOne, lmScale): copying it duplicates no work
//	flat x        x's type holds no tensor (its zero tangent is a constant)
//	flatelem v    v is a tensor whose elements hold no tensor
//
// A right-hand side may also use two forms computed from a matched linear
// map m : (LM S T) when the law is applied: ($lmSource m), an example value
// of S, and ($lmTarget m), one of T, read off m's structure (lmZero's and
// lmOne's examples, a call's argument, ...). The law does not apply where
// m's structure gives none that is cheap to copy (see lmExample). And
// ($zeroOf x) is the zero tangent of x's type as a constant (for a flat
// x), ($zeroOfElem v) that of v's elements.
//
// Laws apply bottom-up to a fixpoint, with a bound that is reported when
// it is hit.
type Law struct {
	Name     string
	Eq       string // the law as an equation
	LHS, RHS string
	When     []string
	// LM marks laws of linear maps, applied to Jacobians before they are
	// applied; the others apply to all code after that.
	LM bool
}

// Laws is the table of laws, one row per law.
var Laws = []Law{
	// Linear maps (seed 002, Figure 4).
	{Name: "compose-one-right", Eq: "m ∘ 1 = m", LM: true,
		LHS: "(lmCompose m (lmOne x))", RHS: "m"},
	{Name: "compose-one-left", Eq: "1 ∘ m = m", LM: true,
		LHS: "(lmCompose (lmOne x) m)", RHS: "m"},
	{Name: "add-zero-right", Eq: "m ⊕ 0 = m", LM: true,
		LHS: "(lmAdd m (lmZero s t))", RHS: "m"},
	{Name: "add-zero-left", Eq: "0 ⊕ m = m", LM: true,
		LHS: "(lmAdd (lmZero s t) m)", RHS: "m"},
	{Name: "scale-compose", Eq: "S(a) ∘ S(b) = S(a * b)", LM: true,
		LHS: "(lmCompose (lmScale x a) (lmScale y b))", RHS: "(lmScale y (mul a b))"},
	{Name: "scale-add", Eq: "S(a) ⊕ S(b) = S(a + b)", LM: true,
		LHS: "(lmAdd (lmScale x a) (lmScale y b))", RHS: "(lmScale x (add a b))"},
	{Name: "factor-right", Eq: "(a ∘ m) ⊕ (b ∘ m) = (a ⊕ b) ∘ m", LM: true,
		LHS: "(lmAdd (lmCompose a m) (lmCompose b m))", RHS: "(lmCompose (lmAdd a b) m)"},
	{Name: "transpose-transpose", Eq: "(mᵀ)ᵀ = m", LM: true,
		LHS: "(lmTranspose (lmTranspose m))", RHS: "m"},
	{Name: "compose-zero-left", Eq: "0 ∘ m = 0", LM: true,
		LHS: "(lmCompose (lmZero s t) m)", RHS: "(lmZero ($lmSource m) t)"},
	{Name: "compose-zero-right", Eq: "m ∘ 0 = 0", LM: true,
		LHS: "(lmCompose m (lmZero s t))", RHS: "(lmZero s ($lmTarget m))"},
	// The next two copy a map into both halves: only a cheap one, or
	// applying the result would apply it twice.
	{Name: "compose-hcat", Eq: "m ∘ (n1 ⋈ n2) = (m ∘ n1) ⋈ (m ∘ n2)", LM: true,
		LHS: "(lmCompose m (lmHCat n1 n2))", RHS: "(lmHCat (lmCompose m n1) (lmCompose m n2))",
		When: []string{"cheap m"}},
	{Name: "vcat-compose", Eq: "(m1 × m2) ∘ n = (m1 ∘ n) × (m2 ∘ n)", LM: true,
		LHS: "(lmCompose (lmVCat m1 m2) n)", RHS: "(lmVCat (lmCompose m1 n) (lmCompose m2 n))",
		When: []string{"cheap n"}},
	{Name: "hcat-vcat", Eq: "(m1 ⋈ m2) ∘ (n1 × n2) = (m1 ∘ n1) ⊕ (m2 ∘ n2)", LM: true,
		LHS: "(lmCompose (lmHCat m1 m2) (lmVCat n1 n2))", RHS: "(lmAdd (lmCompose m1 n1) (lmCompose m2 n2))"},

	// Fusion of tensors.
	{Name: "index-build", Eq: "index k (build n (λi. e)) = e[i := k]",
		LHS: "(index k (build n (lam (i : Integer) e)))", RHS: "(let (i k) e)"},
	{Name: "size-build", Eq: "size (build n f) = n",
		LHS: "(size (build n f))", RHS: "n", When: []string{"pure f"}},
	{Name: "build-index", Eq: "build (size v) (λi. index i v) = v",
		LHS: "(build (size v) (lam (i : Integer) (index i v)))", RHS: "v", When: []string{"notfree i v"}},
	{Name: "sum-build", Eq: "sum (build n f) = sumbuild n f",
		LHS: "(sum (build n (lam (i : Integer) e)))", RHS: "(sumbuild n (lam (i : Integer) e))"},
	{Name: "sumbuild-deltaVec", Eq: "sumbuild n (λi. deltaVec n i e) = build n (λi. e)",
		LHS: "(sumbuild n (lam (i : Integer) (deltaVec n i e)))", RHS: "(build n (lam (i : Integer) e))",
		When: []string{"notfree i n"}},

	// Tangent operations on scalars.
	{Name: "ts_add-float", Eq: "ts_add x y = x + y on Float",
		LHS: "(ts_add x y)", RHS: "(add x y)", When: []string{"float x"}},
	{Name: "ts_scale-float", Eq: "ts_scale k x = k * x on Float",
		LHS: "(ts_scale k x)", RHS: "(mul k x)", When: []string{"float x"}},
	{Name: "ts_neg-float", Eq: "ts_neg x = -x on Float",
		LHS: "(ts_neg x)", RHS: "(neg x)", When: []string{"float x"}},
	{Name: "ts_dot-float", Eq: "ts_dot a b = a * b on Float",
		LHS: "(ts_dot a b)", RHS: "(mul a b)", When: []string{"float a"}},
	{Name: "ts_zero-float", Eq: "ts_zero x = 0 on Float",
		LHS: "(ts_zero x)", RHS: "0.0", When: []string{"float x", "pure x"}},
	// A zero cotangent takes its shape from the sizes of the value, not
	// from its elements: the value need not be computed for it.
	{Name: "ts_zero-flat", Eq: "ts_zero x = 0, a constant, where x holds no tensor",
		LHS: "(ts_zero x)", RHS: "($zeroOf x)", When: []string{"flat x", "pure x"}},
	{Name: "ts_zero-tensor", Eq: "ts_zero v = constVec (size v) 0 where v's elements hold no tensor",
		LHS: "(ts_zero v)", RHS: "(constVec (size v) ($zeroOfElem v))", When: []string{"flatelem v"}},
	{Name: "shape-tensor", Eq: "shape v = size v where v's elements hold no tensor (language.md section 5)",
		LHS: "($shape v)", RHS: "(size v)", When: []string{"flatelem v"}},
	{Name: "addTo-float", Eq: "acc += x is acc + x on Float",
		LHS: "($addTo a b)", RHS: "(add a b)", When: []string{"float a"}},

	// An Integer compared with itself (a C compiler warns of the
	// self-comparison; Floats are left alone, NaN not being equal to
	// itself).
	{Name: "gt-self", Eq: "x > x = false on Integer",
		LHS: "(gt x x)", RHS: "false", When: []string{"integer x", "pure x"}},
	{Name: "lt-self", Eq: "x < x = false on Integer",
		LHS: "(lt x x)", RHS: "false", When: []string{"integer x", "pure x"}},
	{Name: "gte-self", Eq: "x >= x = true on Integer",
		LHS: "(gte x x)", RHS: "true", When: []string{"integer x", "pure x"}},
	{Name: "lte-self", Eq: "x <= x = true on Integer",
		LHS: "(lte x x)", RHS: "true", When: []string{"integer x", "pure x"}},
	{Name: "eq-self", Eq: "x = x on Integer",
		LHS: "(eq x x)", RHS: "true", When: []string{"integer x", "pure x"}},
	{Name: "ne-self", Eq: "x != x = false on Integer",
		LHS: "(ne x x)", RHS: "false", When: []string{"integer x", "pure x"}},

	// Arithmetic identities that hold in IEEE arithmetic up to the sign
	// of a zero.
	{Name: "add-zero-left-float", Eq: "0 + x = x", LHS: "(add 0.0 x)", RHS: "x"},
	{Name: "add-zero-right-float", Eq: "x + 0 = x", LHS: "(add x 0.0)", RHS: "x"},
	{Name: "mul-one-left", Eq: "1 * x = x", LHS: "(mul 1.0 x)", RHS: "x"},
	{Name: "mul-one-right", Eq: "x * 1 = x", LHS: "(mul x 1.0)", RHS: "x"},

	// Sets of sparsity patterns (increasing Vec Integers): the empty set
	// is (build 0 f).
	{Name: "union-empty-left", Eq: "∅ ∪ s = s", LHS: "($union (build 0 f) s)", RHS: "s"},
	{Name: "union-empty-right", Eq: "s ∪ ∅ = s", LHS: "($union s (build 0 f))", RHS: "s"},
	{Name: "union-self", Eq: "s ∪ s = s", LHS: "($union s s)", RHS: "s"},
	{Name: "pairs-empty-left", Eq: "∅ × s = ∅", LHS: "($pairs (build 0 f) s)", RHS: "(build 0 f)"},
	{Name: "pairs-empty-right", Eq: "s × ∅ = ∅", LHS: "($pairs s (build 0 f))", RHS: "(build 0 f)"},
}
