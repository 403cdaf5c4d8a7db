package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestSession builds ksc-gradbench and runs the session of
// testdata/session.jsonl through it, checking each response against
// values computed here, in Go, from the evals' definitions (GradBench's
// READMEs), not from ks: hello's square and its derivative, lse and its
// gradient (the softmax) on an input whose exp would overflow, llsq and its
// gradient by the sum of powers; an unknown module and function are
// errors, and min_runs runs are timed.
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
	if len(rs) != 13 {
		t.Fatalf("%d responses, want 13:\n%s", len(rs), out)
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
	for _, id := range []int{1, 5, 8} {
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

	for _, id := range []int{11, 12} {
		if r := rs[id]; r.Success == nil || *r.Success || r.Error == "" {
			t.Errorf("message %d: %+v, want an error", id, r)
		}
	}
}
