package main

import (
	"encoding/json"

	"kscgradbench/hello"
	"kscgradbench/llsq"
	"kscgradbench/lse"
)

// modules makes the module of each eval ksc implements.
var modules = map[string]func() (*module, error){
	"hello": func() (*module, error) {
		c, err := hello.NewContext()
		if err != nil {
			return nil, err
		}
		scalar := func(f func(x float64) (float64, error)) function {
			return func(in json.RawMessage) (func() (any, error), error) {
				var x float64
				if err := json.Unmarshal(in, &x); err != nil {
					return nil, err
				}
				return func() (any, error) { v, err := f(x); return v, err }, nil
			}
		}
		return &module{close: c.Close, funcs: map[string]function{
			"square": scalar(c.Square),
			"double": scalar(func(x float64) (float64, error) { return c.RevSquare(x, 1) }),
		}}, nil
	},
	"lse": func() (*module, error) {
		c, err := lse.NewContext()
		if err != nil {
			return nil, err
		}
		type input struct {
			X []float64 `json:"x"`
		}
		return &module{close: c.Close, funcs: map[string]function{
			"primal":   decode(func(in input) (float64, error) { return c.Lse(in.X) }),
			"gradient": decode(func(in input) ([]float64, error) { return c.RevLse(in.X, 1) }),
		}}, nil
	},
	"llsq": func() (*module, error) {
		c, err := llsq.NewContext()
		if err != nil {
			return nil, err
		}
		type input struct {
			X []float64 `json:"x"`
			N int64     `json:"n"`
		}
		return &module{close: c.Close, funcs: map[string]function{
			"primal":   decode(func(in input) (float64, error) { return c.Llsq(in.X, in.N) }),
			"gradient": decode(func(in input) ([]float64, error) { return c.RevLlsq(in.X, in.N, 1) }),
		}}, nil
	},
}

// decode makes a function of one that takes the input decoded as T.
func decode[T any, R any](f func(T) (R, error)) function {
	return func(raw json.RawMessage) (func() (any, error), error) {
		var in T
		if err := json.Unmarshal(raw, &in); err != nil {
			return nil, err
		}
		return func() (any, error) { v, err := f(in); return v, err }, nil
	}
}
