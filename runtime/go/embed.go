package ksrt

import (
	"embed"
	"io/fs"
	"regexp"
	"sort"
)

//go:embed rt_*.go
var sources embed.FS

var packageClause = regexp.MustCompile(`(?m)^package ksrt$`)

// A File is a source file of the runtime, to be written next to a
// generated program.
type File struct {
	Name string
	Text []byte
}

// Files returns the runtime's source files (rt_*.go, without tests) as
// files of package pkg, in name order.
func Files(pkg string) []File {
	names, err := fs.Glob(sources, "rt_*.go")
	if err != nil {
		panic(err) // the pattern is valid
	}
	sort.Strings(names)
	out := make([]File, 0, len(names))
	for _, n := range names {
		text, err := sources.ReadFile(n)
		if err != nil {
			panic(err) // embedded files can be read
		}
		text = packageClause.ReplaceAll(text, []byte("package "+pkg))
		out = append(out, File{Name: n, Text: text})
	}
	return out
}
