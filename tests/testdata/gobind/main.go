// Command main checks the Go bindings (ksc build --go) of
// testdata/python/model.ks, as check.py checks the Python ones: run by
// TestGoBindings in a module where ./model is the library's directory.
// It prints "ok" or the first failed check.
package main

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"sync"

	"gobindtest/model"
)

func check(ok bool, format string, args ...any) {
	if !ok {
		fmt.Printf("FAIL: "+format+"\n", args...)
		os.Exit(1)
	}
}

func main() {
	c, err := model.NewContext()
	check(err == nil, "NewContext: %v", err)
	defer c.Close()

	xs, ys := []float64{0, 1, 2}, []float64{1, 3, 5}
	// loss(1, 0) = 1 + 4 + 9; its gradient by hand: sum 2 r x, sum 2 r, -2 r, 2 a r.
	v, err := c.Loss(1, 0, xs, ys)
	check(err == nil && v == 14, "Loss = %v, %v", v, err)
	ga, gb, gx, gy, err := c.RevLoss(1, 0, xs, ys, 1)
	check(err == nil && ga == -16 && gb == -12 && reflect.DeepEqual(gx, []float64{-2, -4, -6}) && reflect.DeepEqual(gy, []float64{2, 4, 6}),
		"RevLoss = %v %v %v %v, %v", ga, gb, gx, gy, err)
	v, ga, gb, gx, _, err = c.VrevLoss(1, 0, xs, ys, 2)
	check(err == nil && v == 14 && ga == -32 && gb == -24 && reflect.DeepEqual(gx, []float64{-4, -8, -12}), "VrevLoss = %v %v %v %v, %v", v, ga, gb, gx, err)

	// Split reverse mode: a BOG kept until Reset, used twice.
	v, bog, err := c.SuffwdpassLoss(1, 0, xs, ys)
	check(err == nil && v == 14, "SuffwdpassLoss = %v, %v", v, err)
	ga, _, _, _, err = c.SufrevpassLoss(1, bog)
	check(err == nil && ga == -16, "SufrevpassLoss(1) = %v, %v", ga, err)
	ga, _, _, _, err = c.SufrevpassLoss(0.5, bog)
	check(err == nil && ga == -8, "SufrevpassLoss(0.5) = %v, %v", ga, err)
	c.Reset()

	// Arguments large enough to be read in place (pinned) and small enough
	// to be copied, the same sums either way.
	big := make([]float64, 1000)
	bigys := make([]float64, 1000)
	want := 0.0
	for i := range big {
		big[i], bigys[i] = float64(i%7), float64(i%5)
		r := 2*big[i] + 1 - bigys[i]
		want += r * r
	}
	v, err = c.Loss(2, 1, big, bigys)
	check(err == nil && v == want, "Loss of 1000 = %v, %v, want %v", v, err, want)

	// A BOG refers to its call's arguments, here copies of small rows (and
	// the vector of them): they must outlive the call, through other calls
	// that copy arguments, until Reset.
	mat := [][]float64{{1, 2}, {3}, {0.5}, {4, 5, 6}}
	w := []float64{1, -1, 2, 0.5}
	v, rbog, err := c.SuffwdpassRowdot(mat, w)
	check(err == nil && v == 3-3+1+7.5, "SuffwdpassRowdot = %v, %v", v, err)
	for range 100 {
		_, err = c.Loss(1, 0, []float64{9, 9, 9}, []float64{8, 8, 8})
		check(err == nil, "Loss: %v", err)
	}
	dm, dw, err := c.SufrevpassRowdot(1, rbog)
	check(err == nil && reflect.DeepEqual(dm, [][]float64{{1, 1}, {-1}, {2}, {0.5, 0.5, 0.5}}) && reflect.DeepEqual(dw, []float64{3, 3, 0.5, 15}),
		"SufrevpassRowdot = %v %v, %v", dm, dw, err)
	c.Reset()

	// Every kind of value, in and out.
	m, err := c.Scale(2, model.Tensor[float64]{Shape: []int64{3, 2}, Data: []float64{1, 2, 3, 4, 5, 6}})
	check(err == nil && reflect.DeepEqual(m.Shape, []int64{3, 2}) && reflect.DeepEqual(m.Data, []float64{2, 4, 6, 8, 10, 12}), "Scale = %v, %v", m, err)
	rows, err := c.Rows(3)
	check(err == nil && reflect.DeepEqual(rows, [][]float64{{}, {1}, {2, 2}}), "Rows = %v, %v", rows, err)
	both, err := c.Both(true, 41, "héllo")
	check(err == nil && both == model.Tup3BoolI64Str{F0: false, F1: 42, F2: "héllo"}, "Both = %v, %v", both, err)
	counts, err := c.Counts(4)
	check(err == nil && reflect.DeepEqual(counts, []int64{0, 1, 4, 9}), "Counts = %v, %v", counts, err)
	dv, err := c.RevPick([]float64{1, 2}, 1, 3)
	check(err == nil && reflect.DeepEqual(dv, []float64{0, 3}), "RevPick = %v, %v", dv, err)

	// Errors: the library's, with its message; malformed arguments.
	_, err = c.Pick([]float64{1, 2}, 5)
	var e *model.Error
	check(errors.As(err, &e) && e.Code == 1 && strings.Contains(e.Message, "model.ks:15") && strings.Contains(e.Message, "out of range"), "Pick out of range: %v", err)
	_, err = c.Scale(1, model.Tensor[float64]{Shape: []int64{2, 2}, Data: []float64{1}})
	check(errors.As(err, &e) && e.Code == 1, "Scale with a short tensor: %v", err)
	_, err = c.Pick(nil, 0)
	check(errors.As(err, &e) && e.Code == 1 && strings.Contains(e.Message, "out of range"), "Pick of nil: %v", err)
	counts, err = c.Counts(0)
	check(err == nil && len(counts) == 0, "Counts(0) = %v, %v", counts, err)

	// Goroutines: a context each.
	var wg sync.WaitGroup
	out := make([]float64, 4)
	for k := range out {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ck, err := model.NewContext()
			if err != nil {
				return
			}
			defer ck.Close()
			for range 50 {
				out[k], _, _, _, _, _ = ck.VrevLoss(float64(k), 0, xs, ys, 1)
			}
		}()
	}
	wg.Wait()
	check(reflect.DeepEqual(out, []float64{35, 14, 3, 2}), "goroutines: %v", out)
	fmt.Println("ok")
}
