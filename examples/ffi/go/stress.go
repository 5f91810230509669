package main

/*
#include <dlpack_helpers.h>
*/
import "C"

import (
	"runtime"
	"sync"
	"unsafe"
)

// (g) the error path from 8 goroutines on GOMAXPROCS=2, without runtime.LockOSThread: a
// goroutine may move to another OS thread between two cgo calls, so the two-call path (status,
// then the thread-local dlpack_last_error_message()) can read another goroutine's message. The
// per-call error object carries the message with the status. Each goroutine refuses its own
// dtype (int64 with k+1 lanes), so a message of another call is seen.
const threads, calls = 8, 20000

func refuseOptions(k int) C.dlpack_helpers_validate_options {
	return C.dlpack_helpers_validate_options{struct_size: C.sizeof_dlpack_helpers_validate_options,
		flags: C.DLPACK_HELPERS_VALIDATE_REQUIRE_DTYPE,
		dtype: C.DLDataType{code: C.kDLInt, bits: 64, lanes: C.uint16_t(k + 1)}}
}

// expectedMessages: each goroutine's refusal message, from one call with the error object.
func expectedMessages(t *C.DLManagedTensorVersioned) []string {
	want := make([]string, threads)
	for k := range want {
		o := refuseOptions(k)
		err := C.dlpack_helpers_error{struct_size: C.sizeof_dlpack_helpers_error}
		if C.dlpack_tensor_validate_with_error(t, &o, nil, &err) == C.DLPACK_HELPERS_STATUS_OK {
			panic("the refusal was accepted")
		}
		want[k] = C.GoString(&err.message[0])
	}
	return want
}

func stress(t *C.DLManagedTensorVersioned, want []string, twoCall bool) int {
	runtime.GOMAXPROCS(2)
	var wg sync.WaitGroup
	wrong := make([]int, threads)
	for k := 0; k < threads; k++ {
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			o := refuseOptions(k)
			// The error object is Go memory: C writes it during the call and keeps nothing.
			err := C.dlpack_helpers_error{struct_size: C.sizeof_dlpack_helpers_error}
			for i := 0; i < calls; i++ {
				var msg string
				if twoCall {
					if C.dlpack_tensor_validate(t, &o, nil) == C.DLPACK_HELPERS_STATUS_OK {
						panic("accepted")
					}
					msg = C.GoString(C.dlpack_last_error_message())
				} else {
					if C.dlpack_tensor_validate_with_error(t, &o, nil, &err) == C.DLPACK_HELPERS_STATUS_OK {
						panic("accepted")
					}
					msg = C.GoString((*C.char)(unsafe.Pointer(&err.message[0])))
				}
				if msg != want[k] {
					wrong[k]++
				}
			}
		}(k)
	}
	wg.Wait()
	total := 0
	for _, w := range wrong {
		total += w
	}
	return total
}
