package main

// A file with //export may only declare C functions in its preamble, so the release
// callback lives here, apart from main.go.

/*
#include <stdint.h>
#include <stdlib.h>
*/
import "C"

import (
	"fmt"
	"runtime/cgo"
	"unsafe"
)

//export goRelease
func goRelease(ctx unsafe.Pointer) {
	// ctx is C memory holding the cgo.Handle (C may keep no Go pointer past a call).
	h := cgo.Handle(*(*C.uintptr_t)(ctx))
	C.free(ctx)
	p := h.Value().(*producer)
	fmt.Printf("    release callback: buffer of %d floats\n", p.count)
	C.free(p.buf)
	p.released++
	h.Delete()
}
