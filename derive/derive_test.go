package derive

import (
	"strings"
	"testing"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/syntax"
	"github.com/ksc-lang/ksc/typecheck"
)

// TestDerive is derive's contract on small programs: which derived
// functions a request makes exist (the callees' included, none for a
// primitive), their types, which have bodies (the split passes are only
// declared), and the errors: an edef without the derivative asked for,
// an unknown strategy.
func TestDerive(t *testing.T) {
	const g = "(def g Float (x : Float) (mul x (sin x)))\n(def f Float ((x : Float) (n : Integer)) (add (g x) (to_float n)))\n"
	// h's split passes written by hand, with a record of their own, and
	// a caller f whose passes call them.
	const handSplitH = "(def h Float (v : Vec Float) (sumbuild (size v) (lam (i : Integer) (index i v))))\n" +
		"(def [suffwdpass h] (Tuple Float Integer) (v : Vec Float) (tuple (sum v) (size v)))\n" +
		"(def [sufrevpass [h (Vec Float)]] (Vec Float) ((dr : Float) (n : Integer)) (constVec n dr))\n" +
		"(def f Float (v : Vec Float) (mul (h v) (h v)))\n(gdef sufrev [f (Vec Float)])"
	for _, tc := range []struct {
		name, src string
		opts      Options
		// want: derived functions that must exist after Derive, with a body,
		// or their types as "[rev f] : S -> T", or declared without a body,
		// "[suffwdpass f] (declared)": the optimiser's split-bog pass makes
		// the split passes' bodies from [revfull f].
		want []string
		err  string
	}{
		{
			name: "rev of f derives the accumulating reverse of f and of its callee",
			src:  g + "(gdef rev [f (Tuple Float Integer)])",
			want: []string{
				"[rev f] : (Tuple (Tuple Float Integer) Float) -> (Tuple Float (Tuple))",
				"[revacc f]", "[revacc g]",
			},
		},
		{
			name: "fwd of f derives the forward derivative of its callee",
			src:  g + "(gdef fwd [f (Tuple Float Integer)])",
			want: []string{"[fwd f] : (Tuple (Tuple Float Integer) (Tuple Float (Tuple))) -> Float", "[fwd g]"},
		},
		{
			name: "rev with --rev=bog goes through the split passes",
			src:  g + "(gdef rev [f (Tuple Float Integer)])",
			opts: Options{Rev: "bog"},
			want: []string{"[rev f]", "[revfull f]", "[suffwdpass f] (declared)", "[sufrevpass f] (declared)"},
		},
		{
			name: "an edef needs its derivative written by hand",
			src:  "(edef e Float (Float))\n(def f Float (x : Float) (mul x (e x)))\n(gdef rev [f Float])",
			err:  "t.ks:2:33: ksc cannot differentiate [e Float]: it is declared by edef; write [rev e] by hand",
		},
		{
			name: "shape of h derives the shape of its callee, which is all it reads",
			src: "(def v2 (Vec Float) (x : Float) (build 2 (lam (i : Integer) (mul x (to_float i)))))\n" +
				"(def h (Tuple (Vec Float) Float) (x : Float) (let (v (v2 x)) (tuple v (sum v))))\n(gdef shape [h Float])",
			want: []string{"[shape h] : Float -> (Tuple Integer (Tuple))", "[shape v2] : Float -> Integer"},
		},
		{
			name: "an edef with a hand-written [rev e] gets split passes recording its argument",
			src: "(edef e Float (Float))\n(def [rev e] Float ((x : Float) (dr : Float)) (mul dr (cos x)))\n" +
				"(gdef sufrev [e Float])",
			want: []string{"[suffwdpass e] : Float -> (Tuple Float bog$e$f64)", "[sufrevpass e] : (Tuple Float bog$e$f64) -> Float", "[sufrev e]"},
		},
		{
			name: "hand-written split passes choose their record; [bogrev] is made from [sufrevpass]",
			src:  handSplitH,
			want: []string{"[bogrev h] : (Tuple Float Integer (Vec Float)) -> (Vec Float)", "[suffwdpass f]"},
		},
		{
			name: "--rev=bog: the caller's passes are cut from [revfull f]",
			src:  handSplitH,
			opts: Options{Rev: "bog"},
			want: []string{"[bogrev h] : (Tuple Float Integer (Vec Float)) -> (Vec Float)", "[revfull f]", "[suffwdpass f] (declared)"},
		},
		{
			// [rev mysin] is written by hand: the caller's passes are
			// translated, calling mysin's passes, which record its
			// argument and apply [rev mysin] (handsplit.go), not mysin's
			// body inlined (which would give cos x: the values are
			// tests/testdata/derived/hand_rev.ks's).
			name: "a call of a hand-written [rev g] is translated as a call of g's passes made from it",
			src: "(def mysin Float (x : Float) (sin x))\n" +
				"(def [rev mysin] Float ((x : Float) (dr : Float)) (mul 100.0 dr))\n" +
				"(def f Float (v : Vec Float) (sumbuild (size v) (lam (i : Integer) (mysin (index i v)))))\n(gdef sufrev [f (Vec Float)])",
			want: []string{"[suffwdpass f]", "[suffwdpass mysin] : Float -> (Tuple Float bog$mysin$f64)", "[sufrevpass mysin]"},
		},
		{
			name: "a hand-written [suffwdpass h] needs a hand-written [sufrevpass h]",
			src: "(def h Float (v : Vec Float) (sum v))\n" +
				"(def [suffwdpass h] (Tuple Float Integer) (v : Vec Float) (tuple (sum v) (size v)))\n" +
				"(gdef sufrev [h (Vec Float)])",
			err: "ksc cannot generate [sufrevpass [h (Vec Float)]]: [suffwdpass h] is written by hand, so ksc cannot know its record; write [sufrevpass h] by hand too",
		},
		{
			name: "an unknown strategy",
			src:  g + "(gdef rev [f (Tuple Float Integer)])",
			opts: Options{Rev: "fast"},
			err:  `unknown reverse-mode strategy "fast" (want lm, bog or suf)`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file, err := syntax.ParseFile("t.ks", []byte(tc.src))
			if err != nil {
				t.Fatal(err)
			}
			prog, err := typecheck.Check([]*syntax.File{file})
			if err != nil {
				t.Fatal(err)
			}
			err = Derive(prog, tc.opts)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Derive: %v, want an error with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			byName := map[string]*ir.Func{}
			for _, f := range prog.Funcs {
				byName[f.Name.String()] = f
			}
			for _, w := range tc.want {
				w, declared := strings.CutSuffix(w, " (declared)")
				name, typ, _ := strings.Cut(w, " : ")
				f := byName[name]
				if f == nil {
					t.Errorf("no %s after Derive; have %v", name, names(prog))
					continue
				}
				if declared != (f.Body == nil) {
					t.Errorf("%s: body %v, want one: %v", name, f.Body != nil, !declared)
				}
				if typ != "" {
					if got := f.Arg.String() + " -> " + f.Result.String(); got != typ {
						t.Errorf("%s : %s, want %s", name, got, typ)
					}
				}
			}
			for _, f := range prog.Funcs {
				if f.Name.Base == "mul" || f.Name.Base == "sin" {
					t.Errorf("Derive made %s, a derived function of a primitive", f.Name)
				}
			}
		})
	}
}

func names(p *ir.Program) []string {
	var out []string
	for _, f := range p.Funcs {
		out = append(out, f.Name.String())
	}
	return out
}
