// Command ksc-gradbench is a GradBench tool (github.com/gradbench/gradbench):
// it speaks GradBench's protocol, one JSON message a line on stdin and a
// response a line on stdout, and evaluates each eval's functions with the
// library ksc builds from ../evals/NAME.ks, called through the Go bindings
// of `ksc build --go` in the package ./NAME. It is built, bindings and
// all, by `go run ./bench/gradbench -o DIR` from the ksc repository.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// A message is what an eval sends.
type message struct {
	ID       int64           `json:"id"`
	Kind     string          `json:"kind"`
	Module   string          `json:"module"`
	Function string          `json:"function"`
	Input    json.RawMessage `json:"input"`
}

type timing struct {
	Name        string `json:"name"`
	Nanoseconds int64  `json:"nanoseconds"`
}

// A response is what the tool answers: only the id, but for define and
// evaluate.
type response struct {
	ID      int64    `json:"id"`
	Tool    string   `json:"tool,omitempty"`
	Success *bool    `json:"success,omitempty"`
	Output  any      `json:"output,omitempty"`
	Timings []timing `json:"timings,omitempty"`
	Error   string   `json:"error,omitempty"`
}

// A function prepares one evaluation: it decodes the input and returns
// what computes the output, run as many times as the eval asks.
type function func(input json.RawMessage) (func() (any, error), error)

// A module is an eval's functions, with the library context they use.
type module struct {
	funcs map[string]function
	close func()
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<30) // inputs can be large
	out := json.NewEncoder(os.Stdout)
	defined := map[string]*module{}
	defer func() {
		for _, m := range defined {
			m.close()
		}
	}()
	for in.Scan() {
		var msg message
		if err := json.Unmarshal(in.Bytes(), &msg); err != nil {
			fmt.Fprintf(os.Stderr, "ksc-gradbench: %v\n", err)
			os.Exit(1)
		}
		r := response{ID: msg.ID}
		switch msg.Kind {
		case "start":
			r.Tool = "ksc"
		case "define":
			m, err := define(msg.Module)
			r.Success = ptr(err == nil)
			if err != nil {
				r.Error = err.Error()
			} else {
				defined[msg.Module] = m
			}
		case "evaluate":
			r.Output, r.Timings, r.Error = evaluate(defined[msg.Module], msg)
			r.Success = ptr(r.Error == "")
		}
		if err := out.Encode(r); err != nil {
			fmt.Fprintf(os.Stderr, "ksc-gradbench: %v\n", err)
			os.Exit(1)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintf(os.Stderr, "ksc-gradbench: %v\n", err)
		os.Exit(1)
	}
}

func ptr(b bool) *bool { return &b }

// define returns the module of an eval, or an error if there is none.
func define(name string) (*module, error) {
	mk, ok := modules[name]
	if !ok {
		return nil, fmt.Errorf("ksc-gradbench has no module %q", name)
	}
	return mk()
}

// evaluate runs a function of m on the message's input at least min_runs
// times and for at least min_seconds (if the input says), and returns the
// output of the last run and the time of each.
func evaluate(m *module, msg message) (any, []timing, string) {
	if m == nil {
		return nil, nil, fmt.Sprintf("module %q is not defined", msg.Module)
	}
	f, ok := m.funcs[msg.Function]
	if !ok {
		return nil, nil, fmt.Sprintf("module %s has no function %q", msg.Module, msg.Function)
	}
	var runs struct {
		MinRuns    int     `json:"min_runs"`
		MinSeconds float64 `json:"min_seconds"`
	}
	_ = json.Unmarshal(msg.Input, &runs) // absent (hello): one run
	run, err := f(msg.Input)
	if err != nil {
		return nil, nil, fmt.Sprintf("the input of %s.%s: %v", msg.Module, msg.Function, err)
	}
	var out any
	var timings []timing
	var total time.Duration
	for i := 0; i < max(runs.MinRuns, 1) || total.Seconds() < runs.MinSeconds; i++ {
		start := time.Now()
		out, err = run()
		d := time.Since(start)
		if err != nil {
			return nil, timings, err.Error()
		}
		timings = append(timings, timing{Name: "evaluate", Nanoseconds: d.Nanoseconds()})
		total += d
	}
	return out, timings, ""
}
