//go:build linux

package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

const messy = "(def   f Float ( x : Float )\n   (add x\n 1.0))\n"

// TestFmtWriteKeepsFile: ksc fmt -w replaces a file's contents, keeping
// its permissions, through a link to it, leaving no temporary file.
func TestFmtWriteKeepsFile(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "f.ks")
	if err := os.WriteFile(f, []byte(messy), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.ks")
	if err := os.Symlink(f, link); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := ksc(t, "fmt", "-w", link); code != 0 {
		t.Fatalf("ksc fmt -w: status %d: %s", code, stderr)
	}
	b, _ := os.ReadFile(f)
	fi, _ := os.Stat(f)
	li, _ := os.Lstat(link)
	if string(b) != "(def f Float (x : Float) (add x 1.0))\n" || fi.Mode().Perm() != 0o600 || li.Mode()&os.ModeSymlink == 0 {
		t.Errorf("after ksc fmt -w: %q, mode %v, link mode %v", b, fi.Mode(), li.Mode())
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("the directory holds %d entries, want 2 (a temporary file left?)", len(ents))
	}
}

// TestFmtWriteFails: when the disk cannot take the formatted file (here a
// file size limit, as a full disk would), ksc fmt -w fails and the file
// keeps its contents.
func TestFmtWriteFails(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "f.ks")
	if err := os.WriteFile(f, []byte(messy), 0o644); err != nil {
		t.Fatal(err)
	}
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Skip(err)
	}
	signal.Ignore(syscall.SIGXFSZ) // a write over the limit then fails with EFBIG
	defer signal.Reset(syscall.SIGXFSZ)
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: 10, Max: old.Max}); err != nil {
		t.Skip(err)
	}
	_, stderr, code := ksc(t, "fmt", "-w", f)
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	if code != exitProgram || !strings.Contains(stderr, "the file is unchanged") {
		t.Errorf("ksc fmt -w over the limit: status %d, %q", code, stderr)
	}
	if b, _ := os.ReadFile(f); string(b) != messy {
		t.Errorf("the file became %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("the directory holds %d entries, want 1 (a temporary file left?)", len(ents))
	}
}

// failingWriter fails every write, as standard output to a full disk does.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// TestOutputWriteFails: ksc fmt and ksc emit whose output cannot be written
// fail with a message, instead of exiting 0.
func TestOutputWriteFails(t *testing.T) {
	f := write(t, "f.ks", messy)
	for _, args := range [][]string{{"fmt", f}, {"emit", "--stage", "typed", f}} {
		var stderr bytes.Buffer
		code := run(context.Background(), append([]string{"ksc"}, args...), failingWriter{}, &stderr)
		if code != exitProgram || !strings.Contains(stderr.String(), "no space left on device") {
			t.Errorf("ksc %v to a full disk: status %d, %q", args, code, stderr.String())
		}
	}
}

// TestRunOutputLost: a program whose output cannot be written (standard
// output on a full disk: /dev/full) exits 1 with a message, on both
// backends, instead of 0.
func TestRunOutputLost(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip(err)
	}
	defer full.Close()
	f := write(t, "hello.ks", `(def main Integer () (print "hello\n"))`)
	for _, backend := range []string{"c", "go"} {
		if backend == "c" {
			needCC(t)
		} else if _, err := exec.LookPath("go"); err != nil {
			continue
		}
		var stderr bytes.Buffer
		code := run(context.Background(), []string{"ksc", "run", "--backend", backend, f}, full, &stderr)
		if code != 1 || !strings.Contains(stderr.String(), "writing the output") {
			t.Errorf("--backend %s to /dev/full: status %d, %q", backend, code, stderr.String())
		}
	}
}

// TestEndlessSource: a source that never ends (/dev/zero) is an error once
// ksc has read driver.MaxSourceBytes, for check and fmt alike.
func TestEndlessSource(t *testing.T) {
	for _, cmd := range []string{"check", "fmt"} {
		_, stderr, code := ksc(t, cmd, "/dev/zero")
		if code != exitProgram || !strings.Contains(stderr, "/dev/zero: larger than 64 MiB") {
			t.Errorf("ksc %s /dev/zero: status %d, %q", cmd, code, stderr)
		}
	}
}

// TestHugeSizes: a build or constVec whose byte count would overflow is a
// positioned runtime error on both backends, not a heap overflow, a hang
// or a wrapped allocation.
func TestHugeSizes(t *testing.T) {
	for _, n := range []string{"2305843009213693951", "1152921504606846977"} {
		for _, e := range []string{"(build " + n + " (lam (i : Integer) 1.0))", "(constVec " + n + " 1.0)"} {
			f := write(t, "huge.ks", "(def main Integer ()\n  (let (v "+e+")\n    (print (index 5 v) \"\\n\")))\n")
			for _, backend := range []string{"c", "go"} {
				if backend == "c" {
					needCC(t)
				} else if _, err := exec.LookPath("go"); err != nil {
					continue
				}
				_, stderr, code := ksc(t, "run", "--backend", backend, f)
				if code != 1 || !strings.Contains(stderr, "huge.ks:2:11: runtime error: size "+n+" too large") {
					t.Errorf("--backend %s, %s: status %d, %q", backend, e, code, stderr)
				}
			}
		}
	}
}
