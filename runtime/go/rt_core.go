// Package ksrt is the runtime of the Go programs that ksc generates
// (emit/go): the context that carries the buffered standard output,
// runtime errors with the messages of the C runtime (runtime/c), integer
// division, the prelude functions that Go's math package lacks,
// allocation and index checks, printing in the formats of the ks language
// (FormatG is C's %g), $ranhashdoub, and the polymorphic operations
// (equality, printing, sums, tangent-space operations) over any ks value.
//
// A generated program is built in a directory of its own, so it cannot
// import this package: the driver writes the source files rt_*.go of this
// package next to the program with the package clause changed (see
// Files). The package is compiled, vetted and tested here like any other.
//
// Values: Float is float64, Integer int64, Bool bool, String string; a
// tuple is a struct with fields F0, F1, ... (unit: a struct without
// fields); a (Vec T) is a []T; a (Tensor N T) with N >= 2 is a Tensor[T],
// its sizes and its elements in row-major order. Values are immutable,
// except that the in-place primitives of derived code ($addTo, $addAt)
// and sums add into tensors that nothing else uses, as in the C backend.
// The polymorphic operations work on such values through reflection, with
// fast paths for Floats and vectors of Floats.
//
// There is no global mutable state: output goes through a *Ctx, and a
// runtime error is a panic with an *Error that Run (or Catch) recovers.
package ksrt

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unsafe"
)

// Ctx is the context of a running ks program: its buffered output, and
// the depth of recursion.
type Ctx struct {
	out   *bufio.Writer
	depth int
	// The chain of calls of ks functions running, for the message of a
	// runtime error: the first MaxCalls of ncalls, outermost first.
	ncalls int
	calls  [MaxCalls]string
}

// MaxCalls is the most calls a runtime error's message lists (KS_CALLS
// in the C runtime).
const MaxCalls = 12

// Call records a call of a ks function about to be made at site,
// "f, called from FILE:LINE:COL"; Return, its return.
func (c *Ctx) Call(site string) {
	if c.ncalls < MaxCalls {
		c.calls[c.ncalls] = site
	}
	c.ncalls++
}

// Return undoes Call.
func (c *Ctx) Return() { c.ncalls-- }

// withCalls returns err with the chain of calls running in c.
func (c *Ctx) withCalls(err *Error) *Error {
	return WithCalls(err, c.calls[:min(c.ncalls, MaxCalls)], c.ncalls)
}

// WithCalls returns err with the chain of n calls that led to it, of
// which recorded are the outermost (at most MaxCalls are listed).
func WithCalls(err *Error, recorded []string, n int) *Error {
	shown := min(len(recorded), MaxCalls)
	e := *err
	e.Deeper = n - shown
	e.Calls = nil
	for i := shown - 1; i >= 0; i-- {
		e.Calls = append(e.Calls, recorded[i])
	}
	return &e
}

// NewCtx returns a context writing to w through a buffer; Flush empties it.
func NewCtx(w io.Writer) *Ctx { return &Ctx{out: bufio.NewWriterSize(w, 1<<16)} }

// MaxDepth is how deep calls of recursive functions may nest before
// Enter fails: Go's goroutine stacks stop at 1 GB, with a fatal error
// that no recover catches, and a frame of generated code is rarely over
// a few hundred bytes. (The C runtime bounds the bytes of stack instead,
// which it can measure.)
const MaxDepth = 1000000

// Enter is called on entry to a recursive function (one in a cycle of
// calls), Leave on its return: beyond MaxDepth nested calls, a runtime
// error at pos, the function's definition, rather than a crash.
func (c *Ctx) Enter(pos, fn string) {
	c.depth++
	if c.depth > MaxDepth {
		c.depth = 0
		Fail(pos, "%s", TooDeep(fn, MaxDepth))
	}
}

// TooDeep is the message of a recursion of fn past max nested calls, the
// same from the Go backend, the evaluator and the CL evaluator (C counts
// bytes of stack instead).
func TooDeep(fn string, max int) string {
	return fmt.Sprintf("recursion too deep in %s: more than %d nested calls", fn, max)
}

// Leave undoes Enter.
func (c *Ctx) Leave() { c.depth-- }

// Flush writes the buffered output.
func (c *Ctx) Flush() error { return c.out.Flush() }

// Error is a runtime error of a ks program: failed assert, index out of
// range, empty sum, size mismatch, integer division by zero...
type Error struct {
	Pos string // the source position, file:line:col
	Msg string
	// Calls are the calls that led there, innermost first, each
	// "f, called from FILE:LINE:COL", after Deeper calls not listed.
	Calls  []string
	Deeper int
}

// Error returns the message as the C runtime prints it:
// "POS: runtime error: MSG", then a line "  in CALL" per call that led
// there, innermost first.
// The message stops before a line that would take it past 1023 bytes
// (the C runtime's limit).
func (e *Error) Error() string {
	msg := e.Pos + ": runtime error: " + e.Msg
	add := func(line string) bool {
		if len(msg)+len(line) > maxMessage {
			return false
		}
		msg += line
		return true
	}
	if e.Deeper > 0 && !add(fmt.Sprintf("\n  (%d calls deeper not shown)", e.Deeper)) {
		return msg
	}
	for _, c := range e.Calls {
		if !add("\n  in " + c) {
			break
		}
	}
	return msg
}

// maxMessage is the longest message the C runtime holds.
const maxMessage = 1023

// Fail stops the program with a runtime error at pos; format and args
// make the message as with fmt.Sprintf.
func Fail(pos, format string, args ...any) {
	panic(&Error{Pos: pos, Msg: fmt.Sprintf(format, args...)})
}

// Catch runs f and returns the runtime error that stopped it, if any.
// Other panics (bugs) go on.
func Catch(f func()) (err *Error) {
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(*Error)
			if !ok {
				panic(r)
			}
			err = e
		}
	}()
	f()
	return nil
}

// Run runs the ks main with its output on stdout and returns the exit
// status: 0, or 1 after a runtime error, whose message goes to stderr on
// one line once the output so far is flushed, or when the output could
// not be written.
func Run(stdout, stderr io.Writer, main func(*Ctx)) int {
	ctx := NewCtx(stdout)
	err := Catch(func() { main(ctx) })
	lost := ctx.Flush()
	if err != nil {
		err = ctx.withCalls(err)
		fmt.Fprintln(stderr, err.Error())
		return 1
	}
	if lost != nil {
		fmt.Fprintf(stderr, "writing the output: %v\n", lost)
		return 1
	}
	return 0
}

// IDiv is integer division, truncating, as the C runtime's ks_idiv.
func IDiv(pos string, a, b int64) int64 {
	q, ok := Quo(a, b)
	if !ok {
		Fail(pos, DivByZero)
	}
	return q
}

// DivByZero is the runtime error of an Integer division by zero.
const DivByZero = "integer division by zero"

// Quo is Integer division: truncating, the most negative Integer over -1
// wrapping to itself; ok is false for a division by zero.
func Quo(a, b int64) (q int64, ok bool) {
	switch b {
	case 0:
		return 0, false
	case -1:
		return -a, true // wraps for the most negative Integer
	}
	return a / b, true
}

// And is `and`: both arguments are evaluated.
func And(a, b bool) bool { return a && b }

// Or is `or`: both arguments are evaluated.
func Or(a, b bool) bool { return a || b }

// BoolToFloat is bool_to_float.
func BoolToFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Max is the first argument unless the second is greater (C's a < b ? b : a).
func Max(a, b float64) float64 {
	if a < b {
		return b
	}
	return a
}

// Ranhashdoub is $ranhashdoub, bit for bit as the C runtime.
func Ranhashdoub(in int64) float64 {
	v := uint64(int64(int32(uint32(in))))
	v = v*3935559000370003845 + 2691343689449507681
	v ^= v >> 21
	v ^= v << 37
	v ^= v >> 4
	v *= 4768777513237032717
	v ^= v << 20
	v ^= v >> 41
	v ^= v << 5
	return 5.42101086242752217e-20 * float64(v)
}

// CheckIndex fails unless 0 <= i < n.
func CheckIndex(pos string, i, n int64) {
	if uint64(i) >= uint64(n) {
		Fail(pos, "index %d out of range for size %d", i, n)
	}
}

// CheckedIndex is $checkIndex: i, failing as CheckIndex does.
func CheckedIndex(pos string, i, n int64) int64 {
	CheckIndex(pos, i, n)
	return i
}

// CheckIndexN fails unless every component of idx is within sizes.
func CheckIndexN(pos string, idx, sizes []int64) {
	for d := range idx {
		if uint64(idx[d]) >= uint64(sizes[d]) {
			Fail(pos, "index (%s) out of range for size (%s)", joinInts(idx), joinInts(sizes))
		}
	}
}

func joinInts(xs []int64) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.FormatInt(x, 10)
	}
	return strings.Join(s, ",")
}

// CheckSameSize fails unless a == b.
func CheckSameSize(pos string, a, b int64) {
	if a != b {
		Fail(pos, "size mismatch: %d and %d", a, b)
	}
}

// Count returns the number of elements of a tensor of the given sizes,
// failing on a negative size or overflow.
func Count(pos string, sizes []int64) int64 {
	n := int64(1)
	for _, s := range sizes {
		if s < 0 {
			Fail(pos, "negative size %d", s)
		}
		if s != 0 && n > math.MaxInt64/s {
			Fail(pos, "tensor too large")
		}
		n *= s
	}
	return n
}

// maxBytes bounds one allocation, so that an absurd size is a runtime
// error, as when the C runtime's allocator fails, rather than a crash of
// the Go runtime.
const maxBytes = 1 << 40

// checkAlloc fails unless n elements of size bytes each can be allocated,
// with the C runtime's messages (for elements of the same size in C).
func checkAlloc(pos string, n int64, size uintptr) {
	if size == 0 || n <= maxBytes/int64(size) {
		return
	}
	// As the C runtime (KS_MAX_COUNT): no more elements than a byte count
	// in a signed pointer difference allows.
	if uint64(n) > math.MaxInt64/uint64(size) {
		Fail(pos, "size %d too large", n)
	}
	bytes := (uint64(n)*uint64(size) + 63) / 64 * 64
	Fail("ksc", "out of memory allocating %d bytes", bytes)
}

// MakeVec allocates a vector of n elements.
func MakeVec[T any](pos string, n int64) []T {
	if n < 0 {
		Fail(pos, "negative size %d", n)
	}
	checkAlloc(pos, n, unsafe.Sizeof(*new(T)))
	return make([]T, n)
}

// Tensor is a tensor of rank 2 or more: its sizes and its elements in
// row-major order.
type Tensor[T any] struct {
	Shape []int64
	Data  []T
}

func (Tensor[T]) isTensor() {}

// MakeTensor allocates a tensor of the given sizes.
func MakeTensor[T any](pos string, sizes ...int64) Tensor[T] {
	n := Count(pos, sizes)
	checkAlloc(pos, n, unsafe.Sizeof(*new(T)))
	return Tensor[T]{Shape: sizes, Data: make([]T, n)}
}
