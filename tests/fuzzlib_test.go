package tests

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The error codes of a library (NAME_OK, ...).
const (
	libOK      = 0
	libRuntime = 1
	libMemory  = 2
)

// A fuzzHost is testdata/fuzzlib/host.c running: it answers requests to
// the library built from testdata/fuzzlib/model.ks, both built with the
// sanitizers. One serves every input of a fuzzing process.
type fuzzHost struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr strings.Builder
}

var (
	fuzzHostOnce sync.Once
	theFuzzHost  *fuzzHost
	fuzzHostErr  error
)

func startFuzzHost(t *testing.T) *fuzzHost {
	needCC(t)
	fuzzHostOnce.Do(func() {
		tmp, err := os.MkdirTemp("", "ksc-fuzzlib-")
		if err != nil {
			fuzzHostErr = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		exe := buildHost(ctx, t, tmp, "fuzzlib", "model", sanFlags...)
		h := &fuzzHost{cmd: exec.Command(exe)}
		// The limits of a request come from the library (max_bytes), not
		// from the sanitizer's allocator.
		h.cmd.Env = append(os.Environ(), "ASAN_OPTIONS=detect_leaks=0")
		h.cmd.Stderr = &h.stderr
		if h.in, err = h.cmd.StdinPipe(); err != nil {
			fuzzHostErr = err
			return
		}
		stdout, err := h.cmd.StdoutPipe()
		if err != nil {
			fuzzHostErr = err
			return
		}
		h.out = bufio.NewReader(stdout)
		if err := h.cmd.Start(); err != nil {
			fuzzHostErr = err
			return
		}
		// Once the host answers, it has loaded the library, and its
		// directory can go (the process keeps its files open).
		_, err = fmt.Fprintf(h.in, "6 0 0 0\n")
		if err == nil {
			_, err = h.out.ReadString('\n')
		}
		os.RemoveAll(tmp)
		if err != nil {
			fuzzHostErr = fmt.Errorf("the fuzz host does not answer: %v; stderr:\n%s", err, h.stderr.String())
			return
		}
		theFuzzHost = h
	})
	if fuzzHostErr != nil {
		t.Fatal(fuzzHostErr)
	}
	if theFuzzHost == nil {
		t.Fatal("the fuzz host did not start")
	}
	return theFuzzHost
}

// request sends one request and returns the answer: the error code and
// the value.
func (h *fuzzHost) request(t *testing.T, op uint8, a, b, c int64) (int, float64) {
	t.Helper()
	if _, err := fmt.Fprintf(h.in, "%d %d %d %d\n", op, a, b, c); err != nil {
		t.Fatalf("request %d %d %d %d: writing: %v (host stderr:\n%s)", op, a, b, c, err, h.stderr.String())
	}
	type answer struct {
		line string
		err  error
	}
	ch := make(chan answer, 1)
	go func() {
		l, err := h.out.ReadString('\n')
		ch <- answer{l, err}
	}()
	select {
	case ans := <-ch:
		if ans.err != nil {
			h.cmd.Wait()
			t.Fatalf("request %d %d %d %d: the host died (%v); stderr:\n%s", op, a, b, c, h.cmd.ProcessState, h.stderr.String())
		}
		f := strings.Fields(ans.line)
		if len(f) != 2 {
			t.Fatalf("request %d %d %d %d: answer %q", op, a, b, c, ans.line)
		}
		rc, err1 := strconv.Atoi(f[0])
		v, err2 := strconv.ParseFloat(f[1], 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("request %d %d %d %d: answer %q", op, a, b, c, ans.line)
		}
		return rc, v
	case <-time.After(time.Minute):
		h.cmd.Process.Kill()
		t.Fatalf("request %d %d %d %d: no answer in a minute", op, a, b, c)
	}
	return 0, 0
}

// fuzzMaxReal is host.c's MAXREAL: a vector of at most that many elements
// has real memory; a larger one has NULL data.
const fuzzMaxReal = 4096

// FuzzLibrary feeds random sizes, indices and recursion depths to a
// library built with the sanitizers, through testdata/fuzzlib/host.c,
// and checks each answer against what the request must give: a result
// (and its value) or an error code, never a crash, a sanitizer report or
// a hang. go test runs the seeds; go test -fuzz FuzzLibrary runs more.
func FuzzLibrary(f *testing.F) {
	for _, s := range [][4]int64{
		{0, 10, 0, 0}, {0, -1, 0, 0}, {0, 1 << 61, 0, 0}, {0, 1<<61 - 1, 0, 0}, {0, 1<<60 + 1, 0, 0}, {0, 9_000_000, 0, 0},
		{1, 100, 0, 0}, {1, -5, 0, 0}, {1, math.MaxInt64, 0, 0},
		{2, 5, 3, 0}, {2, 5, 5, 0}, {2, 5, -1, 0}, {2, -1, 0, 0}, {2, 5000, 1, 0}, {2, math.MinInt64, 0, 0},
		{3, 3, 4, 2}, {3, 3, 4, 3}, {3, -3, 4, 0}, {3, 1 << 32, 1 << 32, 0}, {3, 1 << 40, 0, 0}, {3, 0, 1 << 40, 0},
		{4, 0, 0, 0}, {4, 10, 0, 0}, {4, -7, 0, 0},
		{5, 10, 3, 0}, {5, 0, 1, 0}, {5, 1 << 50, 1, 0},
		{6, 100, 0, 0}, {6, -1, 0, 0}, {6, 100_000_000, 0, 0},
		{7, 100, 0, 0}, {7, 100_000_000, 0, 0}, {7, -2, 0, 0},
	} {
		f.Add(uint8(s[0]), s[1], s[2], s[3])
	}
	f.Fuzz(func(t *testing.T, op uint8, a, b, c int64) {
		op %= 8
		h := startFuzzHost(t)
		rc, v := h.request(t, op, a, b, c)
		want, value, exact := fuzzExpect(op, a, b, c)
		ok := false
		for _, w := range want {
			ok = ok || rc == w
		}
		if !ok {
			t.Fatalf("request %d %d %d %d: error code %d, want one of %v (host stderr:\n%s)", op, a, b, c, rc, want, h.stderr.String())
		}
		if rc == libOK && exact && math.Abs(v-value) > 1e-9*math.Max(1, math.Abs(value)) {
			t.Fatalf("request %d %d %d %d: value %g, want %g", op, a, b, c, v, value)
		}
	})
}

// fuzzExpect returns the error codes a request may give and, for
// libOK, its value (exact says whether the value is known).
func fuzzExpect(op uint8, a, b, c int64) (codes []int, value float64, exact bool) {
	realVec := a >= 0 && a <= fuzzMaxReal
	// A malformed argument is ERR_RUNTIME, or ERR_MEMORY when its sizes
	// multiply past what can be addressed.
	bad := []int{libRuntime, libMemory}
	elem := func(k int64) float64 { return 0.5 * float64(k) }
	// A vector of n doubles fits the host's limit of 64 MiB when n is at
	// most 8 Mi; near it, the rounding of allocations decides.
	size := func(n int64) []int {
		switch {
		case n < 0:
			return []int{libRuntime}
		case n <= 8_000_000:
			return []int{libOK}
		case n <= 8_400_000:
			return []int{libOK, libMemory}
		}
		return []int{libMemory}
	}
	switch op {
	case 0: // make a
		return size(a), 0.5 * float64(a) * float64(a-1) / 2, a <= 8_400_000
	case 1: // fill a 2.0
		return size(a), 2 * float64(a), true
	case 2: // pick (vec a) b
		if !realVec {
			return bad, 0, false
		}
		if b < 0 || b >= a {
			return []int{libRuntime}, 0, false
		}
		return []int{libOK}, elem(b), true
	case 3: // pick2 (a x b matrix) c c/2
		real := a >= 0 && b >= 0 && (b == 0 || a <= fuzzMaxReal/b)
		if !real {
			return bad, 0, false
		}
		if c < 0 || c >= a || c/2 >= b {
			return []int{libRuntime}, 0, false
		}
		return []int{libOK}, elem(c*b + c/2), true
	case 4: // total (vec a)
		if !realVec {
			return bad, 0, false
		}
		if a == 0 {
			return []int{libRuntime}, 0, false
		}
		return []int{libOK}, 0.5 * float64(a) * float64(a-1) / 2, true
	case 5: // [rev total] (vec a) b
		if !realVec {
			return bad, 0, false
		}
		if a == 0 {
			return []int{libOK, libRuntime}, 0, false
		}
		return []int{libOK}, float64(a) * float64(b), true
	case 6, 7: // depth a 1.0, [sufrev depth]
		switch {
		case a < 0:
			return []int{libRuntime}, 0, false
		case a <= 1000:
			return []int{libOK}, float64(a) + 1, true
		}
		return []int{libOK, libMemory}, float64(a) + 1, true
	}
	return nil, 0, false
}
