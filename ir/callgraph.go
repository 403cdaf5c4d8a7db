package ir

// SplitCalls says whether reverse mode differentiates a call of g whose
// value the caller reads (or that prints) through g's split passes: the
// caller's forward part runs [suffwdpass g], which returns the value and
// records what the reverse part needs, and the reverse part runs
// [bogrev g] on that record. Otherwise the reverse part runs g's
// accumulating reverse pass [revacc g], which runs g's primal code again:
// at every level of a recursion (quadratic in its depth) and at every
// level of a chain of calls. The derivation (which passes to make) and
// the optimiser (which to call) both read it.
const SplitCalls = true
