package main

import (
	"runtime/debug"
	"strings"
)

// version describes this build of ksc from the build information Go
// records: the module's version (a tag, for go install ...@version; or
// "(devel)"), and for a build in a git checkout the commit, its time and
// whether the tree had changes.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := info.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, when, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = ", modified"
			}
		}
	}
	var b strings.Builder
	b.WriteString(v)
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		b.WriteString(" (commit " + rev)
		if when != "" {
			b.WriteString(" of " + when)
		}
		b.WriteString(modified + ")")
	}
	b.WriteString(", " + info.GoVersion)
	return b.String()
}
