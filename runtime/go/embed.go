package ksrt

import (
	_ "embed"
	"strings"
)

//go:embed ksrt.go
var source string

// Source returns the runtime's source as a file of package pkg, to be
// written next to a generated program.
func Source(pkg string) string {
	return strings.Replace(source, "package ksrt", "package "+pkg, 1)
}
