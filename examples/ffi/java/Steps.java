// The steps of examples/ffi/c/steps.c from Java 22+ through the FFM API (java.lang.foreign).
// The layouts (padding explicit), constants and downcall handles come from
// dlpackhelpers/DlpackHelpersAbi.java, generated from the specification's manifest
// (python3 examples/ffi/bindgen.py java spec/abi.toml > dlpackhelpers/DlpackHelpersAbi.java):
// none by hand. Build: javac -d out Steps.java dlpackhelpers/DlpackHelpersAbi.java
// Run: LD_LIBRARY_PATH=<sdk>/lib java --enable-native-access=ALL-UNNAMED -cp out Steps
import java.lang.foreign.*;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import static java.lang.foreign.ValueLayout.*;
import static dlpackhelpers.DlpackHelpersAbi.*;

public class Steps {
  static int released;
  static final int COUNT = 6;

  static void onRelease(MemorySegment ctx) {
    System.out.println("    release callback: buffer of " + COUNT + " floats");
    released++;
  }

  static String str(MemorySegment p) { return p.reinterpret(Long.MAX_VALUE).getString(0); }

  static void must(int st, String what) throws Throwable {
    if (st == DLPACK_HELPERS_STATUS_OK) return;
    System.out.println(what + " failed: " + str((MemorySegment) dlpack_last_error_message.H.invokeExact()));
    System.exit(1);
  }

  public static void main(String[] args) throws Throwable {
    try (Arena call = Arena.ofConfined()) {
      // (a) what the library is
      MemorySegment info = call.allocate(dlpack_helpers_info);
      info.set(JAVA_LONG, off(dlpack_helpers_info, "struct_size"), dlpack_helpers_info.byteSize());
      must((int) dlpack_get_info.H.invokeExact(info), "dlpack_get_info");
      long ver = off(dlpack_helpers_info, "dlpack_version");
      System.out.println("(a) library " + str(info.get(ADDRESS, off(dlpack_helpers_info, "version")))
          + ", DLPack ABI major " + info.get(JAVA_INT, off(dlpack_helpers_info, "dlpack_abi_major"))
          + ", DLPack " + info.get(JAVA_INT, ver + off(DLPackVersion, "major")) + "."
          + info.get(JAVA_INT, ver + off(DLPackVersion, "minor"))
          + ", caps 0x" + Long.toHexString(info.get(JAVA_LONG, off(dlpack_helpers_info, "capabilities")))
          + ", legacy " + info.get(JAVA_BOOLEAN, off(dlpack_helpers_info, "accepts_legacy"))
          + ", spec " + info.get(JAVA_INT, off(dlpack_helpers_info, "spec_version"))
          + ", profiles 0x" + Integer.toHexString(info.get(JAVA_INT, off(dlpack_helpers_info, "profiles")))
          + ", filled " + info.get(JAVA_LONG, off(dlpack_helpers_info, "struct_size")) + " bytes");

      // (b) a producer. The tensor keeps the buffer and the release upcall stub: both live in an
      // arena that is closed only after the delete (an upcall stub freed before the deleter
      // calls it crashes the JVM).
      Arena producer = Arena.ofShared();
      MemorySegment buf = producer.allocate(JAVA_FLOAT, COUNT);
      for (int i = 0; i < COUNT; i++) buf.setAtIndex(JAVA_FLOAT, i, i);
      MemorySegment release = Linker.nativeLinker().upcallStub(MethodHandles.lookup().findStatic(
          Steps.class, "onRelease", MethodType.methodType(void.class, MemorySegment.class)), RELEASE_FN, producer);
      MemorySegment shape = call.allocateFrom(JAVA_LONG, 2, 3);
      MemorySegment cpu = call.allocate(DLDevice);
      cpu.set(JAVA_INT, off(DLDevice, "device_type"), kDLCPU);
      MemorySegment f32 = dtype(call, kDLFloat, 32);
      MemorySegment out = call.allocate(ADDRESS);
      must((int) dlpack_tensor_create.H.invokeExact(buf, cpu, 2, shape, MemorySegment.NULL, f32, 0L, 0L,
          release, MemorySegment.NULL, out), "dlpack_tensor_create");
      MemorySegment t = out.get(ADDRESS, 0).reinterpret(DLManagedTensorVersioned.byteSize());
      System.out.println("(b) created a 2x3 float32 tensor");

      // (c) a consumer: version, validation, element [1][2] through the strides, queries, names
      MemorySegment compat = call.allocate(JAVA_INT);
      must((int) dlpack_tensor_check_version_or_delete.H.invokeExact(t, compat), "check_version");
      MemorySegment opt = call.allocate(dlpack_helpers_validate_options);
      opt.set(JAVA_LONG, off(dlpack_helpers_validate_options, "struct_size"), dlpack_helpers_validate_options.byteSize());
      opt.set(JAVA_INT, off(dlpack_helpers_validate_options, "flags"),
          DLPACK_HELPERS_VALIDATE_REQUIRE_CPU_ACCESSIBLE | DLPACK_HELPERS_VALIDATE_REQUIRE_DTYPE);
      MemorySegment.copy(f32, 0, opt, off(dlpack_helpers_validate_options, "dtype"), DLDataType.byteSize());
      MemorySegment layout = call.allocate(dlpack_helpers_layout);
      must((int) dlpack_tensor_validate.H.invokeExact(t, opt, layout), "validate");
      MemorySegment dl = t.asSlice(off(DLManagedTensorVersioned, "dl_tensor"), DLTensor.byteSize());
      int ndim = dl.get(JAVA_INT, off(DLTensor, "ndim"));
      MemorySegment strides = dl.get(ADDRESS, off(DLTensor, "strides")).reinterpret(8L * ndim);
      long at = dl.get(JAVA_LONG, off(DLTensor, "byte_offset"))
          + 4 * (1 * strides.getAtIndex(JAVA_LONG, 0) + 2 * strides.getAtIndex(JAVA_LONG, 1));
      float el = dl.get(ADDRESS, off(DLTensor, "data")).reinterpret(at + 4).get(JAVA_FLOAT, at);
      MemorySegment access = call.allocate(JAVA_INT);
      must((int) dlpack_tensor_host_access.H.invokeExact(t, MemorySegment.NULL, access), "host_access");
      MemorySegment dev = call.allocate(DLDevice);
      must((int) dlpack_get_device.H.invokeExact(t, dev), "get_device");
      MemorySegment devName = call.allocate(DLPACK_HELPERS_NAME_MAX);
      MemorySegment dtypeName = call.allocate(DLPACK_HELPERS_NAME_MAX);
      must((int) dlpack_device_format.H.invokeExact(dev, devName, (long) DLPACK_HELPERS_NAME_MAX, MemorySegment.NULL), "device_format");
      MemorySegment dtypeOfT = dl.asSlice(off(DLTensor, "dtype"), DLDataType.byteSize());
      must((int) dlpack_dtype_format.H.invokeExact(dtypeOfT, dtypeName, (long) DLPACK_HELPERS_NAME_MAX, MemorySegment.NULL), "dtype_format");
      System.out.println("(c) version compat " + compat.get(JAVA_INT, 0)
          + ", valid (numel " + layout.get(JAVA_LONG, off(dlpack_helpers_layout, "numel"))
          + ", " + layout.get(JAVA_LONG, off(dlpack_helpers_layout, "nbytes")) + " bytes), t[1][2] = " + el
          + ", host access " + access.get(JAVA_INT, 0)
          + ", cpu accessible " + (boolean) dlpack_is_cpu_accessible.H.invokeExact(dev)
          + ", device " + devName.getString(0) + " (type " + dev.get(JAVA_INT, off(DLDevice, "device_type"))
          + " id " + dev.get(JAVA_INT, off(DLDevice, "device_id")) + "), dtype " + dtypeName.getString(0));

      // (e) a refused validation: the status, its name and the message
      MemorySegment.copy(dtype(call, kDLInt, 64), 0, opt, off(dlpack_helpers_validate_options, "dtype"), DLDataType.byteSize());
      int st = (int) dlpack_tensor_validate.H.invokeExact(t, opt, MemorySegment.NULL);
      System.out.println("(e) validate as int64: status " + st + " "
          + str((MemorySegment) dlpack_status_string.H.invokeExact(st)) + ": "
          + str((MemorySegment) dlpack_last_error_message.H.invokeExact()));

      // (d) one delete; only then may the producer's arena (buffer, upcall stub) close
      dlpack_tensor_delete.H.invokeExact(t);
      System.out.println("(d) deleted; release callback ran " + released + " time(s)");
      producer.close();
      if (released != 1) System.exit(1);

      // (f) a producer with no callback: the library allocates the buffer and its own deleter
      // frees it; the program fills it through the strides and hands the tensor on.
      MemorySegment err = newError(call);
      must((int) dlpack_tensor_alloc_with_error.H.invokeExact(cpu, 2, shape, MemorySegment.NULL, f32, 0L, out, err), "alloc");
      MemorySegment a = out.get(ADDRESS, 0).reinterpret(DLManagedTensorVersioned.byteSize());
      MemorySegment ad = a.asSlice(off(DLManagedTensorVersioned, "dl_tensor"), DLTensor.byteSize());
      MemorySegment as = ad.get(ADDRESS, off(DLTensor, "strides")).reinterpret(16);
      long aoff = ad.get(JAVA_LONG, off(DLTensor, "byte_offset"));
      MemorySegment adata = ad.get(ADDRESS, off(DLTensor, "data"));
      MemorySegment abuf = adata.reinterpret(aoff + 4 * (as.getAtIndex(JAVA_LONG, 0) + 2 * as.getAtIndex(JAVA_LONG, 1)) + 4);
      for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
          abuf.set(JAVA_FLOAT, aoff + 4 * (i * as.getAtIndex(JAVA_LONG, 0) + j * as.getAtIndex(JAVA_LONG, 1)), 10 * (3 * i + j));
      MemorySegment.copy(f32, 0, opt, off(dlpack_helpers_validate_options, "dtype"), DLDataType.byteSize());
      must((int) dlpack_tensor_validate_with_error.H.invokeExact(a, opt, layout, err), "validate");
      System.out.println("(f) allocated and filled a 2x3 float32 tensor with no callback: valid (numel "
          + layout.get(JAVA_LONG, off(dlpack_helpers_layout, "numel")) + ", "
          + layout.get(JAVA_LONG, off(dlpack_helpers_layout, "nbytes")) + " bytes), t[1][2] = "
          + abuf.get(JAVA_FLOAT, aoff + 4 * (as.getAtIndex(JAVA_LONG, 0) + 2 * as.getAtIndex(JAVA_LONG, 1)))
          + ", data aligned to " + DLPACK_HELPERS_ALLOC_ALIGNMENT + ": " + (adata.address() % DLPACK_HELPERS_ALLOC_ALIGNMENT == 0));
      MemorySegment gpu = call.allocate(DLDevice);
      gpu.set(JAVA_INT, off(DLDevice, "device_type"), kDLCUDA);
      int st2 = (int) dlpack_tensor_alloc_with_error.H.invokeExact(gpu, 2, shape, MemorySegment.NULL, f32, 0L, call.allocate(ADDRESS), err);
      System.out.println("(f) alloc on cuda:0: status " + st2 + " " + str((MemorySegment) dlpack_status_string.H.invokeExact(st2))
          + " (error object: status " + err.get(JAVA_INT, off(dlpack_helpers_error, "status")) + "): "
          + err.getString(off(dlpack_helpers_error, "message")));

      // (g) the error path from 8 virtual threads, on the allocated tensor
      String[] expected = new String[THREADS];
      for (int k = 0; k < THREADS; k++) {
        MemorySegment o = refuse(call, k);
        if ((int) dlpack_tensor_validate_with_error.H.invokeExact(a, o, MemorySegment.NULL, err) == DLPACK_HELPERS_STATUS_OK) System.exit(1);
        expected[k] = err.getString(off(dlpack_helpers_error, "message"));
      }
      long wrong = stress(a, expected, false);
      System.out.println("(g) error object: " + THREADS + " threads, " + THREADS * CALLS + " failing calls, " + wrong + " wrong messages");
      System.out.println("[figure] two-call thread-local path: " + stress(a, expected, true) + " wrong messages of " + THREADS * CALLS);
      dlpack_tensor_delete.H.invokeExact(a);
      System.out.println("(h) deleted the allocated tensor");
      System.exit(wrong == 0 ? 0 : 1);
    }
  }

  // (g) Virtual threads run on a few carrier OS threads and may move between them between two
  // downcalls: the two-call path (status, then the thread-local dlpack_last_error_message())
  // can read another call's message; the error object carries the call's own.
  static final int THREADS = 8, CALLS = 20000;

  static MemorySegment newError(Arena a) {
    MemorySegment e = a.allocate(dlpack_helpers_error);
    e.set(JAVA_LONG, off(dlpack_helpers_error, "struct_size"), dlpack_helpers_error.byteSize());
    return e;
  }

  static MemorySegment refuse(Arena a, int k) {
    MemorySegment o = a.allocate(dlpack_helpers_validate_options);
    o.set(JAVA_LONG, off(dlpack_helpers_validate_options, "struct_size"), dlpack_helpers_validate_options.byteSize());
    o.set(JAVA_INT, off(dlpack_helpers_validate_options, "flags"), DLPACK_HELPERS_VALIDATE_REQUIRE_DTYPE);
    MemorySegment d = dtype(a, kDLInt, 64);
    d.set(JAVA_SHORT, off(DLDataType, "lanes"), (short) (k + 1));
    MemorySegment.copy(d, 0, o, off(dlpack_helpers_validate_options, "dtype"), DLDataType.byteSize());
    return o;
  }

  static long stress(MemorySegment t, String[] expected, boolean twoCall) throws Exception {
    long[] wrong = new long[THREADS];
    Thread[] th = new Thread[THREADS];
    for (int k = 0; k < THREADS; k++) {
      final int kk = k;
      th[k] = Thread.ofVirtual().start(() -> {
        try (Arena a = Arena.ofConfined()) {
          MemorySegment o = refuse(a, kk), e = newError(a);
          for (int i = 0; i < CALLS; i++) {
            String msg;
            if (twoCall) {
              if ((int) dlpack_tensor_validate.H.invokeExact(t, o, MemorySegment.NULL) == DLPACK_HELPERS_STATUS_OK) System.exit(1);
              msg = str((MemorySegment) dlpack_last_error_message.H.invokeExact());
            } else {
              if ((int) dlpack_tensor_validate_with_error.H.invokeExact(t, o, MemorySegment.NULL, e) == DLPACK_HELPERS_STATUS_OK) System.exit(1);
              msg = e.getString(off(dlpack_helpers_error, "message"));
            }
            if (!msg.equals(expected[kk])) wrong[kk]++;
          }
        } catch (Throwable x) {
          throw new RuntimeException(x);
        }
      });
    }
    long total = 0;
    for (int k = 0; k < THREADS; k++) { th[k].join(); total += wrong[k]; }
    return total;
  }

  static MemorySegment dtype(Arena a, int code, int bits) {
    MemorySegment d = a.allocate(DLDataType);
    d.set(JAVA_BYTE, off(DLDataType, "code"), (byte) code);
    d.set(JAVA_BYTE, off(DLDataType, "bits"), (byte) bits);
    d.set(JAVA_SHORT, off(DLDataType, "lanes"), (short) 1);
    return d;
  }
}
