package lower

import (
	"strings"
	"testing"

	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/typecheck"
	"github.com/ksc-lang/ksc/types"
)

func TestUnzip(t *testing.T) {
	vars := []*ir.Var{
		{Name: "n", T: types.IntegerType},
		{Name: "k", T: types.IntegerType},
		{Name: "v", T: types.VecOf(types.FloatType)},
	}
	tests := []struct {
		name, in string
		// want is the result printed on one line, or "" for unchanged.
		want string
	}{
		{
			"pairs read by element and size",
			`(let (t (build n (lam (i : Integer) (tuple (index i v) (to_float i)))))
			   (add (get$1$2 (index k t)) (to_float (size t))))`,
			`(let ((t$1 t$2) (unzip (build n (lam (i : Integer) (tuple (index i v) (to_float i)))))) ` +
				`(add (get$1$2 (tuple (index k t$1) (index k t$2))) (to_float (size t$1))))`,
		},
		{
			"nested tuples are flattened, a computed index bound once",
			`(let (t (build n (lam (i : Integer) (let (x (index i v)) (tuple (tuple x 1.0) (mul x x))))))
			   (get$2$2 (index (add k 1) t)))`,
			`(let ((t$1 t$2 t$3) (unzip (build n (lam (i : Integer) (let (x (index i v)) (tuple x 1.0 (mul x x))))))) ` +
				`(get$2$2 (let (i$1 (add k 1)) (tuple (tuple (index i$1 t$1) (index i$1 t$2)) (index i$1 t$3)))))`,
		},
		{
			"a part that is a tuple by name is taken apart, the others bound in order",
			`(let (t (build n (lam (i : Integer) (let (x (index i v)) (let (q (tuple x 1.0)) (tuple (mul x x) q))))))
			   (get$1$2 (index k t)))`,
			`(let ((t$1 t$2 t$3) (unzip (build n (lam (i : Integer) (let (x (index i v)) (let (q (tuple x 1.0)) ` +
				`(let (e$1 (mul x x)) (tuple e$1 (get$1$2 q) (get$2$2 q))))))))) ` +
				`(get$1$2 (tuple (index k t$1) (tuple (index k t$2) (index k t$3)))))`,
		},
		{
			"taken apart again",
			`(let (t (build n (lam (i : Integer) (tuple (index i v) (to_float i)))))
			   (tuple (build (size t) (lam (j : Integer) (get$1$2 (index j t))))
			          (build (size t) (lam (j : Integer) (get$2$2 (index j t))))))`,
			`(let ((t$1 t$2) (unzip (build n (lam (i : Integer) (tuple (index i v) (to_float i)))))) (tuple t$1 t$2))`,
		},
		{
			"the vector itself is read",
			`(let (t (build n (lam (i : Integer) (tuple (index i v) 1.0)))) (index 0 (build 1 (lam (j : Integer) t))))`,
			"",
		},
		{
			"elements holding a vector",
			`(let (t (build n (lam (i : Integer) (tuple v 1.0)))) (get$2$2 (index k t)))`,
			"",
		},
		{
			"one scalar",
			`(let (t (build n (lam (i : Integer) (index i v)))) (index k t))`,
			"",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in, err := typecheck.CheckExpr("test", tc.in, vars)
			if err != nil {
				t.Fatal(err)
			}
			var ns ir.Names
			out := Unzip(in, &ns)
			got := ir.FormatExpr(out)
			want := tc.want
			if want == "" {
				want = ir.FormatExpr(in)
			}
			if oneLine(got) != oneLine(want) {
				t.Errorf("Unzip(%s)\n got %s\nwant %s", oneLine(tc.in), oneLine(got), oneLine(want))
			}
			if _, err := typecheck.CheckExpr("result", got, vars); err != nil {
				t.Errorf("the result does not type-check: %v", err)
			}
			if !out.Type().Equal(in.Type()) {
				t.Errorf("the result's type is %s, want %s", out.Type(), in.Type())
			}
		})
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
