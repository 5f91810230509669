// The steps of examples/ffi/c/steps.c from C# (Mono or .NET) through P/Invoke. The structs,
// constants and [DllImport]s come from DlpackHelpersAbi.cs, generated from the specification's
// manifest (python3 examples/ffi/bindgen.py csharp spec/abi.toml > DlpackHelpersAbi.cs): none
// by hand. Build: mcs -unsafe -out:steps.exe Steps.cs DlpackHelpersAbi.cs
// Run: LD_LIBRARY_PATH=<sdk>/lib mono steps.exe   (DllImport names the SONAME)
using System;
using System.Linq;
using System.Runtime.InteropServices;
using System.Threading.Tasks;
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

  internal static string Str(IntPtr p) { return Marshal.PtrToStringAnsi(p); }

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
    if (released != 1) return 1;

    // (f) a producer with no callback: the library allocates the buffer and its own deleter
    // frees it; the program fills it through the strides and hands the tensor on.
    DLManagedTensorVersioned* a;
    var err = new dlpack_helpers_error { struct_size = (ulong)sizeof(dlpack_helpers_error) };
    Must(dlpack_tensor_alloc_with_error(cpu, 2, shape, null, f32, 0, &a, &err), "alloc");
    DLTensor* ad = &a->dl_tensor;
    float* abase = (float*)((byte*)(void*)ad->data + ad->byte_offset);
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 3; j++) abase[i * ad->strides[0] + j * ad->strides[1]] = 10 * (3 * i + j);
    opt.dtype = f32;
    Must(dlpack_tensor_validate_with_error(a, &opt, &layout, &err), "validate");
    Console.WriteLine("(f) allocated and filled a 2x3 float32 tensor with no callback: valid (numel " + layout.numel +
        ", " + layout.nbytes + " bytes), t[1][2] = " + abase[1 * ad->strides[0] + 2 * ad->strides[1]] +
        ", data aligned to " + DLPACK_HELPERS_ALLOC_ALIGNMENT + ": " + ((ulong)ad->data % DLPACK_HELPERS_ALLOC_ALIGNMENT == 0));
    var gpu = new DLDevice { device_type = kDLCUDA, device_id = 0 };
    DLManagedTensorVersioned* refused;
    int st2 = dlpack_tensor_alloc_with_error(gpu, 2, shape, null, f32, 0, &refused, &err);
    Console.WriteLine("(f) alloc on cuda:0: status " + st2 + " " + Str(dlpack_status_string(st2)) +
        " (error object: status " + err.status + "): " + Str((IntPtr)err.message));

    // (g) the error path from 8 async chains (stress below), on the allocated tensor
    stressTensor = (IntPtr)a;
    const int Threads = ErrorStress.Threads, Calls = ErrorStress.Calls;
    var expected = ErrorStress.expected;
    for (int k = 0; k < Threads; k++) {
      IntPtr e = NewError();
      if (ValidateWithError(k, e) == DLPACK_HELPERS_STATUS_OK) return 1;
      expected[k] = ErrorMessage(e);
      Marshal.FreeHGlobal(e);
    }
    long wrong = ErrorStress.Run(false);
    Console.WriteLine("(g) error object: " + Threads + " threads, " + Threads * Calls + " failing calls, " + wrong + " wrong messages");
    Console.WriteLine("[figure] two-call thread-local path: " + ErrorStress.Run(true) + " wrong messages of " + Threads * Calls);
    dlpack_tensor_delete(a);
    Console.WriteLine("(h) deleted the allocated tensor");
    return wrong == 0 ? 0 : 1;
  }

  // (g) helpers of ErrorStress (await is not allowed in an unsafe class)
  static IntPtr stressTensor;

  internal static dlpack_helpers_validate_options Refuse(int k) {
    return new dlpack_helpers_validate_options {
      struct_size = (ulong)sizeof(dlpack_helpers_validate_options), flags = DLPACK_HELPERS_VALIDATE_REQUIRE_DTYPE,
      dtype = new DLDataType { code = (byte)kDLInt, bits = 64, lanes = (ushort)(k + 1) } };
  }
  internal static IntPtr NewError() {
    IntPtr e = Marshal.AllocHGlobal(sizeof(dlpack_helpers_error));
    ((dlpack_helpers_error*)e)->struct_size = (ulong)sizeof(dlpack_helpers_error);
    return e;
  }
  internal static int Validate(int k) {
    var o = Refuse(k);
    return dlpack_tensor_validate((DLManagedTensorVersioned*)stressTensor, &o, null);
  }
  internal static int ValidateWithError(int k, IntPtr e) {
    var o = Refuse(k);
    return dlpack_tensor_validate_with_error((DLManagedTensorVersioned*)stressTensor, &o, null, (dlpack_helpers_error*)e);
  }
  internal static string ErrorMessage(IntPtr e) { return Str((IntPtr)((dlpack_helpers_error*)e)->message); }

}

// (g) Each chain awaits Task.Run(failing call) and reads the message in its continuation, which
// .NET may run on another thread-pool thread than the call's: the two-call path then reads
// another thread's last error; the error object (unmanaged memory, owned by the chain) carries
// the call's own message.
static class ErrorStress {
  internal const int Threads = 8, Calls = 20000;
  internal static readonly string[] expected = new string[Threads];

  static async Task<long> Chain(int k, bool twoCall) {
    long wrong = 0;
    IntPtr e = Steps.NewError();
    for (int i = 0; i < Calls; i++) {
      string msg;
      if (twoCall) {
        if (await Task.Run(() => Steps.Validate(k)) == Abi.DLPACK_HELPERS_STATUS_OK) Environment.Exit(1);
        msg = Steps.Str(Abi.dlpack_last_error_message());
      } else {
        if (await Task.Run(() => Steps.ValidateWithError(k, e)) == Abi.DLPACK_HELPERS_STATUS_OK) Environment.Exit(1);
        msg = Steps.ErrorMessage(e);
      }
      if (msg != expected[k]) wrong++;
    }
    Marshal.FreeHGlobal(e);
    return wrong;
  }

  internal static long Run(bool twoCall) {
    var chains = Enumerable.Range(0, Threads).Select(k => Chain(k, twoCall)).ToArray();
    Task.WaitAll(chains);
    return chains.Sum(c => c.Result);
  }
}
