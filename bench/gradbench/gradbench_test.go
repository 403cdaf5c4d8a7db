package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"
)

// TestSession builds ksc-gradbench and runs the session of
// testdata/session.jsonl through it, checking each response against
// values computed here, in Go, from the evals' definitions (GradBench's
// READMEs), not from ks: hello's square and its derivative, lse and its
// gradient (the softmax) on an input whose exp would overflow, llsq and its
// gradient by the sum of powers, det and its gradient (the cofactors) by
// Gaussian elimination, gmm's log posterior from the definition (a direct
// sum of Gaussian densities and Wishart priors, with determinants and
// inverses) and its gradient by central differences of that, ode by
// Runge-Kutta written here and its gradient by central differences, lstm
// by ADBench's definition written here and its gradient the same way, ba's
// reprojection error by its definition written here and its Jacobian's
// layout and first observation's block by central differences, ht's
// objective at a pose whose value is known (checkHT) and its Jacobians by
// central differences of its objective; an
// unknown module and function are errors, and min_runs runs are timed.
func TestSession(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Go module with cgo")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	exe, err := build(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	session, err := os.ReadFile(filepath.Join("testdata", "session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	session = append(session, htMessages(35)...)
	cmd := exec.CommandContext(ctx, exe)
	cmd.Stdin = bytes.NewReader(session)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ksc-gradbench: %v", err)
	}
	type response struct {
		ID      int
		Tool    string
		Success *bool
		Output  json.RawMessage
		Timings []struct {
			Name        string
			Nanoseconds int64
		}
		Error string
	}
	rs := map[int]response{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var r response
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("response: %v\n%s", err, out)
		}
		rs[r.ID] = r
	}
	if len(rs) != 35+htCount {
		t.Fatalf("%d responses, want %d:\n%s", len(rs), 35+htCount, out)
	}
	ok := func(id int) response {
		t.Helper()
		r := rs[id]
		if r.Success == nil || !*r.Success {
			t.Errorf("message %d: no success (%s)", id, r.Error)
		}
		return r
	}
	number := func(id int) float64 {
		t.Helper()
		var v float64
		if err := json.Unmarshal(ok(id).Output, &v); err != nil {
			t.Errorf("message %d: output %s", id, rs[id].Output)
		}
		return v
	}
	vector := func(id int) []float64 {
		t.Helper()
		var v []float64
		if err := json.Unmarshal(ok(id).Output, &v); err != nil {
			t.Errorf("message %d: output %s", id, rs[id].Output)
		}
		return v
	}
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
			t.Errorf("%s = %.17g, want %.17g", what, got, want)
		}
	}

	if rs[0].Tool != "ksc" || rs[4].Success != nil {
		t.Errorf("start and analysis: %+v, %+v", rs[0], rs[4])
	}
	for _, id := range []int{1, 5, 8, 13, 16, 19, 22, 25} {
		ok(id)
	}
	near("square 3.5", number(2), 12.25)
	near("double 3.5", number(3), 7)

	x := []float64{0.5, -1.25, 3, 700, 2.5}
	var sum float64
	for _, v := range x {
		sum += math.Exp(v - 700)
	}
	near("lse", number(6), 700+math.Log(sum))
	if n := len(rs[6].Timings); n != 3 {
		t.Errorf("lse primal: %d timings, want 3 (min_runs)", n)
	}
	for i, g := range vector(7) {
		near("lse gradient", g, math.Exp(x[i]-700)/sum)
	}

	// llsq: y = 1/2 sum_i (s_i - sum_j x_j t_i^j)^2, t_i = -1 + 2i/(n-1).
	c, n := []float64{0.1, -0.2, 0.3, 0.05}, 7
	y, grad := 0.0, make([]float64, len(c))
	for i := range n {
		ti := -1 + 2*float64(i)/float64(n-1)
		si := 0.0
		if ti > 0 {
			si = 1
		} else if ti < 0 {
			si = -1
		}
		r := si
		for j := range c {
			r -= c[j] * math.Pow(ti, float64(j))
		}
		y += r * r / 2
		for j := range c {
			grad[j] -= r * math.Pow(ti, float64(j))
		}
	}
	near("llsq", number(9), y)
	for j, g := range vector(10) {
		near("llsq gradient", g, grad[j])
	}

	// det: the gradient of det A is its matrix of cofactors,
	// (-1)^(i+j) det of A without row i and column j.
	a := []float64{2, -1, 0.5, 3, 1, 4, -2, 0.25, 0, 1.5, 3, -1, 2.5, 0, 1, 2}
	near("det", number(14), gaussDet(a, 4))
	for k, g := range vector(15) {
		i, j := k/4, k%4
		var minor []float64
		for r := range 4 {
			for c := range 4 {
				if r != i && c != j {
					minor = append(minor, a[r*4+c])
				}
			}
		}
		near("det gradient", g, math.Pow(-1, float64(i+j))*gaussDet(minor, 3))
	}

	// gmm, from the messages' input.
	var msgs []struct {
		ID    int
		Input json.RawMessage
	}
	for _, l := range bytes.Split(bytes.TrimSpace(session), []byte("\n")) {
		var m struct {
			ID    int
			Input json.RawMessage
		}
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, m)
	}
	var in gmmInput
	if err := json.Unmarshal(msgs[17].Input, &in); err != nil {
		t.Fatal(err)
	}
	if got, want := number(17), in.logPosterior(); math.Abs(got-want) > 1e-9*math.Abs(want) {
		t.Errorf("gmm objective = %.17g, want %.17g", got, want)
	}
	var gmmJac map[string]any
	if err := json.Unmarshal(ok(18).Output, &gmmJac); err != nil {
		t.Fatalf("gmm jacobian: %v", err)
	}
	for _, p := range in.independents() {
		got, ok := at(gmmJac[p.name], p.index)
		want := centralDiff(p.x, in.logPosterior)
		if !ok || math.Abs(got-want) > 1e-6*math.Max(1, math.Abs(want)) {
			t.Errorf("gmm jacobian %s%v = %v, want %v (central differences)", p.name, p.index, got, want)
		}
	}

	// ode: y(2) by s Runge-Kutta steps; the gradient of its last element.
	var odeIn struct {
		X []float64
		S int
	}
	if err := json.Unmarshal(msgs[20].Input, &odeIn); err != nil {
		t.Fatal(err)
	}
	for i, y := range vector(20) {
		near("ode", y, rungeKutta(odeIn.X, odeIn.S)[i])
	}
	for i, g := range vector(21) {
		last := func() float64 { y := rungeKutta(odeIn.X, odeIn.S); return y[len(y)-1] }
		want := centralDiff(&odeIn.X[i], last)
		if math.Abs(g-want) > 1e-7*math.Max(1, math.Abs(want)) {
			t.Errorf("ode gradient %d = %v, want %v (central differences)", i, g, want)
		}
	}

	// lstm: the objective; the jacobian, main_params then extra_params,
	// each row after row.
	var lstmIn struct {
		Main     [][]float64 `json:"main_params"`
		Extra    [][]float64 `json:"extra_params"`
		State    [][]float64 `json:"state"`
		Sequence [][]float64 `json:"sequence"`
	}
	if err := json.Unmarshal(msgs[23].Input, &lstmIn); err != nil {
		t.Fatal(err)
	}
	obj := func() float64 { return lstmObjective(lstmIn.Main, lstmIn.Extra, lstmIn.State, lstmIn.Sequence) }
	if got, want := number(23), obj(); math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
		t.Errorf("lstm objective = %.17g, want %.17g", got, want)
	}
	jac := vector(24)
	k := 0
	for _, m := range [][][]float64{lstmIn.Main, lstmIn.Extra} {
		for i := range m {
			for j := range m[i] {
				want := centralDiff(&m[i][j], obj)
				if k >= len(jac) || math.Abs(jac[k]-want) > 1e-7*math.Max(1, math.Abs(want)) {
					t.Errorf("lstm jacobian %d: %v, want %v (central differences)", k, jac[min(k, len(jac)-1)], want)
				}
				k++
			}
		}
	}
	if k != len(jac) {
		t.Errorf("lstm jacobian: %d elements, want %d", len(jac), k)
	}

	checkBA(t, msgs[26].Input, ok(26).Output, ok(27).Output)

	// kmeans: points (0,0), (1,0), (0,1) nearest the centroid (0.5,0.5),
	// each 0.5 away squared, (5,5) and (6,5) nearest (5,4), 1 and 2 away:
	// the cost 4.5. The gradient for a centroid is twice the sum of its
	// offsets from its points, (1, 1) and (-2, -4); the Hessian's diagonal
	// twice the count of its points, 6 and 4; the direction their ratio.
	ok(28)
	near("kmeans cost", number(29), 4.5)
	var dir [][]float64
	if err := json.Unmarshal(ok(30).Output, &dir); err != nil || len(dir) != 2 {
		t.Errorf("kmeans dir: %s", rs[30].Output)
	} else {
		for j, want := range [][]float64{{1.0 / 6, 1.0 / 6}, {-0.5, -1}} {
			for k := range want {
				near(fmt.Sprintf("kmeans dir[%d][%d]", j, k), dir[j][k], want[k])
			}
		}
	}

	// saddle and particle: GradBench's eval checks these values (the
	// gradient descents stop where their steps get short), which no
	// closed form gives; every variant finds them.
	ok(31)
	for i, v := range vector(32) {
		if math.Abs(v-8.246324826140356e-06) > 1e-12 {
			t.Errorf("saddle rf [%d] = %.17g, want 8.246324826140356e-06", i, v)
		}
	}
	ok(33)
	if v := number(34); math.Abs(v-0.2071918746486116) > 1e-9 {
		t.Errorf("particle fr = %.17g, want 0.2071918746486116", v)
	}

	outputs := map[int]json.RawMessage{}
	for id := 35; id < 35+htCount; id++ {
		outputs[id] = ok(id).Output
	}
	checkHT(t, 35, outputs)

	for _, id := range []int{11, 12} {
		if r := rs[id]; r.Success == nil || *r.Success || r.Error == "" {
			t.Errorf("message %d: %+v, want an error", id, r)
		}
	}
}

// gaussDet returns the determinant of the n x n matrix a (row-major) by
// Gaussian elimination with partial pivoting.
func gaussDet(a []float64, n int) float64 {
	m := append([]float64(nil), a...)
	det := 1.0
	for k := range n {
		p := k
		for r := k + 1; r < n; r++ {
			if math.Abs(m[r*n+k]) > math.Abs(m[p*n+k]) {
				p = r
			}
		}
		if m[p*n+k] == 0 {
			return 0
		}
		if p != k {
			for c := range n {
				m[k*n+c], m[p*n+c] = m[p*n+c], m[k*n+c]
			}
			det = -det
		}
		det *= m[k*n+k]
		for r := k + 1; r < n; r++ {
			f := m[r*n+k] / m[k*n+k]
			for c := k; c < n; c++ {
				m[r*n+c] -= f * m[k*n+c]
			}
		}
	}
	return det
}

// gmmInput is the input of GradBench's gmm eval.
type gmmInput struct {
	D, K, N  int
	X        [][]float64
	M        int
	Gamma    float64
	Alpha    []float64
	Mu, Q, L [][]float64
}

// logPosterior is gmm's objective as GradBench's README defines it (the
// log of the likelihood times the prior), computed without its
// simplifications: a sum of Gaussian densities with Sigma^-1 = Q^T Q, and a
// Wishart density of Sigma^-1 with V = I/gamma^2 and n = D+m+1.
func (in *gmmInput) logPosterior() float64 {
	d := in.D
	phiSum := 0.0
	for _, a := range in.Alpha {
		phiSum += math.Exp(a)
	}
	prec := make([][]float64, in.K) // Q_k^T Q_k, row-major
	for k := range in.K {
		q := make([]float64, d*d)
		idx := 0
		for c := range d {
			q[c*d+c] = math.Exp(in.Q[k][c])
			for r := c + 1; r < d; r++ {
				q[r*d+c] = in.L[k][idx]
				idx++
			}
		}
		p := make([]float64, d*d)
		for i := range d {
			for j := range d {
				for r := range d {
					p[i*d+j] += q[r*d+i] * q[r*d+j]
				}
			}
		}
		prec[k] = p
	}
	logLik := 0.0
	for _, x := range in.X {
		s := 0.0
		for k := range in.K {
			quad := 0.0
			for i := range d {
				for j := range d {
					quad += (x[i] - in.Mu[k][i]) * prec[k][i*d+j] * (x[j] - in.Mu[k][j])
				}
			}
			s += math.Exp(in.Alpha[k]) / phiSum * math.Exp(-quad/2) / math.Sqrt(math.Pow(2*math.Pi, float64(d))/gaussDet(prec[k], d))
		}
		logLik += math.Log(s)
	}
	n := float64(d + in.M + 1)
	// log Gamma_d(n/2), the multivariate gamma function.
	lmg := float64(d*(d-1)) / 4 * math.Log(math.Pi)
	for j := 1; j <= d; j++ {
		lg, _ := math.Lgamma(n/2 + float64(1-j)/2)
		lmg += lg
	}
	logPrior := 0.0
	for k := range in.K {
		// V^-1 = gamma^2 I, det V = gamma^(-2d).
		tr := 0.0
		for i := range d {
			tr += in.Gamma * in.Gamma * prec[k][i*d+i]
		}
		logPrior += (n-float64(d)-1)/2*math.Log(gaussDet(prec[k], d)) - tr/2 -
			n*float64(d)/2*math.Log(2) + n/2*2*float64(d)*math.Log(in.Gamma) - lmg
	}
	return logLik + logPrior
}

// An independent is one input variable of gmm's gradient: its field in
// the jacobian's output, its index there, and where it is in the input.
type independent struct {
	name  string
	index []int
	x     *float64
}

func (in *gmmInput) independents() []independent {
	var out []independent
	for i := range in.Alpha {
		out = append(out, independent{"alpha", []int{i}, &in.Alpha[i]})
	}
	for name, m := range map[string][][]float64{"mu": in.Mu, "q": in.Q, "l": in.L} {
		for i := range m {
			for j := range m[i] {
				out = append(out, independent{name, []int{i, j}, &m[i][j]})
			}
		}
	}
	return out
}

// at returns the number at index in a JSON value of nested arrays.
func at(v any, index []int) (float64, bool) {
	for _, i := range index {
		a, ok := v.([]any)
		if !ok || i >= len(a) {
			return 0, false
		}
		v = a[i]
	}
	f, ok := v.(float64)
	return f, ok
}

// centralDiff returns the derivative of f with respect to *x by central
// differences.
func centralDiff(x *float64, f func() float64) float64 {
	const h = 1e-5
	old := *x
	*x = old + h
	up := f()
	*x = old - h
	down := f()
	*x = old
	return (up - down) / (2 * h)
}

// rungeKutta returns y(2) for GradBench's ode eval: s classical
// Runge-Kutta steps for y_0' = x_0, y_i' = x_i y_(i-1), y(0) = 0.
func rungeKutta(x []float64, s int) []float64 {
	n := len(x)
	f := func(y []float64) []float64 {
		z := make([]float64, n)
		z[0] = x[0]
		for i := 1; i < n; i++ {
			z[i] = x[i] * y[i-1]
		}
		return z
	}
	axpy := func(y []float64, a float64, k []float64) []float64 {
		z := make([]float64, n)
		for i := range z {
			z[i] = y[i] + a*k[i]
		}
		return z
	}
	h := 2 / float64(s)
	y := make([]float64, n)
	for range s {
		k1 := f(y)
		k2 := f(axpy(y, h/2, k1))
		k3 := f(axpy(y, h/2, k2))
		k4 := f(axpy(y, h, k3))
		for i := range y {
			y[i] += h * (k1[i] + 2*k2[i] + 2*k3[i] + k4[i]) / 6
		}
	}
	return y
}

// lstmObjective is ADBench's LSTM loss (GradBench's lstm eval): layers of
// diagonal LSTM cells over the sequence, each character predicting the
// next through log(2 + sum exp).
func lstmObjective(main, extra, state, seq [][]float64) float64 {
	sigmoid := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	s := make([][]float64, len(state))
	for i := range state {
		s[i] = append([]float64(nil), state[i]...)
	}
	b := len(seq[0])
	total := 0.0
	for t := 0; t+1 < len(seq); t++ {
		v := make([]float64, b)
		for j := range v {
			v[j] = seq[t][j] * extra[0][j]
		}
		for l := 0; l < len(main)/2; l++ {
			w, bias, hid, cell := main[2*l], main[2*l+1], s[2*l], s[2*l+1]
			h, c := make([]float64, b), make([]float64, b)
			for j := range b {
				forget := sigmoid(v[j]*w[j] + bias[j])
				ingate := sigmoid(hid[j]*w[j+b] + bias[j+b])
				outgate := sigmoid(v[j]*w[j+2*b] + bias[j+2*b])
				change := math.Tanh(hid[j]*w[j+3*b] + bias[j+3*b])
				c[j] = cell[j]*forget + ingate*change
				h[j] = outgate * math.Tanh(c[j])
			}
			s[2*l], s[2*l+1] = h, c
			v = h
		}
		sum := 2.0
		y := make([]float64, b)
		for j := range y {
			y[j] = v[j]*extra[1][j] + extra[2][j]
			sum += math.Exp(y[j])
		}
		lse := math.Log(sum)
		for j := range y {
			total += seq[t+1][j] * (y[j] - lse)
		}
	}
	return -total / float64((len(seq)-1)*b)
}

// checkBA checks the ba eval's objective and Jacobian outputs for input
// against the reprojection error written here (ADBench's definition) and
// its central differences, in GradBench's layout: two rows of 15 entries
// per observation (camera, point, weight), then one per weight error; of
// each list the first 30 entries and the last.
func checkBA(t *testing.T, input, objective, jacobian json.RawMessage) {
	t.Helper()
	var in struct {
		N, M, P int
		Cam, X  []float64
		W       float64
		Feat    []float64
	}
	if err := json.Unmarshal(input, &in); err != nil {
		t.Fatal(err)
	}
	// reproj is observation 0's error, of the parameters camera, point
	// and weight in one vector.
	reproj := func(v []float64) [2]float64 {
		cam, x, w := v[:11], v[11:14], v[14]
		xo := [3]float64{x[0] - cam[3], x[1] - cam[4], x[2] - cam[5]}
		rot := cam[:3]
		var xc [3]float64
		cross := func(a []float64, b [3]float64) [3]float64 {
			return [3]float64{a[1]*b[2] - a[2]*b[1], a[2]*b[0] - a[0]*b[2], a[0]*b[1] - a[1]*b[0]}
		}
		if sq := rot[0]*rot[0] + rot[1]*rot[1] + rot[2]*rot[2]; sq != 0 {
			theta := math.Sqrt(sq)
			k := []float64{rot[0] / theta, rot[1] / theta, rot[2] / theta}
			kx := cross(k, xo)
			dot := (k[0]*xo[0] + k[1]*xo[1] + k[2]*xo[2]) * (1 - math.Cos(theta))
			for i := range xc {
				xc[i] = xo[i]*math.Cos(theta) + kx[i]*math.Sin(theta) + k[i]*dot
			}
		} else {
			rx := cross(rot, xo)
			for i := range xc {
				xc[i] = xo[i] + rx[i]
			}
		}
		p0, p1 := xc[0]/xc[2], xc[1]/xc[2]
		rsq := p0*p0 + p1*p1
		l := 1 + cam[9]*rsq + cam[10]*rsq*rsq
		return [2]float64{w * (p0*l*cam[6] + cam[7] - in.Feat[0]), w * (p1*l*cam[6] + cam[8] - in.Feat[1])}
	}
	params := append(append(append([]float64(nil), in.Cam...), in.X...), in.W)
	var obj struct {
		Reproj struct {
			Elements []float64
			Repeated int
		} `json:"reproj_error"`
		W struct {
			Element  float64
			Repeated int
		} `json:"w_err"`
	}
	if err := json.Unmarshal(objective, &obj); err != nil {
		t.Fatal(err)
	}
	e := reproj(params)
	if len(obj.Reproj.Elements) != 2 || obj.Reproj.Repeated != in.P || obj.W.Repeated != in.P ||
		math.Abs(obj.Reproj.Elements[0]-e[0]) > 1e-9*math.Abs(e[0]) || math.Abs(obj.Reproj.Elements[1]-e[1]) > 1e-9*math.Abs(e[1]) ||
		math.Abs(obj.W.Element-(1-in.W*in.W)) > 1e-15 {
		t.Errorf("ba objective %s, want errors %v and %v, each repeated %d times", objective, e, 1-in.W*in.W, in.P)
	}
	var jac struct {
		Rows, Cols []int
		Vals       []float64
	}
	if err := json.Unmarshal(jacobian, &jac); err != nil {
		t.Fatal(err)
	}
	var rows []int // CSR row offsets: 15 entries in each reprojection row, then 1
	for r := 0; r <= 3*in.P; r++ {
		rows = append(rows, 15*min(r, 2*in.P)+max(0, r-2*in.P))
	}
	wcol := 11*in.N + 3*in.M
	var cols []int // observation 0's two rows: camera 0, point 0, weight 0
	for range 2 {
		for c := range 15 {
			cols = append(cols, []int{c, wcol - 3*in.M + c - 11, wcol}[min(c/11, 1)+min(c/14, 1)])
		}
	}
	cols = append(cols, wcol+in.P-1) // the last weight error's
	if !slices.Equal(jac.Rows, rows) || !slices.Equal(jac.Cols, cols) || len(jac.Vals) != 31 {
		t.Fatalf("ba jacobian layout: rows %v cols %v (%d values), want rows %v cols %v (31 values)", jac.Rows, jac.Cols, len(jac.Vals), rows, cols)
	}
	for r := range 2 {
		for c := range 15 {
			want := centralDiff(&params[c], func() float64 { return reproj(params)[r] })
			if got := jac.Vals[15*r+c]; math.Abs(got-want) > 1e-6*math.Max(1, math.Abs(want)) {
				t.Errorf("ba jacobian row %d column %d = %v, want %v (central differences)", r, c, got, want)
			}
		}
	}
	if got := jac.Vals[30]; got != -2*in.W {
		t.Errorf("ba jacobian of the last weight error = %v, want %v", got, -2*in.W)
	}
}

// htModel is a hand of 22 bones in a chain, each translated 0.1 along x
// from its parent, with its exact inverse absolute transforms, 6
// vertices each weighted between two bones, 2 triangles; 4 points.
func htModel() map[string]any {
	ident := func(tx float64) [][]float64 {
		return [][]float64{{1, 0, 0, tx}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}}
	}
	var parents []int
	var rel, inv [][][]float64
	for i := range 22 {
		parents = append(parents, i-1)
		rel = append(rel, ident(0.1))
		inv = append(inv, ident(-0.1*float64(i+1)))
	}
	var pos, weights [][]float64
	for v := range 6 {
		pos = append(pos, []float64{0.1 * float64(v), 0.2 - 0.05*float64(v), 0.3 + 0.01*float64(v*v), 1})
		w := make([]float64, 22)
		w[3*v], w[3*v+1] = 0.25+0.1*float64(v), 0.75-0.1*float64(v)
		weights = append(weights, w)
	}
	names := make([]string, 22)
	for i := range names {
		names[i] = "bone" + strconv.Itoa(i)
	}
	return map[string]any{
		"bone_count": 22, "bone_names": names, "parents": parents,
		"base_relatives": rel, "inverse_base_absolutes": inv, "base_positions": pos,
		"weights": weights, "triangles": [][]int{{0, 1, 2}, {3, 4, 5}}, "is_mirrored": false,
	}
}

// htCount is the number of messages htMessages makes.
const htCount = 1 + 2*(2+2*28)

// htTheta is a pose: a global rotation and translation only (the bones'
// rotations the identity), where the skinned vertices are the base
// positions rotated and moved (at a global rotation of exactly zero the
// angle-axis norm's derivative, and so the Jacobian, is not a number);
// htStep is the central differences' step.
var htTheta = func() []float64 {
	th := make([]float64, 26)
	th[0], th[1], th[2] = 0.1, -0.2, 0.3
	th[3], th[4], th[5] = 0.5, -0.25, 1
	return th
}()

// angleAxis is ADBench's rotation matrix of an angle-axis vector.
func angleAxis(aa []float64) [3][3]float64 {
	n := math.Sqrt(aa[0]*aa[0] + aa[1]*aa[1] + aa[2]*aa[2])
	x, y, z := aa[0]/n, aa[1]/n, aa[2]/n
	s, c := math.Sin(n), math.Cos(n)
	return [3][3]float64{
		{x*x + (1-x*x)*c, x*y*(1-c) - z*s, x*z*(1-c) + y*s},
		{x*y*(1-c) + z*s, y*y + (1-y*y)*c, y*z*(1-c) - x*s},
		{x*z*(1-c) - y*s, z*y*(1-c) + x*s, z*z + (1-z*z)*c},
	}
}

const htStep = 1e-6

// htMessages returns the ht messages of the session from id on: define;
// then for the simple variant (no us) and the complicated one, the
// objective and Jacobian at htTheta and the objective at htTheta and us
// moved by +-htStep in each of the Jacobian's columns.
func htMessages(id int) []byte {
	var b bytes.Buffer
	add := func(m map[string]any) {
		m["id"] = id
		id++
		line, err := json.Marshal(m)
		if err != nil {
			panic(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	add(map[string]any{"kind": "define", "module": "ht"})
	for _, complicated := range []bool{false, true} {
		data := map[string]any{"model": htModel(), "correspondences": []int{4, 1, 0, 5}, "points": [][]float64{{1, 0, 2}, {0.5, 0.5, 0.5}, {-1, 0.25, 1.5}, {0.75, -0.5, 1.25}}}
		us := [][]float64{}
		if complicated {
			data["correspondences"] = []int{1, 0, 1, 0}
			us = [][]float64{{0.2, 0.3}, {0.5, 0.1}, {0.05, 0.9}, {0.3, 0.3}}
		}
		input := func(theta []float64, us [][]float64) map[string]any {
			return map[string]any{"theta": theta, "us": us, "data": data, "min_runs": 1, "min_seconds": 0}
		}
		add(map[string]any{"kind": "evaluate", "module": "ht", "function": "objective", "input": input(htTheta, us)})
		add(map[string]any{"kind": "evaluate", "module": "ht", "function": "jacobian", "input": input(htTheta, us)})
		for col := range 28 {
			for _, h := range []float64{htStep, -htStep} {
				th := append([]float64(nil), htTheta...)
				u := make([][]float64, len(us))
				for i := range us {
					u[i] = append([]float64(nil), us[i]...)
				}
				switch {
				case col < 2 && complicated:
					for i := range u {
						u[i][col] += h
					}
				case col >= 2:
					th[col-2] += h
				}
				add(map[string]any{"kind": "evaluate", "module": "ht", "function": "objective", "input": input(th, u)})
			}
		}
	}
	return b.Bytes()
}

// checkHT checks the ht outputs of the messages htMessages made from id
// first: each objective at htTheta against the base positions rotated and
// moved (and for the complicated variant the barycentric
// combination of its triangle's), and each Jacobian, column by column,
// against central differences of the objectives the tool gave at the
// moved inputs.
func checkHT(t *testing.T, first int, outputs map[int]json.RawMessage) {
	t.Helper()
	model := htModel()
	pos := model["base_positions"].([][]float64)
	tri := [][]int{{0, 1, 2}, {3, 4, 5}}
	vector := func(id int) []float64 {
		var v []float64
		if err := json.Unmarshal(outputs[id], &v); err != nil {
			t.Fatalf("ht message %d: output %s", id, outputs[id])
		}
		return v
	}
	id := first + 1
	for _, complicated := range []bool{false, true} {
		points := [][]float64{{1, 0, 2}, {0.5, 0.5, 0.5}, {-1, 0.25, 1.5}, {0.75, -0.5, 1.25}}
		corr := []int{4, 1, 0, 5}
		us := [][]float64{{0.2, 0.3}, {0.5, 0.1}, {0.05, 0.9}, {0.3, 0.3}}
		if complicated {
			corr = []int{1, 0, 1, 0}
		}
		obj := vector(id)
		var jac [][]float64
		if err := json.Unmarshal(outputs[id+1], &jac); err != nil {
			t.Fatalf("ht message %d: output %s", id+1, outputs[id+1])
		}
		rot := angleAxis(htTheta[:3])
		at := func(v, j int) float64 {
			return rot[j][0]*pos[v][0] + rot[j][1]*pos[v][1] + rot[j][2]*pos[v][2] + htTheta[3+j]
		}
		for i, p := range points {
			for j := range 3 {
				want := p[j] - at(corr[i], j)
				if complicated {
					v := tri[corr[i]]
					u := us[i]
					want = p[j] - (u[0]*at(v[0], j) + u[1]*at(v[1], j) + (1-u[0]-u[1])*at(v[2], j))
				}
				if got := obj[3*i+j]; math.Abs(got-want) > 1e-12 {
					t.Errorf("ht objective (complicated %v) %d = %v, want %v", complicated, 3*i+j, got, want)
				}
			}
		}
		cols := 26
		if complicated {
			cols = 28
		}
		if len(jac) != len(obj) || len(jac[0]) != cols {
			t.Fatalf("ht jacobian (complicated %v): %d x %d, want %d x %d", complicated, len(jac), len(jac[0]), len(obj), cols)
		}
		for col := range 28 {
			up, down := vector(id+2+2*col), vector(id+3+2*col)
			c := col - 2 // the column of theta's column - 2 in the simple variant's Jacobian
			if complicated {
				c = col
			}
			for r := range obj {
				want := (up[r] - down[r]) / (2 * htStep)
				if c < 0 {
					continue // us columns exist only in the complicated variant
				}
				if got := jac[r][c]; math.Abs(got-want) > 1e-5*math.Max(1, math.Abs(want)) {
					t.Errorf("ht jacobian (complicated %v) [%d][%d] = %v, want %v (central differences)", complicated, r, c, got, want)
				}
			}
		}
		id += 2 + 2*28
	}
}
