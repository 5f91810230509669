// The steps of examples/ffi/c/steps.c from C# (Mono or .NET) through P/Invoke. The structs,
// constants and [DllImport]s come from DlpackHelpersAbi.cs, generated from the specification's
// manifest (python3 examples/ffi/bindgen.py csharp spec/abi.toml > DlpackHelpersAbi.cs): none
// by hand. Build: mcs -unsafe -out:steps.exe Steps.cs DlpackHelpersAbi.cs
// Run: LD_LIBRARY_PATH=<sdk>/lib mono steps.exe   (DllImport names the SONAME)
using System;
using System.Runtime.InteropServices;
using DlpackHelpers;
using static DlpackHelpers.Abi;

unsafe static class Steps {
  // The tensor keeps the buffer and the callback: the buffer is unmanaged memory, the delegate
  // lives in a static field (a collected delegate's thunk would be called after it is gone).
  static IntPtr buf;
  static int count = 6, released;
  static readonly ReleaseFn release = OnRelease;

  static void OnRelease(IntPtr ctx) {
    Console.WriteLine("    release callback: buffer of " + count + " floats");
    Marshal.FreeHGlobal(buf);
    released++;
  }

  static string Str(IntPtr p) { return Marshal.PtrToStringAnsi(p); }

  static void Must(int st, string what) {
    if (st == DLPACK_HELPERS_STATUS_OK) return;
    Console.WriteLine(what + " failed: " + Str(dlpack_last_error_message()));
    Environment.Exit(1);
  }

  static int Main() {
    // (a) what the library is
    var info = new dlpack_helpers_info { struct_size = (ulong)sizeof(dlpack_helpers_info) };
    Must(dlpack_get_info(&info), "dlpack_get_info");
    Console.WriteLine("(a) library " + Str((IntPtr)info.version) + ", DLPack ABI major " + info.dlpack_abi_major +
        ", DLPack " + info.dlpack_version.major + "." + info.dlpack_version.minor + ", caps 0x" +
        info.capabilities.ToString("x") + ", legacy " + (info.accepts_legacy != 0) + ", spec " +
        info.spec_version + ", profiles 0x" + info.profiles.ToString("x") + ", filled " + info.struct_size + " bytes");

    // (b) a producer: a 2x3 float32 tensor over our own buffer, released through a callback
    buf = Marshal.AllocHGlobal(count * sizeof(float));
    for (int i = 0; i < count; i++) ((float*)buf)[i] = i;
    long* shape = stackalloc long[2];
    shape[0] = 2; shape[1] = 3;
    var cpu = new DLDevice { device_type = kDLCPU, device_id = 0 };
    var f32 = new DLDataType { code = (byte)kDLFloat, bits = 32, lanes = 1 };
    DLManagedTensorVersioned* t;
    Must(dlpack_tensor_create(buf, cpu, 2, shape, null, f32, 0, 0,
        Marshal.GetFunctionPointerForDelegate(release), IntPtr.Zero, &t), "dlpack_tensor_create");
    Console.WriteLine("(b) created a 2x3 float32 tensor");

    // (c) a consumer: version, validation, element [1][2] through the strides, queries, names
    int compat = -1;
    Must(dlpack_tensor_check_version_or_delete(t, &compat), "check_version");
    var opt = new dlpack_helpers_validate_options {
      struct_size = (ulong)sizeof(dlpack_helpers_validate_options),
      flags = DLPACK_HELPERS_VALIDATE_REQUIRE_CPU_ACCESSIBLE | DLPACK_HELPERS_VALIDATE_REQUIRE_DTYPE,
      dtype = f32 };
    dlpack_helpers_layout layout;
    Must(dlpack_tensor_validate(t, &opt, &layout), "validate");
    DLTensor* dl = &t->dl_tensor;
    float el = *((float*)((byte*)(void*)dl->data + dl->byte_offset) + 1 * dl->strides[0] + 2 * dl->strides[1]);
    int access = -1;
    Must(dlpack_tensor_host_access(t, IntPtr.Zero, &access), "host_access");
    DLDevice dev;
    Must(dlpack_get_device(t, &dev), "get_device");
    byte* devName = stackalloc byte[(int)DLPACK_HELPERS_NAME_MAX];
    byte* dtypeName = stackalloc byte[(int)DLPACK_HELPERS_NAME_MAX];
    Must(dlpack_device_format(dev, devName, DLPACK_HELPERS_NAME_MAX, null), "device_format");
    Must(dlpack_dtype_format(dl->dtype, dtypeName, DLPACK_HELPERS_NAME_MAX, null), "dtype_format");
    Console.WriteLine("(c) version compat " + compat + ", valid (numel " + layout.numel + ", " + layout.nbytes +
        " bytes), t[1][2] = " + el + ", host access " + access + ", cpu accessible " + dlpack_is_cpu_accessible(dev) +
        ", device " + Str((IntPtr)devName) + " (type " + dev.device_type + " id " + dev.device_id + "), dtype " +
        Str((IntPtr)dtypeName));

    // (e) a refused validation: the status, its name and the message
    opt.dtype = new DLDataType { code = (byte)kDLInt, bits = 64, lanes = 1 };
    int st = dlpack_tensor_validate(t, &opt, null);
    Console.WriteLine("(e) validate as int64: status " + st + " " + Str(dlpack_status_string(st)) + ": " +
        Str(dlpack_last_error_message()));

    // (d) one delete: the deleter frees the struct and calls OnRelease once
    dlpack_tensor_delete(t);
    Console.WriteLine("(d) deleted; release callback ran " + released + " time(s)");
    GC.KeepAlive(release);
    return released == 1 ? 0 : 1;
  }
}
