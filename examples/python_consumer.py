"""A Python consumer of real NumPy tensors through the dlpack-helpers C API, with plain ctypes.

For each array it asks NumPy for a legacy capsule (``__dlpack__()``) and a versioned one
(``__dlpack__(max_version=(1, 3))``), takes ownership by renaming the capsule, runs every core
helper (version check, device, CPU accessibility, info), reads the elements through the DLTensor,
releases the tensor exactly once and shows that NumPy's owner was released (reference count and
tracemalloc). Run it through ``scripts/demo``; the library path comes from
``DLPACK_HELPERS_LIBRARY`` (default: ``target/release/libdlpack_helpers.so``).
"""

import ctypes as C
import os
import sys
import tracemalloc

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
LIB = os.environ.get("DLPACK_HELPERS_LIBRARY") or os.path.join(HERE, "..", "target", "release", "libdlpack_helpers.so")
lib = C.CDLL(LIB)


class DLPackVersion(C.Structure):
    _fields_ = [("major", C.c_uint32), ("minor", C.c_uint32)]


class DLDevice(C.Structure):
    _fields_ = [("device_type", C.c_int32), ("device_id", C.c_int32)]


class DLDataType(C.Structure):
    _fields_ = [("code", C.c_uint8), ("bits", C.c_uint8), ("lanes", C.c_uint16)]


class DLTensor(C.Structure):
    _fields_ = [("data", C.c_void_p), ("device", DLDevice), ("ndim", C.c_int32), ("dtype", DLDataType),
                ("shape", C.POINTER(C.c_int64)), ("strides", C.POINTER(C.c_int64)), ("byte_offset", C.c_uint64)]


class DLManagedTensor(C.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", C.c_void_p), ("deleter", C.c_void_p)]


class DLManagedTensorVersioned(C.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", C.c_void_p), ("deleter", C.c_void_p),
                ("flags", C.c_uint64), ("dl_tensor", DLTensor)]


class Info(C.Structure):
    _fields_ = [("struct_size", C.c_size_t), ("version", C.c_char_p), ("major", C.c_uint32),
                ("minor", C.c_uint32), ("patch", C.c_uint32), ("dlpack_abi_major", C.c_uint32),
                ("dlpack_version", DLPackVersion), ("capabilities", C.c_uint64), ("accepts_legacy", C.c_bool)]


VP, LP = C.POINTER(DLManagedTensorVersioned), C.POINTER(DLManagedTensor)
lib.dlpack_get_info.argtypes, lib.dlpack_get_info.restype = [C.POINTER(Info)], C.c_int32
lib.dlpack_tensor_check_version_or_delete.argtypes = [VP, C.POINTER(C.c_int32)]
lib.dlpack_tensor_check_version_or_delete.restype = C.c_int32
lib.dlpack_get_device.argtypes, lib.dlpack_get_device.restype = [VP, C.POINTER(DLDevice)], C.c_int32
lib.dlpack_legacy_get_device.argtypes, lib.dlpack_legacy_get_device.restype = [LP, C.POINTER(DLDevice)], C.c_int32
lib.dlpack_is_cpu_accessible.argtypes, lib.dlpack_is_cpu_accessible.restype = [DLDevice], C.c_bool
lib.dlpack_tensor_delete.argtypes, lib.dlpack_tensor_delete.restype = [VP], None
lib.dlpack_legacy_tensor_delete.argtypes, lib.dlpack_legacy_tensor_delete.restype = [LP], None
lib.dlpack_last_error_message.argtypes, lib.dlpack_last_error_message.restype = [], C.c_char_p
lib.dlpack_dltensor_fits_allocation.argtypes = [C.POINTER(DLTensor), C.c_uint64, C.c_void_p, C.c_uint64,
                                                C.POINTER(C.c_bool)]
lib.dlpack_dltensor_fits_allocation.restype = C.c_int32

lib.dlpack_dtype_format.argtypes = [DLDataType, C.c_char_p, C.c_size_t, C.POINTER(C.c_size_t)]
lib.dlpack_dtype_format.restype = C.c_int32
lib.dlpack_device_format.argtypes = [DLDevice, C.c_char_p, C.c_size_t, C.POINTER(C.c_size_t)]
lib.dlpack_device_format.restype = C.c_int32


def dtype_name(dtype):
    """The library's name for a dtype ("float64"), or the numbers when it has none."""
    buf = C.create_string_buffer(64)
    if lib.dlpack_dtype_format(dtype, buf, len(buf), None) == 0:
        return buf.value.decode()
    return f"(code {dtype.code}, bits {dtype.bits}, lanes {dtype.lanes})"


def device_name(device):
    """The library's name for a device ("cpu:0"), or the numbers when it has none."""
    buf = C.create_string_buffer(64)
    if lib.dlpack_device_format(device, buf, len(buf), None) == 0:
        return buf.value.decode()
    return f"({device.device_type}, {device.device_id})"


capi = C.pythonapi
capi.PyCapsule_GetPointer.argtypes, capi.PyCapsule_GetPointer.restype = [C.py_object, C.c_char_p], C.c_void_p
capi.PyCapsule_SetName.argtypes, capi.PyCapsule_SetName.restype = [C.py_object, C.c_char_p], C.c_int
# Capsule names must outlive the capsule (DLPack Python spec): module-level bytes objects do.
NAMES = {False: (b"dltensor", b"used_dltensor"), True: (b"dltensor_versioned", b"used_dltensor_versioned")}
COMPAT = {0: "same as ours", 1: "older minor: fully understood", 2: "newer minor: usable"}
failures = 0


def expect(cond, what):
    global failures
    if not cond:
        failures += 1
        print(f"    !! unexpected: {what}")


def take(capsule, versioned):
    """Take the managed tensor: check the name, rename (ownership moves now), return the pointer."""
    name, used = NAMES[versioned]
    ptr = capi.PyCapsule_GetPointer(capsule, name)
    if capi.PyCapsule_SetName(capsule, used) != 0:
        raise RuntimeError("could not rename the capsule")
    return C.cast(ptr, VP if versioned else LP)


def read_f64(t):
    """The elements as NumPy would list them, read through shape, strides (elements) and byte_offset."""
    shape = [t.shape[d] for d in range(t.ndim)]
    if t.strides:
        strides = [t.strides[d] for d in range(t.ndim)]
    else:  # NULL strides: compact row-major (legacy and DLPack <= 1.1 producers)
        strides, acc = [], 1
        for n in reversed(shape):
            strides.insert(0, acc)
            acc *= n
    count = 1
    for n in shape:
        count *= n
    if count == 0:
        return []
    base = t.data + t.byte_offset
    out, index = [], [0] * t.ndim
    for _ in range(count):
        off = sum(i * s for i, s in zip(index, strides))
        out.append(C.c_double.from_address(base + 8 * off).value)
        for d in reversed(range(t.ndim)):
            index[d] += 1
            if index[d] < shape[d]:
                break
            index[d] = 0
    return out


def consume(array, label, versioned):
    print(f"\n  {label}, {'versioned' if versioned else 'legacy'} capsule")
    refs_before = sys.getrefcount(array)
    try:
        capsule = array.__dlpack__(max_version=(1, 3)) if versioned else array.__dlpack__()
    except BufferError as e:
        print(f"    NumPy refused the export: BufferError: {e}")
        print("    (expected for a read-only array on the legacy path: only the versioned struct can carry"
              " READ_ONLY; peer case 18)")
        expect(not versioned, "a versioned export failed")
        return
    m = take(capsule, versioned)
    del capsule  # renamed: its destructor no longer calls the deleter; we own the tensor
    refs_held = sys.getrefcount(array)  # NumPy's manager_ctx keeps the array alive meanwhile
    dev = DLDevice()
    if versioned:
        compat = C.c_int32()
        status = lib.dlpack_tensor_check_version_or_delete(m, C.byref(compat))
        if status != 0:
            print(f"    refused and released: {lib.dlpack_last_error_message().decode()}")
            expect(False, "NumPy's version was refused")
            return
        v, flags = m.contents.version, m.contents.flags
        names = [n for bit, n in ((1, "READ_ONLY"), (2, "IS_COPIED")) if flags & bit]
        print(f"    version {v.major}.{v.minor} ({COMPAT[compat.value]}), flags {flags:#x} {' '.join(names)}")
        expect(bool(flags & 1) == (not array.flags.writeable), "READ_ONLY flag disagrees with NumPy")
        expect(lib.dlpack_get_device(m, C.byref(dev)) == 0, "dlpack_get_device failed")
    else:
        print("    legacy struct: no version, no flags (writability unknown)")
        expect(lib.dlpack_legacy_get_device(m, C.byref(dev)) == 0, "dlpack_legacy_get_device failed")
    t = m.contents.dl_tensor
    shape = tuple(t.shape[d] for d in range(t.ndim))
    strides = tuple(t.strides[d] for d in range(t.ndim)) if t.strides else None
    print(f"    shape {shape}, strides {strides} elements, dtype {dtype_name(t.dtype)}, byte_offset {t.byte_offset}")
    cpu = lib.dlpack_is_cpu_accessible(dev)
    print(f"    device {device_name(dev)}, CPU-accessible: {'yes' if cpu else 'no'}")
    expect(cpu, "NumPy memory is not CPU-accessible")
    # Before reading: every element inside the allocation the tensor views (NumPy's root buffer)?
    # Negative strides reach below data + byte_offset; an empty tensor touches nothing.
    root = array
    while isinstance(root.base, type(array)):
        root = root.base
    fits = C.c_bool()
    status = lib.dlpack_dltensor_fits_allocation(C.byref(t), m.contents.flags if versioned else 0,
                                                 root.ctypes.data, root.nbytes, C.byref(fits))
    print(f"    fits its allocation [{root.ctypes.data:#x}, +{root.nbytes}): {'yes' if status == 0 and fits else 'NO'}")
    expect(status == 0 and fits.value, "the tensor reaches outside its allocation")
    del root  # a reference to `array` itself when it owns its buffer (the refcount checks below)
    if not (status == 0 and fits.value):
        (lib.dlpack_tensor_delete if versioned else lib.dlpack_legacy_tensor_delete)(m)
        return
    values = read_f64(t)
    expect(values == array.ravel().tolist(), "elements differ from NumPy's")
    print(f"    read {len(values)} element{'' if len(values) == 1 else 's'} through the DLTensor: {values[:6]}{' ...' if len(values) > 6 else ''}"
          f" {'== NumPy' if values == array.ravel().tolist() else '!= NumPy'}")
    (lib.dlpack_tensor_delete if versioned else lib.dlpack_legacy_tensor_delete)(m)
    refs_after = sys.getrefcount(array)
    expect(refs_held == refs_before + 1, "the tensor did not hold a reference to its owner")
    print(f"    released once: NumPy owner references {refs_before} before export, {refs_held} while held,"
          f" {refs_after} after release:"
          f" {'released' if refs_after == refs_before else 'LEAKED'}")
    expect(refs_after == refs_before, "the owner reference was not released")


def main():
    tracemalloc.start()
    info = Info(struct_size=C.sizeof(Info))
    assert lib.dlpack_get_info(C.byref(info)) == 0
    v = info.dlpack_version
    print(f"Python consumer: dlpack-helpers {info.version.decode()} (DLPack {v.major}.{v.minor}, "
          f"ABI major {info.dlpack_abi_major}, capabilities {info.capabilities:#x}), NumPy {np.__version__}")
    readonly = np.arange(4, dtype=np.float64)
    readonly.setflags(write=False)
    arrays = {
        "writable": np.arange(6, dtype=np.float64).reshape(2, 3),
        "readonly": readonly,
        "zero_d": np.array(3.5),
        "empty": np.zeros((0, 3)),
        "strided": np.arange(20, dtype=np.float64).reshape(4, 5)[1:, ::2],
        "reversed": np.arange(5, dtype=np.float64)[::-1],
        "fortran": np.asfortranarray(np.arange(6, dtype=np.float64).reshape(2, 3)),
    }
    for label, array in arrays.items():
        for versioned in (False, True):
            consume(array, label, versioned)
    # Many export/release cycles: NumPy's managed tensors (allocated with PyMem) must all be freed.
    array, cycles = arrays["strided"], 10_000
    for versioned in (False, True):
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(cycles):
            m = take(array.__dlpack__(max_version=(1, 3)) if versioned else array.__dlpack__(), versioned)
            (lib.dlpack_tensor_delete if versioned else lib.dlpack_legacy_tensor_delete)(m)
        del m
        growth = tracemalloc.get_traced_memory()[0] - before
        print(f"\n  {cycles} {'versioned' if versioned else 'legacy'} export/release cycles: traced Python memory grew by"
              f" {growth} bytes (one leaked managed tensor would be over 100 bytes per cycle)")
        expect(growth < 4096, "memory grew over the cycles")
    print(f"\nPython consumer: {'FAILED' if failures else 'every tensor read correctly and released exactly once'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
