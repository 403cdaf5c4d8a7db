package ir

// A Failing set holds the functions whose calls may stop with a runtime
// error (MayFail).
type Failing map[*Func]bool

// MayFail returns the functions of funcs whose calls may stop with a
// runtime error: those recursive (the backends check their stack or
// depth), those whose body has an assert or a primitive that is not Pure
// (an index, an allocation, a print), and those that call one of these.
// Edefs cannot fail.
func MayFail(funcs []*Func, recursive map[*Func]bool) Failing {
	fails := Failing{}
	callees := map[*Func][]*Func{}
	for _, f := range funcs {
		if f.Body == nil {
			continue
		}
		if recursive[f] {
			fails[f] = true
		}
		Inspect(f.Body, func(e Expr) bool {
			switch e := e.(type) {
			case *Assert:
				fails[f] = true
			case *Call:
				if e.Prim != nil && !e.Prim.Pure {
					fails[f] = true
				}
				if e.Fn != nil && e.Fn.Body != nil {
					callees[f] = append(callees[f], e.Fn)
				}
			}
			return true
		})
	}
	for changed := true; changed; {
		changed = false
		for _, f := range funcs {
			if fails[f] {
				continue
			}
			for _, g := range callees[f] {
				if fails[g] {
					fails[f], changed = true, true
					break
				}
			}
		}
	}
	return fails
}

// Records reports whether the backends record the call c, made in the
// function caller, in the chain of calls a runtime error's message lists
// (Call.Site): only if the callee may fail, so that the calls of small
// helpers that cannot fail cost nothing inside loops, and not a call of
// the caller itself, so that a tail call stays a loop (a recursion is
// listed once, where it was entered).
func (s Failing) Records(caller *Func, c *Call) bool {
	return c.Fn != caller && s[c.Fn]
}
