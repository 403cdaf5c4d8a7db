// Package cruntime holds the C runtime that generated C includes: the
// context and its arena allocator, runtime errors, integer arithmetic,
// printing and $ranhashdoub (ksc_runtime.h). The emitter pastes it into
// every generated file, so a library is self-contained.
package cruntime

import _ "embed"

// Header is the text of ksc_runtime.h.
//
//go:embed ksc_runtime.h
var Header string
