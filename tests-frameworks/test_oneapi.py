"""oneAPI on a real runtime without a GPU (issue 25 item 6): dpnp 0.20 / dpctl 0.22.1 arrays on
the SYCL CPU device of Intel's OpenCL CPU runtime (``OCL_ICD_FILENAMES`` names the venv's
``libintelocl.so``) are real ``kDLOneAPI`` producers: device 14, a non-zero ``byte_offset`` on
slices, ``SyclQueue`` objects as streams. Runs in its own venv (scripts/oneapi-requirements.txt,
installed by scripts/test.d/57-frameworks.sh, which skips with the reason when the pinned set
cannot be installed); skipped anywhere dpnp is missing."""
import numpy as np
import pytest

dpnp = pytest.importorskip("dpnp")
dpctl = pytest.importorskip("dpctl")
dpt = pytest.importorskip("dpnp.tensor")

import dlpack_helpers as dh  # noqa: E402

ONEAPI = 14
BASE = np.arange(12, dtype=np.float32).reshape(3, 4)


@pytest.fixture(scope="module")
def queue():
    devices = dpctl.get_devices()
    if not devices:
        pytest.skip("no SYCL device (is OCL_ICD_FILENAMES set to the venv's libintelocl.so?)")
    return dpctl.SyclQueue(devices[0])


def test_import_of_a_slice_keeps_device_and_byte_offset(queue):
    x = dpt.asarray(BASE, sycl_queue=queue)
    view = x[1:, ::2]
    assert view.__dlpack_device__()[0] == ONEAPI
    with dh.import_tensor(view) as t:
        assert t.device == (ONEAPI, view.__dlpack_device__()[1])
        assert t.shape == (2, 2) and t.strides == (4, 2)
        assert t.byte_offset == 4 * 4  # row 1 of a float32 (3, 4) array: dpnp's offset, in bytes
        assert not t.readonly and t.readonly_origin is None


def test_re_export_takes_a_queue_as_stream(queue):
    x = dpt.asarray(BASE, sycl_queue=queue)
    with dh.import_tensor(x[1:]) as t:
        for kw in ({"stream": queue}, {"stream": queue, "max_version": (1, 3)}):
            back = dpt.from_dlpack(_Cap(t.__dlpack__(**kw), t))
            np.testing.assert_array_equal(dpt.asnumpy(back), BASE[1:])
        with pytest.raises(TypeError, match="addressof_ref"):
            t.__dlpack__(stream=object())
        with pytest.raises(ValueError):
            t.__dlpack__(stream=0)  # the array API names no integer streams for oneAPI


def test_host_access_is_never_claimed_without_an_answer(queue):
    x = dpt.asarray(BASE, sycl_queue=queue)
    with dh.import_tensor(x) as t:
        # USM device memory on the OpenCL CPU device: no Level Zero context to ask, so the
        # library does not claim host access (never "always" from the device type alone)
        assert t.host_access() in ("unknown", "always")
        assert not dh.is_cpu_accessible(x) or t.host_access() == "always"


def test_round_trips_with_numpy(queue):
    # NumPy -> dpnp through the package, and dpnp -> NumPy through the package (the producer
    # copies to the host when asked for the CPU device)
    with dh.import_tensor(BASE) as t:
        on_device = dpt.asarray(dpt.from_dlpack(t), sycl_queue=queue)
    np.testing.assert_array_equal(dpt.asnumpy(on_device), BASE)
    with dh.import_tensor(on_device, dl_device=(1, 0)) as h:
        assert h.device == (1, 0) and h.flags & 2  # IS_COPIED: dpnp copied it to the host
        np.testing.assert_array_equal(np.from_dlpack(h), BASE)
    with dh.import_tensor(on_device[1:, 1:], dl_device=(1, 0)) as h:
        np.testing.assert_array_equal(np.from_dlpack(h), BASE[1:, 1:])


class _Cap:
    """Hands a ready capsule to a consumer (kept alive with its source Tensor)."""

    def __init__(self, cap, t):
        self.cap, self.t = cap, t

    def __dlpack__(self, **_):
        return self.cap

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()
