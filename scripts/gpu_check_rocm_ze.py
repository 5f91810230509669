"""Real-device checks of pointer classification beyond CUDA, run by scripts/gpu-check-rocm-ze.

    python gpu_check_rocm_ze.py LIBRARY rocm|level_zero

ROCm: hipMalloc / hipHostMalloc / hipMallocManaged memory, base, interior and last byte, through
dlpack_pointer_classify and dlpack_pointer_get_device. Level Zero: a context made with the loader
itself (zeContextCreate), zeMemAllocHost / Device / Shared memory classified in that context, and
the per-tensor answer of dlpack_dltensor_host_access for a kDLOneAPI tensor. Prints one line per
check and exits non-zero on the first failure."""
import ctypes
import sys
from ctypes import POINTER, Structure, byref, c_int32, c_size_t, c_uint32, c_void_p


class Device(Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class PointerInfo(Structure):
    _fields_ = [("struct_size", c_size_t), ("memory_class", c_int32), ("host_access", c_int32),
                ("device", Device), ("native_device", c_void_p), ("backends_asked", c_uint32),
                ("backends_unreachable", c_uint32), ("answered_by", c_uint32)]


UNKNOWN, HOST, DEVICE, PINNED_HOST, MANAGED = range(5)
NEVER, ALWAYS, DEPENDS, UNKNOWN_ACCESS = range(4)

lib = ctypes.CDLL(sys.argv[1])
lib.dlpack_pointer_classify.argtypes = [c_void_p, c_void_p, POINTER(PointerInfo)]
lib.dlpack_pointer_get_device.argtypes = [c_void_p, POINTER(Device)]
lib.dlpack_last_error_message.restype = ctypes.c_char_p


def classify(ptr, ctx=None):
    i = PointerInfo()
    i.struct_size = ctypes.sizeof(i)
    s = lib.dlpack_pointer_classify(ptr, ctx, byref(i))
    if s != 0:
        raise SystemExit(f"FAIL: dlpack_pointer_classify status {s}: {lib.dlpack_last_error_message()}")
    return i


def expect(what, got, want):
    print(f"{'ok  ' if got == want else 'FAIL'} {what}: {got} (want {want})")
    if got != want:
        raise SystemExit(1)


def rocm():
    hip = ctypes.CDLL("libamdhip64.so")
    size = 1 << 20
    allocs = {}
    for name, fn, extra, want in [("hipMalloc", hip.hipMalloc, (), (DEVICE, 10)),
                                  ("hipHostMalloc", hip.hipHostMalloc, (0,), (PINNED_HOST, 11)),
                                  ("hipMallocManaged", hip.hipMallocManaged, (1,), (MANAGED, 10))]:
        p = c_void_p()
        if fn(byref(p), c_size_t(size), *extra) != 0:
            raise SystemExit(f"FAIL: {name} failed")
        allocs[name] = (p.value, want)
    for name, (base, (cls, dtype)) in allocs.items():
        for off in (0, 4096, size - 1):
            i = classify(base + off)
            expect(f"{name}+{off} class/device type", (i.memory_class, i.device.device_type), (cls, dtype))
        d = Device()
        expect(f"{name} dlpack_pointer_get_device status", lib.dlpack_pointer_get_device(base, byref(d)), 0)
        expect(f"{name} device type", d.device_type, dtype)
    plain = ctypes.create_string_buffer(64)
    i = classify(ctypes.addressof(plain))
    expect("malloc memory: never claimed by HIP", i.answered_by & 0x2, 0)


def level_zero():
    ze = ctypes.CDLL("libze_loader.so.1")
    expect("zeInit", ze.zeInit(0), 0)
    n = c_uint32(0)
    ze.zeDriverGet(byref(n), None)
    if n.value == 0:
        raise SystemExit("FAIL: no Level Zero driver")
    drivers = (c_void_p * n.value)()
    ze.zeDriverGet(byref(n), drivers)
    drv = c_void_p(drivers[0])
    nd = c_uint32(0)
    ze.zeDeviceGet(drv, byref(nd), None)
    devices = (c_void_p * max(nd.value, 1))()
    ze.zeDeviceGet(drv, byref(nd), devices)
    dev = c_void_p(devices[0])

    class ContextDesc(Structure):
        _fields_ = [("stype", c_uint32), ("pNext", c_void_p), ("flags", c_uint32)]

    class DeviceMemDesc(Structure):
        _fields_ = [("stype", c_uint32), ("pNext", c_void_p), ("flags", c_uint32), ("ordinal", c_uint32)]

    class HostMemDesc(Structure):
        _fields_ = [("stype", c_uint32), ("pNext", c_void_p), ("flags", c_uint32)]

    ctx = c_void_p()
    expect("zeContextCreate", ze.zeContextCreate(drv, byref(ContextDesc(0xD, None, 0)), byref(ctx)), 0)
    ddesc, hdesc = DeviceMemDesc(0x15, None, 0, 0), HostMemDesc(0x16, None, 0)
    size, align = c_size_t(1 << 20), c_size_t(64)
    host, device, shared = c_void_p(), c_void_p(), c_void_p()
    expect("zeMemAllocHost", ze.zeMemAllocHost(ctx, byref(hdesc), size, align, byref(host)), 0)
    expect("zeMemAllocDevice", ze.zeMemAllocDevice(ctx, byref(ddesc), size, align, dev, byref(device)), 0)
    expect("zeMemAllocShared",
           ze.zeMemAllocShared(ctx, byref(ddesc), byref(hdesc), size, align, dev, byref(shared)), 0)
    for name, p, cls, access in [("host", host, PINNED_HOST, ALWAYS), ("device", device, DEVICE, NEVER),
                                 ("shared", shared, MANAGED, ALWAYS)]:
        for off in (0, 4096, (1 << 20) - 1):
            i = classify(p.value + off, ctx)
            expect(f"USM {name}+{off} class/host access/device type",
                   (i.memory_class, i.host_access, i.device.device_type), (cls, access, 14))

    class DLTensor(Structure):
        _fields_ = [("data", c_void_p), ("device", Device), ("ndim", c_int32), ("dtype", c_uint32),
                    ("shape", c_void_p), ("strides", c_void_p), ("byte_offset", ctypes.c_uint64)]

    lib.dlpack_dltensor_host_access.argtypes = [POINTER(DLTensor), c_void_p, POINTER(c_int32)]
    for name, p, access in [("host", host, ALWAYS), ("device", device, NEVER), ("shared", shared, ALWAYS)]:
        t = DLTensor(p.value, Device(14, 0), 0, 0x00012002, None, None, 0)
        a = c_int32(-1)
        expect(f"kDLOneAPI tensor on USM {name}: status",
               lib.dlpack_dltensor_host_access(byref(t), ctx, byref(a)), 0)
        expect(f"kDLOneAPI tensor on USM {name}: host access", a.value, access)
    plain = ctypes.create_string_buffer(64)
    expect("malloc memory: not claimed by Level Zero", classify(ctypes.addressof(plain), ctx).answered_by & 0x4, 0)
    # Issue 22 (peer case 54): never (kDLOneAPI, -1). With the context's devices registered in
    # SYCL-ordinal order (here the driver's order: `dev` is ordinal 0), device and shared memory
    # answer the ordinal; USM host memory (no device) is DEVICE_ID_UNKNOWN (49), nothing written.
    lib.dlpack_level_zero_context_set_devices.argtypes = [c_void_p, c_void_p, c_size_t]
    lib.dlpack_level_zero_context_set.argtypes = [c_void_p]
    expect("dlpack_level_zero_context_set_devices",
           lib.dlpack_level_zero_context_set_devices(ctx, devices, c_size_t(nd.value)), 0)
    for name, p in [("device", device), ("shared", shared)]:
        d = Device(-7, -7)
        expect(f"USM {name}: dlpack_pointer_get_device", lib.dlpack_pointer_get_device(p.value, byref(d)), 0)
        expect(f"USM {name}: (kDLOneAPI, ordinal)", (d.device_type, d.device_id), (14, 0))
    d = Device(-7, -7)
    expect("USM host: DEVICE_ID_UNKNOWN, nothing written",
           (lib.dlpack_pointer_get_device(host.value, byref(d)), d.device_id), (49, -7))
    lib.dlpack_level_zero_context_set(None)


{"rocm": rocm, "level_zero": level_zero}[sys.argv[2]]()
print(f"{sys.argv[2]}: PASS")
