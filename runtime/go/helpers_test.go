package ksrt

import (
	"bufio"
	"io"
)

func newWriter(w io.Writer) *bufio.Writer { return bufio.NewWriter(w) }
