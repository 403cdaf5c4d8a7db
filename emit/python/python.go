// Package pyemit writes the Python bindings of a library that ksc builds
// (`ksc build --python`): a module that loads the library with ctypes and
// describes its functions from the manifest beside it (cemit.Manifest),
// so the module itself is the same for every library but for its name.
package pyemit

import (
	_ "embed"
	"strings"
)

//go:embed module.py
var module string

// Module returns the Python module NAME.py of the library libNAME.so,
// whose manifest is NAME.json.
func Module(name string) string {
	return strings.ReplaceAll(module, "NAME", name)
}

// keywords are Python's keywords (keyword.kwlist of Python 3.11).
var keywords = map[string]bool{
	"False": true, "None": true, "True": true, "and": true, "as": true, "assert": true,
	"async": true, "await": true, "break": true, "class": true, "continue": true,
	"def": true, "del": true, "elif": true, "else": true, "except": true, "finally": true,
	"for": true, "from": true, "global": true, "if": true, "import": true, "in": true,
	"is": true, "lambda": true, "nonlocal": true, "not": true, "or": true, "pass": true,
	"raise": true, "return": true, "try": true, "while": true, "with": true, "yield": true,
}

// IsKeyword reports whether name is a Python keyword, which cannot name a
// module that is imported.
func IsKeyword(name string) bool { return keywords[name] }
