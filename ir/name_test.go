package ir

import "testing"

// TestNameIdent: every backend and library entry spells a function by
// Name.Ident; nested derivations and positions are words of it, and a
// character no identifier may hold becomes "_".
func TestNameIdent(t *testing.T) {
	for _, tc := range []struct {
		n    Name
		want string
	}{
		{Name{Base: "f"}, "f"},
		{Name{Derivs: []string{"rev"}, Base: "loss"}, "rev_loss"},
		{Name{Derivs: []string{"rev"}, Base: "loss", Wrt: []int{0, 2}}, "rev_loss_wrt_0_2"},
		{Name{Derivs: []string{"suffwdpass", "CL"}, Base: "f"}, "suffwdpass_CL_f"},
		{Name{Base: "f'"}, "f_"},
		{Name{Base: "a.b-c"}, "a_b_c"},
	} {
		if got := tc.n.Ident(); got != tc.want {
			t.Errorf("%s.Ident() = %q, want %q", tc.n, got, tc.want)
		}
	}
}
