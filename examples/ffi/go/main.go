// The steps of examples/ffi/c/steps.c from Go through cgo: the header is read as is, nothing
// is restated. Build: PKG_CONFIG_PATH=<sdk>/lib/pkgconfig CGO_LDFLAGS=-Wl,-rpath,<sdk>/lib go build
package main

/*
#cgo pkg-config: dlpack_helpers
#include <stdlib.h>
#include <dlpack_helpers.h>

void goRelease(void *ctx); // callback.go
*/
import "C"

import (
	"fmt"
	"os"
	"runtime/cgo"
	"unsafe"
)

// The release context: the tensor keeps it, so C gets a cgo.Handle, never a Go pointer.
type producer struct {
	buf      unsafe.Pointer // C.malloc'd: the tensor keeps it past this call
	count    int
	released int
}

func must(st C.dlpack_helpers_status, what string) {
	if st != C.DLPACK_HELPERS_STATUS_OK {
		fmt.Printf("%s failed: %s\n", what, C.GoString(C.dlpack_last_error_message()))
		os.Exit(1)
	}
}

func main() {
	// (a) what the library is
	info := C.dlpack_helpers_info{struct_size: C.sizeof_dlpack_helpers_info}
	must(C.dlpack_get_info(&info), "dlpack_get_info")
	fmt.Printf("(a) library %s, DLPack ABI major %d, DLPack %d.%d, caps 0x%x, legacy %t, spec %d, profiles 0x%x, filled %d bytes\n",
		C.GoString(info.version), info.dlpack_abi_major, info.dlpack_version.major, info.dlpack_version.minor,
		uint64(info.capabilities), bool(info.accepts_legacy), info.spec_version, info.profiles, info.struct_size)

	// (b) a producer: a 2x3 float32 tensor over our own (C) buffer, released through a callback
	prod := &producer{buf: C.malloc(6 * 4), count: 6}
	vals := unsafe.Slice((*float32)(prod.buf), 6)
	for i := range vals {
		vals[i] = float32(i)
	}
	shape := [2]C.int64_t{2, 3} // copied by dlpack_tensor_create: Go memory is fine
	cpu := C.DLDevice{device_type: C.kDLCPU, device_id: 0}
	f32 := C.DLDataType{code: C.kDLFloat, bits: 32, lanes: 1}
	ctx := C.malloc(C.sizeof_uintptr_t) // the release context: C memory holding a cgo.Handle
	*(*C.uintptr_t)(ctx) = C.uintptr_t(cgo.NewHandle(prod))
	var t *C.DLManagedTensorVersioned
	must(C.dlpack_tensor_create(prod.buf, cpu, 2, &shape[0], nil, f32, 0, 0,
		(*[0]byte)(C.goRelease), ctx, &t), "dlpack_tensor_create")
	fmt.Println("(b) created a 2x3 float32 tensor")

	// (c) a consumer: version, validation, element [1][2] through the strides, queries, names
	var compat C.dlpack_helpers_version_compat = -1
	must(C.dlpack_tensor_check_version_or_delete(t, &compat), "check_version")
	opt := C.dlpack_helpers_validate_options{struct_size: C.sizeof_dlpack_helpers_validate_options,
		flags: C.DLPACK_HELPERS_VALIDATE_REQUIRE_CPU_ACCESSIBLE | C.DLPACK_HELPERS_VALIDATE_REQUIRE_DTYPE,
		dtype: f32}
	var layout C.dlpack_helpers_layout
	must(C.dlpack_tensor_validate(t, &opt, &layout), "validate")
	dl := &t.dl_tensor
	strides := unsafe.Slice(dl.strides, dl.ndim)
	el := *(*float32)(unsafe.Add(dl.data, int64(dl.byte_offset)+4*(1*int64(strides[0])+2*int64(strides[1]))))
	var access C.dlpack_helpers_host_access = -1
	must(C.dlpack_tensor_host_access(t, nil, &access), "host_access")
	var dev C.DLDevice
	must(C.dlpack_get_device(t, &dev), "get_device")
	var devName, dtypeName [C.DLPACK_HELPERS_NAME_MAX]C.char
	must(C.dlpack_device_format(dev, &devName[0], C.DLPACK_HELPERS_NAME_MAX, nil), "device_format")
	must(C.dlpack_dtype_format(dl.dtype, &dtypeName[0], C.DLPACK_HELPERS_NAME_MAX, nil), "dtype_format")
	fmt.Printf("(c) version compat %d, valid (numel %d, %d bytes), t[1][2] = %g, host access %d, cpu accessible %t, device %s (type %d id %d), dtype %s\n",
		compat, layout.numel, layout.nbytes, el, access, bool(C.dlpack_is_cpu_accessible(dev)),
		C.GoString(&devName[0]), dev.device_type, dev.device_id, C.GoString(&dtypeName[0]))

	// (e) a refused validation: the status, its name and the message
	opt.dtype = C.DLDataType{code: C.kDLInt, bits: 64, lanes: 1}
	st := C.dlpack_tensor_validate(t, &opt, nil)
	fmt.Printf("(e) validate as int64: status %d %s: %s\n", st, C.GoString(C.dlpack_status_string(st)),
		C.GoString(C.dlpack_last_error_message()))

	// (d) one delete: the deleter frees the struct and calls goRelease once
	C.dlpack_tensor_delete(t)
	fmt.Printf("(d) deleted; release callback ran %d time(s)\n", prod.released)
	if prod.released != 1 {
		os.Exit(1)
	}

	// (f) a producer with no callback: the library allocates the buffer and its own deleter
	// frees it; the program fills it through the strides and hands the tensor on.
	var a *C.DLManagedTensorVersioned
	errObj := C.dlpack_helpers_error{struct_size: C.sizeof_dlpack_helpers_error}
	if C.dlpack_tensor_alloc_with_error(cpu, 2, &shape[0], nil, f32, 0, &a, &errObj) != C.DLPACK_HELPERS_STATUS_OK {
		fmt.Printf("alloc failed: %s\n", C.GoString(&errObj.message[0]))
		os.Exit(1)
	}
	ad := &a.dl_tensor
	as := unsafe.Slice(ad.strides, ad.ndim)
	base := unsafe.Add(ad.data, int64(ad.byte_offset))
	at := func(i, j int64) *float32 {
		return (*float32)(unsafe.Add(base, 4*(i*int64(as[0])+j*int64(as[1]))))
	}
	for i := int64(0); i < 2; i++ {
		for j := int64(0); j < 3; j++ {
			*at(i, j) = float32(10 * (3*i + j))
		}
	}
	opt.dtype = f32
	must(C.dlpack_tensor_validate_with_error(a, &opt, &layout, &errObj), "validate")
	fmt.Printf("(f) allocated and filled a 2x3 float32 tensor with no callback: valid (numel %d, %d bytes), t[1][2] = %g, data aligned to %d: %t\n",
		layout.numel, layout.nbytes, *at(1, 2), C.DLPACK_HELPERS_ALLOC_ALIGNMENT,
		uintptr(ad.data)%C.DLPACK_HELPERS_ALLOC_ALIGNMENT == 0)
	gpu := C.DLDevice{device_type: C.kDLCUDA, device_id: 0}
	var refused *C.DLManagedTensorVersioned
	st = C.dlpack_tensor_alloc_with_error(gpu, 2, &shape[0], nil, f32, 0, &refused, &errObj)
	fmt.Printf("(f) alloc on cuda:0: status %d %s (error object: status %d): %s\n", st,
		C.GoString(C.dlpack_status_string(st)), errObj.status, C.GoString(&errObj.message[0]))

	// (g) the error path from 8 goroutines (stress.go)
	want := expectedMessages(a)
	wrong := stress(a, want, false)
	fmt.Printf("(g) error object: %d threads, %d failing calls, %d wrong messages\n", threads, threads*calls, wrong)
	fmt.Printf("[figure] two-call thread-local path: %d wrong messages of %d\n", stress(a, want, true), threads*calls)
	C.dlpack_tensor_delete(a)
	fmt.Println("(h) deleted the allocated tensor")
	if wrong != 0 {
		os.Exit(1)
	}
}
