package ir

// SplitRecursiveCalls says whether reverse mode differentiates a call of a
// recursive function through that function's split passes ([suffwdpass g]
// then [bogrev g]) instead of its accumulating reverse pass [revacc g],
// which re-runs g's primal code at every level of the recursion. The
// derivation (which passes to make) and the optimiser (which to call) both
// read it.
const SplitRecursiveCalls = true

// Recursive returns the functions of p with bodies that can call
// themselves, directly or through other functions (those on a cycle of
// the call graph). Differentiating a call of one of them must not re-run
// its primal code inside its derivative: the recursion is as deep as the
// input says, so recomputing at every level is quadratic.
func Recursive(p *Program) map[*Func]bool {
	// Tarjan's strongly connected components.
	index := map[*Func]int{}
	low := map[*Func]int{}
	onStack := map[*Func]bool{}
	var stack []*Func
	out := map[*Func]bool{}
	next := 0
	var visit func(f *Func)
	visit = func(f *Func) {
		index[f], low[f] = next, next
		next++
		stack = append(stack, f)
		onStack[f] = true
		self := false
		Inspect(f.Body, func(e Expr) bool {
			c, ok := e.(*Call)
			if !ok || c.Fn == nil || c.Fn.Body == nil {
				return true
			}
			g := c.Fn
			if g == f {
				self = true
			}
			if _, seen := index[g]; !seen {
				visit(g)
				low[f] = min(low[f], low[g])
			} else if onStack[g] {
				low[f] = min(low[f], index[g])
			}
			return true
		})
		if low[f] != index[f] {
			return
		}
		var scc []*Func
		for {
			g := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			onStack[g] = false
			scc = append(scc, g)
			if g == f {
				break
			}
		}
		if len(scc) > 1 || self {
			for _, g := range scc {
				out[g] = true
			}
		}
	}
	for _, f := range p.Funcs {
		if _, seen := index[f]; !seen && f.Body != nil {
			visit(f)
		}
	}
	return out
}
