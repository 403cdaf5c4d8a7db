package driver

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	cemit "github.com/ksc-lang/ksc/emit/c"
	"github.com/ksc-lang/ksc/emit/gobind"
	"github.com/ksc-lang/ksc/ir"
)

// BuildLibrary builds DIR/libNAME.so, its header DIR/NAME.h and its
// manifest DIR/NAME.json (cemit.Manifest) from prog (optimised). If emitC
// is not empty the generated C is also written there.
func BuildLibrary(ctx context.Context, prog *ir.Program, name, dir string, cc CC, emitC string) error {
	return BuildLibraryExporting(ctx, prog, name, dir, cc, emitC, nil, nil)
}

// BuildLibraryExporting is BuildLibrary exporting only the entry points
// named in export (cemit.Options.Export), or all if export is empty. The
// C compiler's warnings about the generated code, if any, go to warn
// (when not nil): generated C should draw none, so they show a bug.
func BuildLibraryExporting(ctx context.Context, prog *ir.Program, name, dir string, cc CC, emitC string, export []string, warn func(string)) error {
	if err := cemit.CheckLibraryName(name); err != nil {
		return err
	}
	out, err := EmitC(prog, cemit.Options{Prefix: name, Library: true, Threads: cc.Threads, Export: export})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	src := emitC
	if src == "" {
		tmp, err := os.MkdirTemp("", "ksc-build-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		src = filepath.Join(tmp, name+".c")
	}
	if err := os.WriteFile(src, []byte(out.C), 0o644); err != nil {
		return err
	}
	lib := filepath.Join(dir, "lib"+name+".so")
	warnings, err := cc.CompileC(ctx, src, lib, "-shared", "-fPIC", "-fvisibility=hidden")
	if err != nil {
		return err
	}
	if w := strings.TrimSpace(warnings); w != "" && warn != nil {
		warn(w)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".h"), []byte(out.Header), 0o644); err != nil {
		return fmt.Errorf("writing the header: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".json"), []byte(out.Manifest), 0o644); err != nil {
		return fmt.Errorf("writing the manifest: %w", err)
	}
	return nil
}

// WriteGoBindings writes DIR/NAME.go, the Go bindings of DIR/libNAME.so
// (package gobind), from the manifest DIR/NAME.json beside it.
func WriteGoBindings(dir, name string) error {
	data, err := os.ReadFile(filepath.Join(dir, name+".json"))
	if err != nil {
		return fmt.Errorf("writing the Go bindings: %w", err)
	}
	var m cemit.Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("writing the Go bindings: reading %s.json: %w", name, err)
	}
	src, err := gobind.Package(&m, gobind.PackageName(name))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, name+".go"), src, 0o644); err != nil {
		return fmt.Errorf("writing the Go bindings: %w", err)
	}
	return nil
}
