package ir

// Recursive returns the functions of funcs that can call themselves,
// directly or through others of funcs (those in a cycle of the call graph):
// the backends check the stack, or the depth, on entry to these only.
// Calls inside lambdas (loop bodies) count; calls of functions not in
// funcs, or without a body, do not.
func Recursive(funcs []*Func) map[*Func]bool {
	in := make(map[*Func]bool, len(funcs))
	for _, f := range funcs {
		if f.Body != nil {
			in[f] = true
		}
	}
	callees := make(map[*Func][]*Func, len(funcs))
	for f := range in {
		seen := map[*Func]bool{}
		Inspect(f.Body, func(e Expr) bool {
			if c, ok := e.(*Call); ok && c.Fn != nil && in[c.Fn] && !seen[c.Fn] {
				seen[c.Fn] = true
				callees[f] = append(callees[f], c.Fn)
			}
			return true
		})
	}
	// Tarjan's strongly connected components, with an explicit stack so
	// that a long chain of calls cannot overflow Go's.
	type frame struct {
		f *Func
		i int // the next callee to visit
	}
	index := map[*Func]int{}
	low := map[*Func]int{}
	onStack := map[*Func]bool{}
	var stack []*Func
	rec := map[*Func]bool{}
	next := 0
	for _, root := range funcs {
		if !in[root] {
			continue
		}
		if _, done := index[root]; done {
			continue
		}
		work := []frame{{f: root}}
		index[root], low[root] = next, next
		next++
		stack = append(stack, root)
		onStack[root] = true
		for len(work) > 0 {
			top := &work[len(work)-1]
			f := top.f
			if top.i < len(callees[f]) {
				g := callees[f][top.i]
				top.i++
				if _, seen := index[g]; !seen {
					index[g], low[g] = next, next
					next++
					stack = append(stack, g)
					onStack[g] = true
					work = append(work, frame{f: g})
				} else if onStack[g] {
					low[f] = min(low[f], index[g])
				}
				continue
			}
			work = work[:len(work)-1]
			if len(work) > 0 {
				p := work[len(work)-1].f
				low[p] = min(low[p], low[f])
			}
			if low[f] != index[f] {
				continue
			}
			// f is the root of a component: pop it.
			var comp []*Func
			for {
				g := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[g] = false
				comp = append(comp, g)
				if g == f {
					break
				}
			}
			if len(comp) > 1 {
				for _, g := range comp {
					rec[g] = true
				}
				continue
			}
			for _, g := range callees[f] {
				if g == f {
					rec[f] = true
				}
			}
		}
	}
	return rec
}
