package tests

import (
	"strconv"
	"strings"
)

func itoa(i int) string { return strconv.Itoa(i) }

// unquote undoes the \" and \\ escapes of a mark's regexp.
func unquote(s string) string {
	return strings.NewReplacer(`\"`, `"`, `\\`, `\`).Replace(s)
}
