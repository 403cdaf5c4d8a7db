package tests

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ksc-lang/ksc/cl"
	"github.com/ksc-lang/ksc/derive"
	"github.com/ksc-lang/ksc/driver"
	"github.com/ksc-lang/ksc/ir"
	"github.com/ksc-lang/ksc/types"
)

// The tests of the categorical language CL (package cl) on whole programs:
//
//	TestCLPrograms           every definition of every program converts to CL that
//	                         type-checks and is pruned, prints and parses back to the
//	                         same CL, converts back to IR that passes ir.Check; and
//	                         the CL evaluator runs main as the backends do (stdout
//	                         equals NAME.out)
//	TestCLOptimised          the same after the optimiser
//	TestCLProgramsBackends   every program with each def replaced by [CL f] prints
//	                         NAME.out through both backends; then main calls every
//	                         other function at generated inputs, and prints what
//	                         the CL evaluator computes for f
//	TestCLRuntimeErrors      the evaluator stops the runtime-error programs where
//	                         the backends do
//	TestCLGdef               the programs of testdata/cl, which ask for [CL f] with
//	                         gdef, through `ksc run` with both backends

// defs returns the functions of prog with a body, in order.
func defs(prog *ir.Program) []*ir.Func {
	var out []*ir.Func
	for _, f := range prog.Funcs {
		if f.Body != nil {
			out = append(out, f)
		}
	}
	return out
}

// mainOf returns the program's main.
func mainOf(t *testing.T, prog *ir.Program) *ir.Func {
	t.Helper()
	for _, f := range prog.Funcs {
		if len(f.Name.Derivs) == 0 && f.Name.Base == "main" && f.Body != nil {
			return f
		}
	}
	t.Fatal("no main")
	return nil
}

func TestCLPrograms(t *testing.T) {
	for _, file := range programFiles(t, "programs") {
		name := strings.TrimSuffix(file, ".ks")
		t.Run(filepath.Base(name), func(t *testing.T) {
			t.Parallel()
			want, err := os.ReadFile(name + ".out")
			if err != nil {
				t.Fatal(err)
			}
			prog, err := driver.Load([]string{file}, driver.Typed)
			if err != nil {
				t.Fatal(err)
			}
			checkCL(t, prog)

			var out bytes.Buffer
			if _, err := cl.NewMachine(&out).Call(mainOf(t, prog), cl.TupleValue{}); err != nil {
				t.Fatalf("evaluating the CL of main: %v", err)
			}
			if out.String() != string(want) {
				t.Errorf("the CL evaluator prints\n%s--- want ---\n%s", out.String(), want)
			}
		})
	}
}

// checkCL checks the CL of every definition of prog: it type-checks,
// pruned and unpruned; it is pruned; the evaluator agrees with the
// conversion back, and what it converts back to passes ir.Check as the
// body of the function.
func checkCL(t *testing.T, prog *ir.Program) {
	t.Helper()
	ns := prog.Names()
	bodies := map[*ir.Func]ir.Expr{}
	for _, f := range defs(prog) {
		d, err := cl.Convert(f)
		if err != nil {
			t.Errorf("%s: %v", f.FullName(), err)
			continue
		}
		if err := cl.CheckDef(d); err != nil {
			t.Errorf("%s: the CL does not type-check: %v\n%s", f.FullName(), err, cl.FormatDef(d, nil))
			continue
		}
		if err := cl.CheckPruned(d); err != nil {
			t.Errorf("%s: the CL is not pruned: %v\n%s", f.FullName(), err, cl.FormatDef(d, nil))
		}
		u, err := cl.ConvertUnpruned(f)
		if err == nil {
			err = cl.CheckDef(u)
		}
		if err != nil {
			t.Errorf("%s: unpruned: %v", f.FullName(), err)
		}
		body, err := d.Expr(ns)
		if err != nil {
			t.Errorf("%s: converting back: %v", f.FullName(), err)
			continue
		}
		bodies[f] = body
	}
	// Print the program in CL, parse it back and print it again.
	text, err := cl.Format(prog)
	if err != nil {
		t.Fatalf("printing in CL: %v", err)
	}
	parsed, err := cl.Parse("cl", text, prog)
	if err != nil {
		t.Fatalf("parsing the printed CL: %v\n%s", err, text)
	}
	var again strings.Builder
	for _, d := range parsed {
		again.WriteString(cl.FormatDef(d, cl.Namer(prog)) + "\n")
	}
	if again.String() != string(text) {
		t.Errorf("the printed CL parses to different CL:\n%s", diffText(string(text), again.String()))
	}
	// Check each converted-back body in place of the original.
	for f, body := range bodies {
		saved := f.Body
		f.Body = body
		err := ir.Check(&ir.Program{Funcs: []*ir.Func{f}})
		f.Body = saved
		if err != nil {
			t.Errorf("%s: converted back, the body does not pass ir.Check: %v\n%s", f.FullName(), err, ir.FormatExpr(body))
		}
	}
}

// diffText returns the first line where two texts differ, with its
// neighbours.
func diffText(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(la) && i < len(lb); i++ {
		if la[i] != lb[i] {
			lo := max(0, i-3)
			return "line " + itoa(i+1) + ":\n--- want ---\n" + strings.Join(la[lo:min(len(la), i+3)], "\n") +
				"\n--- got ---\n" + strings.Join(lb[lo:min(len(lb), i+3)], "\n")
		}
	}
	return "the lengths differ"
}

// withCL replaces the body of every def of prog by that of [CL f].
func withCL(t *testing.T, prog *ir.Program) {
	t.Helper()
	ns := prog.Names()
	bodies := map[*ir.Func]ir.Expr{}
	for _, f := range defs(prog) {
		body, err := cl.Derive(f, ns)
		if err != nil {
			t.Fatalf("[CL %s]: %v", f.FullName(), err)
		}
		bodies[f] = body
	}
	for f, body := range bodies {
		f.Body = body
	}
}

func TestCLProgramsBackends(t *testing.T) {
	needCC(t)
	for _, file := range programFiles(t, "programs") {
		name := strings.TrimSuffix(file, ".ks")
		t.Run(filepath.Base(name), func(t *testing.T) {
			t.Parallel()
			out, err := os.ReadFile(name + ".out")
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range []string{"c", "go"} {
				if !wantBackend(b) {
					continue
				}
				prog, err := driver.Load([]string{file}, driver.Typed)
				if err != nil {
					t.Fatal(err)
				}
				main := mainOf(t, prog)
				probeBody, probeOut := probe(t, prog, main)
				withCL(t, prog)
				if probeBody != nil {
					done := &ir.Var{P: main.P, T: types.IntegerType, Name: "main$done"}
					main.Body = ir.MkLet(main.P, done, main.Body, probeBody)
				}
				if err := derive.Derive(prog, derive.Options{}); err != nil {
					t.Fatalf("derive: %v", err)
				}
				r := runLoaded(t, b, prog)
				if r.code != 0 {
					t.Errorf("%s backend: exit status %d, stderr:\n%s", b, r.code, r.stderr)
				}
				if want := string(out) + probeOut; r.stdout != want {
					t.Errorf("%s backend: the output of the program through CL differs\n--- got ---\n%s--- want ---\n%s", b, r.stdout, want)
				}
			}
		})
	}
}

// runLoaded optimises a derived program, builds it with a backend and runs it.
func runLoaded(t *testing.T, backend string, prog *ir.Program) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := driver.Optimise(prog, driver.Options{CheckIR: true}); err != nil {
		t.Fatalf("optimise: %v", err)
	}
	dir := t.TempDir()
	var exe string
	var err error
	switch backend {
	case "c":
		exe, err = buildC(ctx, t, prog, dir, false)
	case "go":
		exe, err = driver.BuildGo(ctx, prog, dir)
	}
	if err != nil {
		t.Fatalf("%s backend: %v", backend, err)
	}
	return runExe(ctx, t, exe)
}

func runExe(ctx context.Context, t *testing.T, exe string, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = append(os.Environ(), "ASAN_OPTIONS=detect_leaks=0:abort_on_error=0", "UBSAN_OPTIONS=print_stacktrace=1")
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running %s: %v", exe, err)
	}
	return result{stdout: stdout.String(), stderr: stderr.String(), code: code}
}

func TestCLRuntimeErrors(t *testing.T) {
	for _, file := range programFiles(t, "runtime") {
		name := strings.TrimSuffix(file, ".ks")
		t.Run(filepath.Base(name), func(t *testing.T) {
			line, re := runtimeMarkOf(t, file)
			wantOut, _ := os.ReadFile(name + ".out")
			prog, err := driver.Load([]string{file}, driver.Typed)
			if err != nil {
				t.Fatal(err)
			}
			if callsDerived(t, file) {
				t.Skip("the CL evaluator does not run derived functions")
			}
			var out bytes.Buffer
			_, err = cl.NewMachine(&out).Call(mainOf(t, prog), cl.TupleValue{})
			var rerr *cl.RuntimeError
			if !errors.As(err, &rerr) {
				t.Fatalf("the CL evaluator returned %v, want a runtime error", err)
			}
			prefix := file + ":" + itoa(line) + ":"
			if msg := err.Error(); !strings.HasPrefix(msg, prefix) || !re.MatchString(msg[len(prefix):]) {
				t.Errorf("error %q, want %s<col>: matching %q", msg, prefix, re)
			}
			if out.String() != string(wantOut) {
				t.Errorf("stdout %q, want %q", out.String(), wantOut)
			}
		})
	}
}

var (
	kscOnce sync.Once
	kscExe  string
	kscErr  error
)

// kscBinary builds the ksc command once.
func kscBinary(t *testing.T) string {
	t.Helper()
	kscOnce.Do(func() {
		dir, err := os.MkdirTemp("", "ksc-cl-test-")
		if err != nil {
			kscErr = err
			return
		}
		kscExe = filepath.Join(dir, "ksc")
		out, err := exec.Command("go", "build", "-o", kscExe, "../cmd/ksc").CombinedOutput()
		if err != nil {
			kscErr = errors.New(string(out))
		}
	})
	if kscErr != nil {
		t.Fatalf("building ksc: %v", kscErr)
	}
	return kscExe
}

func TestCLGdef(t *testing.T) {
	needCC(t)
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	ksc := kscBinary(t)
	for _, file := range programFiles(t, "cl") {
		name := strings.TrimSuffix(file, ".ks")
		t.Run(filepath.Base(name), func(t *testing.T) {
			t.Parallel()
			want, err := os.ReadFile(name + ".out")
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			for _, b := range []string{"c", "go"} {
				if !wantBackend(b) {
					continue
				}
				r := runExe(ctx, t, ksc, "run", "--check-ir", "--backend", b, file)
				if r.code != 0 {
					t.Errorf("ksc run --backend %s: exit status %d, stderr:\n%s", b, r.code, r.stderr)
				}
				if r.stdout != string(want) {
					t.Errorf("ksc run --backend %s: output differs\n--- got ---\n%s--- want ---\n%s", b, r.stdout, want)
				}
			}
		})
	}
}

// probe returns an expression that prints each function of prog but main
// at generated inputs, one line each, and what it prints according to the
// CL evaluator (inputs at which the evaluator stops with an error are left
// out); nil if there is nothing to call.
func probe(t *testing.T, prog *ir.Program, main *ir.Func) (ir.Expr, string) {
	t.Helper()
	var out bytes.Buffer
	m := cl.NewMachine(&out)
	pos := main.P
	var calls []ir.Expr
	for k, f := range defs(prog) {
		if f == main {
			continue
		}
		for n := 0; n < 3; n++ {
			g := &gen{seed: k*7 + n}
			arg, val, ok := g.value(f.Arg)
			if !ok {
				break
			}
			mark := out.Len()
			v, err := m.Call(f, val)
			if err != nil {
				out.Truncate(mark)
				continue
			}
			out.WriteString(cl.FormatValue(v) + "\n")
			args := []ir.Expr{arg}
			if len(f.Params) != 1 {
				args = arg.(*ir.Tuple).Elems
			}
			calls = append(calls, ir.MkPrim(pos, "print", ir.CallFunc(pos, f, args...), &ir.Const{P: pos, T: types.StringType, Val: "\n"}))
		}
	}
	if len(calls) == 0 {
		return nil, ""
	}
	var body ir.Expr = ir.Int(pos, 0)
	for k := len(calls) - 1; k >= 0; k-- {
		v := &ir.Var{P: pos, T: types.IntegerType, Name: "probe$" + itoa(k)}
		body = ir.MkLet(pos, v, calls[k], body)
	}
	return body, out.String()
}

// gen generates inputs: small positive Integers, a few Floats, vectors of
// two or three elements, tuples of such.
type gen struct{ seed int }

func (g *gen) next(n int) int {
	g.seed = (g.seed*1103515245 + 12345) & 0x7fffffff
	return g.seed % n
}

// value returns a value of type t as a constant expression and as a CL
// value; ok is false if t has no generated values.
func (g *gen) value(t *types.Type) (ir.Expr, cl.Value, bool) {
	pos := ir.Pos{}
	switch t.Kind {
	case types.Integer:
		n := int64(1 + g.next(3))
		return ir.Int(pos, n), n, true
	case types.Float:
		x := []float64{0.5, -1.25, 2.0, 3.5, 0.1}[g.next(5)]
		return ir.Float(pos, x), x, true
	case types.Bool:
		b := g.next(2) == 0
		return ir.Bool(pos, b), b, true
	case types.String:
		return &ir.Const{P: pos, T: t, Val: "s"}, "s", true
	case types.Tuple:
		es := make([]ir.Expr, len(t.Elems))
		vs := make(cl.TupleValue, len(t.Elems))
		for i, et := range t.Elems {
			e, v, ok := g.value(et)
			if !ok {
				return nil, nil, false
			}
			es[i], vs[i] = e, v
		}
		return ir.MkTuple(pos, es...), vs, true
	case types.Tensor:
		if t.Rank != 1 {
			return nil, nil, false
		}
		n := 2 + g.next(2)
		es := make([]ir.Expr, n)
		vs := make([]cl.Value, n)
		for i := range es {
			e, v, ok := g.value(t.Elem)
			if !ok {
				return nil, nil, false
			}
			es[i], vs[i] = e, v
		}
		return ir.MkPrim(pos, "Vec_init", es...), cl.Vec(vs...), true
	}
	return nil, nil, false
}

// TestCLOptimised converts every function of each program after the
// optimiser (prelude inlined, A-normal form, derivatives without linear
// maps) to CL, checks it, and runs main with the CL evaluator.
func TestCLOptimised(t *testing.T) {
	files := append(programFiles(t, "programs"), programFiles(t, "cl")...)
	for _, file := range files {
		name := strings.TrimSuffix(file, ".ks")
		t.Run(filepath.Base(name), func(t *testing.T) {
			t.Parallel()
			want, err := os.ReadFile(name + ".out")
			if err != nil {
				t.Fatal(err)
			}
			prog, err := driver.Load([]string{file}, driver.Derived)
			if err != nil {
				t.Fatal(err)
			}
			if err := driver.Optimise(prog, driver.Options{CheckIR: true}); err != nil {
				t.Fatal(err)
			}
			checkCL(t, prog)
			var out bytes.Buffer
			if _, err := cl.NewMachine(&out).Call(mainOf(t, prog), cl.TupleValue{}); err != nil {
				t.Fatalf("evaluating the CL of main: %v", err)
			}
			if out.String() != string(want) {
				t.Errorf("the CL evaluator prints\n%s--- want ---\n%s", out.String(), want)
			}
		})
	}
}
