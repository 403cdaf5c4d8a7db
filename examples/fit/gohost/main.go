//go:build ksc_example

// Command gohost fits y = a exp(-b x) + c to data by gradient descent, with
// the error and its gradient from the library ksc built from ../fit.ks,
// called through cgo. It prints what ../host.py prints. Build the library,
// then run it with the build tag ksc_example and cgo told where the
// library is:
//
//	ksc build fit.ks -o out/libfit.so
//	CGO_CFLAGS=-I$PWD/out CGO_LDFLAGS="-L$PWD/out -lfit -Wl,-rpath,$PWD/out" \
//	  go run -tags ksc_example ./gohost
package main

// #include <stdlib.h>
// #include "fit.h"
import "C"

import (
	"fmt"
	"math"
	"os"
	"unsafe"
)

func main() {
	const n = 50
	// The data live in C memory: cgo forbids passing C a Go pointer held
	// in a struct.
	xs := (*[n]float64)(C.malloc(n * 8))
	ys := (*[n]float64)(C.malloc(n * 8))
	defer C.free(unsafe.Pointer(xs))
	defer C.free(unsafe.Pointer(ys))
	for i := range n {
		xs[i] = float64(i) / 10
		ys[i] = 2.5*math.Exp(-1.3*xs[i]) + 0.5 + 0.01*math.Sin(7*float64(i))
	}
	ctx := C.fit_ctx_new()
	if ctx == nil {
		os.Exit(1)
	}
	defer C.fit_ctx_free(ctx)
	p := [3]float64{1, 1, 0}
	const step = 0.5
	for it := 0; it <= 1000; it++ {
		pc := C.fit_loss_p{C.double(p[0]), C.double(p[1]), C.double(p[2])}
		xv := C.fit_vec_f64{n, (*C.double)(unsafe.Pointer(xs))}
		yv := C.fit_vec_f64{n, (*C.double)(unsafe.Pointer(ys))}
		var err C.double
		var g C.fit_vrev_loss_wrt_0_dp
		if C.fit_vrev_loss_wrt_0(ctx, pc, xv, yv, 1, &err, &g) != C.fit_OK {
			fmt.Fprintln(os.Stderr, C.GoString(C.fit_ctx_error(ctx)))
			os.Exit(1)
		}
		if it%250 == 0 {
			fmt.Printf("iteration %4d: error %.6f\n", it, float64(err))
		}
		p[0] -= step * float64(g.f0)
		p[1] -= step * float64(g.f1)
		p[2] -= step * float64(g.f2)
		C.fit_ctx_reset(ctx) // release the result
	}
	fmt.Printf("a = %.3f, b = %.3f, c = %.3f\n", p[0], p[1], p[2])
}
