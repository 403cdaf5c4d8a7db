package cemit

import (
	"encoding/json"

	"github.com/ksc-lang/ksc/types"
)

// A Manifest describes a library for programs that bind it without
// reading C (the Python bindings of `ksc build --python`, a host's own
// generator): written beside the header as NAME.json. Version changes
// when a field changes meaning.
type Manifest struct {
	Version   int            `json:"ksc_manifest"`
	Library   string         `json:"library"` // the file name, libNAME.so
	Prefix    string         `json:"prefix"`  // NAME: every symbol is NAME_...
	Functions []ManifestFunc `json:"functions"`
}

// A ManifestFunc is one entry point: int Symbol(NAME_ctx *ctx, params...,
// results...), each result a pointer.
type ManifestFunc struct {
	Name    string          `json:"name"`   // Symbol without NAME_: f, rev_f, ...
	Symbol  string          `json:"symbol"` // the C symbol
	KS      string          `json:"ks"`     // the ks function, [rev [f (Vec Float)]]
	Params  []ManifestParam `json:"params"`
	Results []ManifestParam `json:"results"` // result pointers, after the parameters
}

// A ManifestParam is one C parameter of an entry point, or one of its
// result pointers (docs/abi.md, "Functions"). Role is "argument",
// "tangent", "cotangent" or "bog" for a parameter; "value", "tangent",
// "gradient" or "bog" for a result. Of is the position of the argument a
// tangent or gradient belongs to.
type ManifestParam struct {
	Name string        `json:"name"`
	Type *ManifestType `json:"type"`
	Role string        `json:"role"`
	Of   *int          `json:"of,omitempty"`
}

// manifestParam describes a parameter or result pointer.
func (e *emitter) manifestParam(v slot) ManifestParam {
	return ManifestParam{Name: v.name, Type: e.manifestType(v.t), Role: v.role, Of: v.of}
}

// A ManifestType is a ks type and its C layout. Kind is Float (double),
// Integer (int64_t), Bool (bool), String (const char *), Tuple (a struct
// with fields f0, f1, ...; an empty tuple has one char), Tensor (a struct
// { int64_t size; T *data; } for rank 1, { int64_t size[Rank]; T *data; }
// otherwise, elements contiguous in row-major order), Variant (a struct
// { bool isl; union { L l; R r; } u; }) or Opaque (a pointer the host only
// passes back: a BOG).
type ManifestType struct {
	Kind  string          `json:"kind"`
	C     string          `json:"c"`               // the C type's name
	KS    string          `json:"ks"`              // the ks type
	Rank  int             `json:"rank,omitempty"`  // Tensor
	Elem  *ManifestType   `json:"elem,omitempty"`  // Tensor
	Elems []*ManifestType `json:"elems,omitempty"` // Tuple, Variant (left, right)
}

// manifestType describes t, whose C type is declared.
func (e *emitter) manifestType(t *types.Type) *ManifestType {
	m := &ManifestType{C: e.ctype(t), KS: types.Brief(t)}
	switch t.Kind {
	case types.Float:
		m.Kind = "Float"
	case types.Integer:
		m.Kind = "Integer"
	case types.Bool:
		m.Kind = "Bool"
	case types.String:
		m.Kind = "String"
	case types.Tuple, types.Variant:
		m.Kind = "Tuple"
		if t.Kind == types.Variant {
			m.Kind = "Variant"
		}
		m.Elems = []*ManifestType{}
		for _, x := range t.Elems {
			m.Elems = append(m.Elems, e.manifestType(x))
		}
	case types.Tensor:
		m.Kind, m.Rank, m.Elem = "Tensor", t.Rank, e.manifestType(t.Elem)
	case types.Named:
		m.Kind = "Opaque"
	}
	return m
}

// manifestJSON returns the manifest as indented JSON.
func manifestJSON(m *Manifest) string {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		panic(err) // plain data: cannot fail
	}
	return string(b) + "\n"
}
