"""The product a Python user installs: the `dlpack_helpers` wheel, at work (run by scripts/demo).

1. The package: which wheel, which library file (one copy per process).
2. A tensor crossing from one real producer to another consumer through `dh`:
   PyArrow -> dh.import_tensor -> NumPy (np.from_dlpack), and
   NumPy -> dh.import_tensor -> TVM-FFI (tvm_ffi.from_dlpack, through the DLPack 1.3 C exchange
   API the Tensor publishes), each printed with the library's own names (cpu:0, float64).
3. The wheel's C SDK: `dlpack_sum_example`, a C extension built against the installed wheel
   (examples/python_extension, find_package(dlpack_helpers) in the wheel), summing a PyArrow
   array, a NumPy view and a dh.Tensor; then /proc/self/maps shows one library file mapped for
   the package, the C extension and ctypes together.
Exit status 1 if any value differs or the library is mapped twice.
"""

import ctypes
import os
import sys

import numpy as np
import pyarrow as pa

import dlpack_helpers as dh

failures = 0


def expect(cond, what):
    global failures
    if not cond:
        failures += 1
        print(f"    !! unexpected: {what}")


def mapped_library_files():
    files = set()
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split(None, 5)
            if len(parts) == 6 and os.path.basename(parts[5].strip()).startswith("libdlpack_helpers"):
                files.add(parts[5].strip())
    return sorted(files)


def show(t):
    return (f"device {t.device}, dtype {t.dtype}, shape {t.shape}, strides {t.strides} elements, "
            f"DLPack {t.version[0]}.{t.version[1]} {t.source}")


print(f"package: dlpack_helpers {dh.__version__} from {os.path.dirname(dh.__file__)}")
print(f"  the C library, one file: {dh.get_library_path()}")
print(f"  its SDK: include {dh.get_include()}, CMake {dh.get_cmake_dir()}")

print("\n  PyArrow -> dh.import_tensor -> NumPy")
arrow = pa.array([1.5, 2.5, 3.5, 4.5], type=pa.float64())
with dh.import_tensor(arrow) as t:
    print(f"    {show(t)}")
    expect((t.device, t.dtype) == ("cpu:0", "float64"), f"{t.device} {t.dtype}")
    view = np.from_dlpack(t)
print(f"    NumPy sees {view.tolist()} (the PyArrow buffer, no copy: "
      f"{view.ctypes.data == arrow.buffers()[1].address})")
expect(view.tolist() == arrow.to_pylist(), "NumPy's values differ from PyArrow's")
expect(view.ctypes.data == arrow.buffers()[1].address, "NumPy's view is a copy")
del view

print("\n  NumPy (a reversed float32 view) -> dh.import_tensor -> TVM-FFI")
try:
    import tvm_ffi
except ImportError:  # optional: scripts/requirements.txt installs it into .venv
    tvm_ffi = None
source = np.arange(6, dtype=np.float32)[::-1]
with dh.import_tensor(source) as t:
    print(f"    {show(t)}")
    expect((t.device, t.dtype) == ("cpu:0", "float32"), f"{t.device} {t.dtype}")
    if tvm_ffi is None:
        print("    (TVM-FFI is not installed: skipped)")
    else:
        ft = tvm_ffi.from_dlpack(t)
        back = np.from_dlpack(ft)
        print(f"    TVM-FFI sees a {ft.dtype} tensor of shape {tuple(ft.shape)} on {ft.device}: {back.tolist()}")
        expect(back.tolist() == source.tolist(), "TVM-FFI's values differ from NumPy's")
        del ft, back

print("\n  the wheel's C SDK: dlpack_sum_example, a C extension built against the installed wheel")
try:
    import dlpack_sum_example as ex
except ImportError as e:
    print(f"    not built: {e}")
    failures += 1
else:
    for name, obj, want in [("PyArrow array", arrow, 12.0),
                            ("NumPy strided view", np.arange(10.0)[::-2], 25.0),
                            ("dh.Tensor", dh.import_tensor(np.ones((2, 3))), 6.0)]:
        got = ex.sum(obj)
        print(f"    sum({name}) = {got}   [{ex.describe(obj) if name != 'dh.Tensor' else 'a dh.Tensor'}]")
        expect(got == want, f"sum({name}) is {got}, expected {want}")

ctypes.CDLL(dh.get_library_path())  # a ctypes user, by the documented name
files = mapped_library_files()
print(f"\n  mapped in this process (package, C extension, ctypes): {files}")
expect(files == [dh.get_library_path()], "the library is mapped more than once")

print(f"\npackage demo: {'FAILED' if failures else 'every value crossed intact; one library in the process'}")
sys.exit(1 if failures else 0)
