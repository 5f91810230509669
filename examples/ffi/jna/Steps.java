// The steps of examples/ffi/c/steps.c from Java 8+ through JNA. The Structures, constants and the
// Lib interface come from dlpackhelpers/DlpackHelpersJna.java, generated from the specification's
// manifest (python3 examples/ffi/bindgen.py jna spec/abi.toml > dlpackhelpers/DlpackHelpersJna.java):
// none by hand. Build: javac -cp jna.jar -d out Steps.java dlpackhelpers/DlpackHelpersJna.java
// Run: LD_LIBRARY_PATH=<sdk>/lib java -cp out:jna.jar Steps   (JNA loads the SONAME)
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.PointerByReference;
import static dlpackhelpers.DlpackHelpersJna.*;

public class Steps {
  static final Lib L = load(null);
  static final int COUNT = 6;
  static int released;
  // The tensor keeps the buffer and the callback: both stay strongly referenced (static fields)
  // until the deleter has run; a collected Memory or Callback would be freed under the tensor.
  static Memory buf;
  static final ReleaseFn RELEASE = ctx -> {
    System.out.println("    release callback: buffer of " + COUNT + " floats");
    released++;
  };

  static void must(int st, String what) {
    if (st == DLPACK_HELPERS_STATUS_OK) return;
    System.out.println(what + " failed: " + L.dlpack_last_error_message());
    System.exit(1);
  }

  static DLDataType.ByValue dtype(int code, int bits, int lanes) {
    DLDataType.ByValue d = new DLDataType.ByValue();
    d.code = (byte) code; d.bits = (byte) bits; d.lanes = (short) lanes;
    return d;
  }

  // An out-parameter must be a by-reference Structure (JNA reads it back after the call; a
  // ByValue one is never read back); by-value parameters then need a ByValue copy.
  static DLDevice.ByValue byValue(DLDevice d) {
    DLDevice.ByValue v = new DLDevice.ByValue();
    v.device_type = d.device_type; v.device_id = d.device_id;
    return v;
  }
  static DLDataType.ByValue byValue(DLDataType d) { return dtype(d.code, d.bits, d.lanes); }

  static float at(DLTensor dl, long i, long j) {
    return dl.data.getFloat(dl.byte_offset + 4 * (i * dl.strides.getLong(0) + j * dl.strides.getLong(8)));
  }

  public static void main(String[] args) throws Exception {
    // (a) what the library is
    dlpack_helpers_info info = new dlpack_helpers_info();
    info.struct_size = info.size();
    must(L.dlpack_get_info(info), "dlpack_get_info");
    System.out.println("(a) library " + info.version.getString(0) + ", DLPack ABI major " + info.dlpack_abi_major
        + ", DLPack " + info.dlpack_version.major + "." + info.dlpack_version.minor
        + ", caps 0x" + Long.toHexString(info.capabilities) + ", legacy " + (info.accepts_legacy != 0)
        + ", spec " + info.spec_version + ", profiles 0x" + Integer.toHexString(info.profiles)
        + ", filled " + info.struct_size + " bytes");

    // (b) a producer: a 2x3 float32 tensor over our own buffer, released through a callback
    buf = new Memory(4L * COUNT);
    for (int i = 0; i < COUNT; i++) buf.setFloat(4L * i, i);
    long[] shape = {2, 3};
    DLDevice.ByValue cpu = new DLDevice.ByValue();
    cpu.device_type = kDLCPU;
    DLDataType.ByValue f32 = dtype(kDLFloat, 32, 1);
    PointerByReference out = new PointerByReference();
    must(L.dlpack_tensor_create(buf, cpu, 2, shape, null, f32, 0L, 0L, RELEASE, null, out), "dlpack_tensor_create");
    Pointer t = out.getValue();
    System.out.println("(b) created a 2x3 float32 tensor");

    // (c) a consumer: version, validation, element [1][2] through the strides, queries, names
    int[] compat = {-1};
    must(L.dlpack_tensor_check_version_or_delete(t, compat), "check_version");
    dlpack_helpers_validate_options opt = new dlpack_helpers_validate_options();
    opt.struct_size = opt.size();
    opt.flags = DLPACK_HELPERS_VALIDATE_REQUIRE_CPU_ACCESSIBLE | DLPACK_HELPERS_VALIDATE_REQUIRE_DTYPE;
    opt.dtype = f32;
    dlpack_helpers_layout layout = new dlpack_helpers_layout();
    must(L.dlpack_tensor_validate(t, opt, layout), "validate");
    DLTensor dl = new DLManagedTensorVersioned(t).dl_tensor;
    int[] access = {-1};
    must(L.dlpack_tensor_host_access(t, null, access), "host_access");
    DLDevice dev = new DLDevice();
    must(L.dlpack_get_device(t, dev), "get_device");
    byte[] devName = new byte[(int) DLPACK_HELPERS_NAME_MAX], dtypeName = new byte[(int) DLPACK_HELPERS_NAME_MAX];
    must(L.dlpack_device_format(byValue(dev), devName, devName.length, null), "device_format");
    must(L.dlpack_dtype_format(byValue(dl.dtype), dtypeName, dtypeName.length, null), "dtype_format");
    System.out.println("(c) version compat " + compat[0] + ", valid (numel " + layout.numel + ", " + layout.nbytes
        + " bytes), t[1][2] = " + at(dl, 1, 2) + ", host access " + access[0]
        + ", cpu accessible " + (L.dlpack_is_cpu_accessible(byValue(dev)) != 0) + ", device " + Native.toString(devName)
        + " (type " + dev.device_type + " id " + dev.device_id + "), dtype " + Native.toString(dtypeName));

    // (e) a refused validation: the status, its name and the message
    opt.dtype = dtype(kDLInt, 64, 1);
    int st = L.dlpack_tensor_validate(t, opt, null);
    System.out.println("(e) validate as int64: status " + st + " " + L.dlpack_status_string(st) + ": "
        + L.dlpack_last_error_message());

    // (d) one delete; only then may the buffer and the callback go
    L.dlpack_tensor_delete(t);
    System.out.println("(d) deleted; release callback ran " + released + " time(s)");
    if (released != 1) System.exit(1);

    // (f) a producer with no callback: the library allocates the buffer, its own deleter frees it
    dlpack_helpers_error err = new dlpack_helpers_error();
    err.struct_size = err.size();
    must(L.dlpack_tensor_alloc_with_error(cpu, 2, shape, null, f32, 0L, out, err), "alloc");
    Pointer a = out.getValue();
    DLTensor ad = new DLManagedTensorVersioned(a).dl_tensor;
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 3; j++)
        ad.data.setFloat(ad.byte_offset + 4 * (i * ad.strides.getLong(0) + j * ad.strides.getLong(8)), 10 * (3 * i + j));
    opt.dtype = f32;
    must(L.dlpack_tensor_validate_with_error(a, opt, layout, err), "validate");
    System.out.println("(f) allocated and filled a 2x3 float32 tensor with no callback: valid (numel " + layout.numel
        + ", " + layout.nbytes + " bytes), t[1][2] = " + at(ad, 1, 2) + ", data aligned to "
        + DLPACK_HELPERS_ALLOC_ALIGNMENT + ": " + (Pointer.nativeValue(ad.data) % DLPACK_HELPERS_ALLOC_ALIGNMENT == 0));
    DLDevice.ByValue gpu = new DLDevice.ByValue();
    gpu.device_type = kDLCUDA;
    int st2 = L.dlpack_tensor_alloc_with_error(gpu, 2, shape, null, f32, 0L, new PointerByReference(), err);
    System.out.println("(f) alloc on cuda:0: status " + st2 + " " + L.dlpack_status_string(st2)
        + " (error object: status " + err.status + "): " + Native.toString(err.message));

    // (g) the error path from 8 threads (platform threads: JNA's Java 8+ has no virtual threads)
    String[] expected = new String[THREADS];
    for (int k = 0; k < THREADS; k++) {
      if (L.dlpack_tensor_validate_with_error(a, refuse(k), null, err) == DLPACK_HELPERS_STATUS_OK) System.exit(1);
      expected[k] = Native.toString(err.message);
    }
    long wrong = stress(a, expected, false);
    System.out.println("(g) error object: " + THREADS + " threads, " + THREADS * CALLS + " failing calls, " + wrong + " wrong messages");
    System.out.println("[figure] two-call thread-local path: " + stress(a, expected, true) + " wrong messages of " + THREADS * CALLS);
    L.dlpack_tensor_delete(a);
    System.out.println("(h) deleted the allocated tensor");
    System.exit(wrong == 0 ? 0 : 1);
  }

  static final int THREADS = 8, CALLS = 20000;

  static dlpack_helpers_validate_options refuse(int k) {
    dlpack_helpers_validate_options o = new dlpack_helpers_validate_options();
    o.struct_size = o.size();
    o.flags = DLPACK_HELPERS_VALIDATE_REQUIRE_DTYPE;
    o.dtype = dtype(kDLInt, 64, k + 1);
    return o;
  }

  static long stress(Pointer t, String[] expected, boolean twoCall) throws InterruptedException {
    long[] wrong = new long[THREADS];
    Thread[] th = new Thread[THREADS];
    for (int k = 0; k < THREADS; k++) {
      final int kk = k;
      th[k] = new Thread(() -> {
        dlpack_helpers_validate_options o = refuse(kk);
        dlpack_helpers_error e = new dlpack_helpers_error();
        e.struct_size = e.size();
        for (int i = 0; i < CALLS; i++) {
          String msg;
          if (twoCall) {
            if (L.dlpack_tensor_validate(t, o, null) == DLPACK_HELPERS_STATUS_OK) System.exit(1);
            msg = L.dlpack_last_error_message();
          } else {
            if (L.dlpack_tensor_validate_with_error(t, o, null, e) == DLPACK_HELPERS_STATUS_OK) System.exit(1);
            msg = Native.toString(e.message);
          }
          if (!msg.equals(expected[kk])) wrong[kk]++;
        }
      });
      th[k].start();
    }
    long total = 0;
    for (int k = 0; k < THREADS; k++) { th[k].join(); total += wrong[k]; }
    return total;
  }
}
