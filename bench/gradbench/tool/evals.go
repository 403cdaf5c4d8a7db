package main

import (
	"encoding/json"
	"os"

	"kscgradbench/ba"
	"kscgradbench/det"
	"kscgradbench/gmm"
	"kscgradbench/hello"
	"kscgradbench/ht"
	"kscgradbench/kmeans"
	"kscgradbench/llsq"
	"kscgradbench/lse"
	"kscgradbench/lstm"
	"kscgradbench/ode"
	"kscgradbench/particle"
	"kscgradbench/saddle"
)

// modules makes the module of each eval ksc implements.
var modules = map[string]func() (*module, error){
	"hello": func() (*module, error) {
		return open(hello.NewContext, func(c *hello.Context) map[string]function {
			scalar := func(f func(x float64) (float64, error)) function {
				return func(in json.RawMessage) (func() (any, error), error) {
					var x float64
					if err := json.Unmarshal(in, &x); err != nil {
						return nil, err
					}
					return func() (any, error) { v, err := f(x); return v, err }, nil
				}
			}
			return map[string]function{
				"square": scalar(c.Square),
				"double": scalar(func(x float64) (float64, error) { return c.RevSquare(x, 1) }),
			}
		})
	},
	"lse": func() (*module, error) {
		return open(lse.NewContext, func(c *lse.Context) map[string]function {
			type input struct {
				X []float64 `json:"x"`
			}
			return map[string]function{
				"primal":   decode(func(in input) (float64, error) { return c.Lse(in.X) }),
				"gradient": decode(func(in input) ([]float64, error) { return c.RevLse(in.X, 1) }),
			}
		})
	},
	"llsq": func() (*module, error) {
		return open(llsq.NewContext, func(c *llsq.Context) map[string]function {
			type input struct {
				X []float64 `json:"x"`
				N int64     `json:"n"`
			}
			return map[string]function{
				"primal":   decode(func(in input) (float64, error) { return c.Llsq(in.X, in.N) }),
				"gradient": decode(func(in input) ([]float64, error) { return c.RevLlsq(in.X, in.N, 1) }),
			}
		})
	},
	"det": func() (*module, error) {
		return open(det.NewContext, func(c *det.Context) map[string]function {
			type input struct {
				A   []float64 `json:"A"`
				Ell int64     `json:"ell"`
			}
			return map[string]function{
				"primal":   decode(func(in input) (float64, error) { return c.Det(in.A, in.Ell) }),
				"gradient": decode(func(in input) ([]float64, error) { return c.RevDet(in.A, in.Ell, 1) }),
			}
		})
	},
	"gmm": func() (*module, error) {
		return open(gmm.NewContext, func(c *gmm.Context) map[string]function {
			type input struct {
				Alpha []float64   `json:"alpha"`
				Mu    [][]float64 `json:"mu"`
				Q     [][]float64 `json:"q"`
				L     [][]float64 `json:"l"`
				X     [][]float64 `json:"x"`
				Gamma float64     `json:"gamma"`
				M     int64       `json:"m"`
			}
			type independent struct {
				Alpha []float64   `json:"alpha"`
				Mu    [][]float64 `json:"mu"`
				Q     [][]float64 `json:"q"`
				L     [][]float64 `json:"l"`
			}
			return map[string]function{
				"objective": decode(func(in input) (float64, error) {
					return c.GmmObjective(in.Alpha, in.Mu, in.Q, in.L, in.X, in.Gamma, in.M)
				}),
				"jacobian": decode(func(in input) (independent, error) {
					var g independent
					var err error
					g.Alpha, g.Mu, g.Q, g.L, err = c.RevGmmObjectiveWrt0123(in.Alpha, in.Mu, in.Q, in.L, in.X, in.Gamma, in.M, 1)
					return g, err
				}),
			}
		})
	},
	"ode": func() (*module, error) {
		return open(ode.NewContext, func(c *ode.Context) map[string]function {
			type input struct {
				X []float64 `json:"x"`
				S int64     `json:"s"`
			}
			return map[string]function{
				"primal":   decode(func(in input) ([]float64, error) { return c.Ode(in.X, in.S) }),
				"gradient": decode(func(in input) ([]float64, error) { return c.RevOdeLast(in.X, in.S, 1) }),
			}
		})
	},
	"lstm": func() (*module, error) {
		return open(lstm.NewContext, func(c *lstm.Context) map[string]function {
			type input struct {
				Main     [][]float64 `json:"main_params"`
				Extra    [][]float64 `json:"extra_params"`
				State    [][]float64 `json:"state"`
				Sequence [][]float64 `json:"sequence"`
			}
			return map[string]function{
				"objective": decode(func(in input) (float64, error) {
					return c.LstmObjective(in.Main, in.Extra, in.State, in.Sequence)
				}),
				"jacobian": decode(func(in input) ([]float64, error) {
					dmain, dextra, err := c.RevLstmObjectiveWrt01(in.Main, in.Extra, in.State, in.Sequence, 1)
					var flat []float64
					for _, rows := range [][][]float64{dmain, dextra} {
						for _, r := range rows {
							flat = append(flat, r...)
						}
					}
					return flat, err
				}),
			}
		})
	},
	"ba": func() (*module, error) {
		return open(ba.NewContext, func(c *ba.Context) map[string]function {
			return map[string]function{
				"objective": baFunction(func(in *baInput) (any, error) {
					r, err := c.BaObjective(in.cams, in.xs, in.ws, in.camIdx, in.ptIdx, in.feats)
					if err != nil {
						return nil, err
					}
					reproj, werr := r.F0, r.F1
					type repeated struct {
						Elements []float64 `json:"elements"`
						Repeated int       `json:"repeated"`
					}
					type element struct {
						Element  float64 `json:"element"`
						Repeated int     `json:"repeated"`
					}
					return struct {
						Reproj repeated `json:"reproj_error"`
						W      element  `json:"w_err"`
					}{repeated{reproj[:2], len(reproj) / 2}, element{werr[0], len(werr)}}, nil
				}),
				"jacobian": baFunction(func(in *baInput) (any, error) {
					jacobian := c.BaJacobian
					if os.Getenv("KSC_BA_JACOBIAN") == "sparse" {
						// By [sparsejac] of the whole objective (ba.ks).
						jacobian = c.BaJacobianSparse
					}
					j, err := jacobian(in.cams, in.xs, in.ws, in.camIdx, in.ptIdx, in.feats)
					if err != nil {
						return nil, err
					}
					rows, cols, vals := j.F0, j.F1, j.F2
					// GradBench takes the first 30 entries of each list
					// and the last.
					return struct {
						Rows []int64   `json:"rows"`
						Cols []int64   `json:"cols"`
						Vals []float64 `json:"vals"`
					}{firstAndLast(rows), firstAndLast(cols), firstAndLast(vals)}, nil
				}),
			}
		})
	},
	"kmeans": func() (*module, error) {
		return open(kmeans.NewContext, func(c *kmeans.Context) map[string]function {
			type input struct {
				Points    [][]float64 `json:"points"`
				Centroids [][]float64 `json:"centroids"`
			}
			return map[string]function{
				"cost": decode(func(in input) (float64, error) { return c.Cost(in.Points, in.Centroids) }),
				"dir":  decode(func(in input) ([][]float64, error) { return c.Dir(in.Points, in.Centroids) }),
			}
		})
	},
	"saddle": func() (*module, error) {
		return open(saddle.NewContext, func(c *saddle.Context) map[string]function {
			type input struct {
				Start []float64 `json:"start"`
			}
			// The variants name the outer and inner modes: f forward (1),
			// r reverse (0).
			variant := func(outer, inner int64) function {
				return decode(func(in input) ([]float64, error) { return c.Saddle(outer, inner, in.Start) })
			}
			return map[string]function{"ff": variant(1, 1), "fr": variant(1, 0), "rr": variant(0, 0), "rf": variant(0, 1)}
		})
	},
	"particle": func() (*module, error) {
		return open(particle.NewContext, func(c *particle.Context) map[string]function {
			type input struct {
				W float64 `json:"w"`
			}
			// As saddle's: f forward (1), r reverse (0), outer then inner.
			variant := func(outer, inner int64) function {
				return decode(func(in input) (float64, error) { return c.Particle(outer, inner, in.W) })
			}
			return map[string]function{"ff": variant(1, 1), "fr": variant(1, 0), "rr": variant(0, 0), "rf": variant(0, 1)}
		})
	},
	"ht": func() (*module, error) {
		return open(ht.NewContext, func(c *ht.Context) map[string]function {
			type model struct {
				Parents              []int64       `json:"parents"`
				BaseRelatives        [][][]float64 `json:"base_relatives"`
				InverseBaseAbsolutes [][][]float64 `json:"inverse_base_absolutes"`
				BasePositions        [][]float64   `json:"base_positions"`
				Weights              [][]float64   `json:"weights"`
				Triangles            [][]int64     `json:"triangles"`
				IsMirrored           bool          `json:"is_mirrored"`
			}
			type input struct {
				Theta []float64   `json:"theta"`
				Us    [][]float64 `json:"us"`
				Data  struct {
					Model           model       `json:"model"`
					Correspondences []int64     `json:"correspondences"`
					Points          [][]float64 `json:"points"`
				} `json:"data"`
			}
			// rows turns a Jacobian into the list of its rows.
			rows := func(j ht.Tensor[float64]) [][]float64 {
				r := make([][]float64, j.Shape[0])
				for i := range r {
					r[i] = j.Data[int64(i)*j.Shape[1] : int64(i+1)*j.Shape[1]]
				}
				return r
			}
			return map[string]function{
				"objective": decode(func(in input) ([]float64, error) {
					m, d := in.Data.Model, in.Data
					if len(in.Us) == 0 {
						return c.HtSimple(in.Theta, m.Parents, m.BaseRelatives, m.InverseBaseAbsolutes,
							m.BasePositions, m.Weights, m.IsMirrored, d.Correspondences, d.Points)
					}
					return c.HtComplicated(in.Theta, in.Us, m.Parents, m.BaseRelatives, m.InverseBaseAbsolutes,
						m.BasePositions, m.Weights, m.IsMirrored, m.Triangles, d.Correspondences, d.Points)
				}),
				"jacobian": decode(func(in input) ([][]float64, error) {
					m, d := in.Data.Model, in.Data
					var j ht.Tensor[float64]
					var err error
					if len(in.Us) == 0 {
						j, err = c.HtSimpleJacobian(in.Theta, m.Parents, m.BaseRelatives, m.InverseBaseAbsolutes,
							m.BasePositions, m.Weights, m.IsMirrored, d.Correspondences, d.Points)
					} else {
						j, err = c.HtComplicatedJacobian(in.Theta, in.Us, m.Parents, m.BaseRelatives, m.InverseBaseAbsolutes,
							m.BasePositions, m.Weights, m.IsMirrored, m.Triangles, d.Correspondences, d.Points)
					}
					return rows(j), err
				}),
			}
		})
	},
}

// baInput is the ba eval's problem: its one camera, point, weight and
// feature repeated as GradBench's manual tool repeats them (n cameras, m
// points, p observations, observation i of point i mod m by camera i mod
// n), before the timed calls, as the manual tool does.
type baInput struct {
	cams, xs, feats [][]float64
	ws              []float64
	camIdx, ptIdx   []int64
}

// baFunction makes a function of the ba eval from f on the expanded input.
func baFunction(f func(in *baInput) (any, error)) function {
	return func(raw json.RawMessage) (func() (any, error), error) {
		var in struct {
			N, M, P int64
			Cam, X  []float64
			W       float64
			Feat    []float64
		}
		if err := json.Unmarshal(raw, &in); err != nil {
			return nil, err
		}
		b := &baInput{}
		for i := int64(0); i < in.N; i++ {
			b.cams = append(b.cams, in.Cam)
		}
		for i := int64(0); i < in.M; i++ {
			b.xs = append(b.xs, in.X)
		}
		for i := int64(0); i < in.P; i++ {
			b.ws = append(b.ws, in.W)
			b.camIdx = append(b.camIdx, i%in.N)
			b.ptIdx = append(b.ptIdx, i%in.M)
			b.feats = append(b.feats, in.Feat)
		}
		return func() (any, error) { return f(b) }, nil
	}
}

// firstAndLast returns the first 30 elements of xs and its last.
func firstAndLast[T any](xs []T) []T {
	if len(xs) <= 31 {
		return xs
	}
	return append(append([]T(nil), xs[:30]...), xs[len(xs)-1])
}

// open makes a module: a context of its library (newContext) and the
// functions funcs makes with it, closed with it.
func open[C interface{ Close() }](newContext func() (C, error), funcs func(c C) map[string]function) (*module, error) {
	c, err := newContext()
	if err != nil {
		return nil, err
	}
	return &module{close: c.Close, funcs: funcs(c)}, nil
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
