package tests

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestPrograms runs every program of testdata/programs through each
// backend and compares its output with NAME.out.
func TestPrograms(t *testing.T) {
	needCC(t)
	for _, file := range programFiles(t, "programs") {
		name := strings.TrimSuffix(file, ".ks")
		t.Run(strings.TrimPrefix(name, "testdata/programs/"), func(t *testing.T) {
			t.Parallel()
			want, err := os.ReadFile(name + ".out")
			if err != nil {
				t.Fatalf("missing expected output: %v", err)
			}
			for _, b := range []string{"c", "go"} {
				if !wantBackend(b) {
					continue
				}
				r := runProgram(t, b, file)
				if r.code != 0 {
					t.Errorf("%s backend: exit status %d, stderr:\n%s", b, r.code, r.stderr)
				}
				if r.stdout != string(want) {
					t.Errorf("%s backend: output differs\n--- got ---\n%s--- want ---\n%s", b, r.stdout, want)
				}
			}
		})
	}
}

var runtimeMark = regexp.MustCompile(`; RUNTIME "((?:[^"\\]|\\.)*)"`)

// TestRuntimeErrors runs the programs of testdata/runtime, each of which
// must stop with status 1 and a message naming the marked line.
func TestRuntimeErrors(t *testing.T) {
	needCC(t)
	for _, file := range programFiles(t, "runtime") {
		name := strings.TrimSuffix(file, ".ks")
		t.Run(strings.TrimPrefix(name, "testdata/runtime/"), func(t *testing.T) {
			t.Parallel()
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			line, re := 0, (*regexp.Regexp)(nil)
			for i, l := range strings.Split(string(src), "\n") {
				if m := runtimeMark.FindStringSubmatch(l); m != nil {
					if re != nil {
						t.Fatalf("more than one RUNTIME mark")
					}
					line, re = i+1, regexp.MustCompile(unquote(m[1]))
				}
			}
			if re == nil {
				t.Fatalf("no ; RUNTIME \"regexp\" mark")
			}
			wantOut, _ := os.ReadFile(name + ".out")
			prefix := file + ":" + itoa(line) + ":"
			for _, b := range []string{"c", "go"} {
				if !wantBackend(b) {
					continue
				}
				r := runProgram(t, b, file)
				if r.code != 1 {
					t.Errorf("%s backend: exit status %d, want 1; stderr:\n%s", b, r.code, r.stderr)
				}
				msg := strings.TrimSpace(r.stderr)
				if !strings.HasPrefix(msg, prefix) || !re.MatchString(msg[len(prefix):]) {
					t.Errorf("%s backend: stderr %q, want %s<col>: matching %q", b, msg, prefix, re)
				}
				if strings.Contains(msg, "\n") {
					t.Errorf("%s backend: more than one line on stderr:\n%s", b, msg)
				}
				if r.stdout != string(wantOut) {
					t.Errorf("%s backend: stdout %q, want %q", b, r.stdout, wantOut)
				}
			}
		})
	}
}
