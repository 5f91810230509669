"""A producer's exception reaches the caller of the package unchanged: the same object (so its type,
message, attributes and ``__cause__``), with a traceback that still shows the producer's frame,
from ``__dlpack__`` through every form of ``import_tensor``, and from ``__dlpack_device__``
through ``device`` and ``is_cpu_accessible``. Exceptions that do not derive from ``Exception``
are never caught on the way. ``numpy.from_dlpack`` is the reference: it passes each of them
through as they are."""
import traceback

import numpy as np
import pytest

import dlpack_helpers as dh
from expect import until_integrity, until_native


class Interrupt(BaseException):
    """Not an Exception: like KeyboardInterrupt, it must never be caught by the package."""


KINDS = [BufferError, TypeError, ValueError, NotImplementedError, MemoryError, RuntimeError, Interrupt]
_REWRAPPED = until_native("producer exceptions come back as new exceptions (DLPackHelpersError for most)")
_CAUGHT = until_integrity("an exception that is not an Exception is caught and re-created")
# each kind with what it waits for
KIND_PARAMS = [pytest.param(k, id=k.__name__, marks=[_CAUGHT if k is Interrupt else _REWRAPPED]) for k in KINDS]


class Raising:
    """Raises a fresh `kind` from `__dlpack__` or `__dlpack_device__` on every call, keeping
    each one; the other method works."""

    def __init__(self, kind, where):
        self.kind, self.where, self.raised = kind, where, []

    def _raise(self):
        exc = self.kind(f"{self.kind.__name__} from the producer's {self.where}")
        exc.marker = object()  # an attribute a re-created exception would not carry
        self.raised.append(exc)
        raise exc

    def __dlpack__(self, **kw):
        if self.where == "__dlpack__":
            self._raise()
        return np.arange(3.0).__dlpack__(**kw)

    def __dlpack_device__(self):
        if self.where == "__dlpack_device__":
            self._raise()
        return (1, 0)


def _check(got, producer):
    exc = got.value
    assert exc is producer.raised[-1], f"{type(exc).__name__}: {exc} is not the producer's exception"
    assert type(exc) is producer.kind
    frames = [f.name for f in traceback.extract_tb(exc.__traceback__)]
    assert producer.where in frames and "_raise" in frames, frames
    if producer.kind is not TypeError:
        assert len(producer.raised) == 1, "retried after an exception other than TypeError"


def _not_caught_as_exception(kind, call):
    """Run `call`; for a `kind` that is not an Exception, nothing may arrive as an Exception
    (an ordinary ``except Exception`` in the caller must not see it)."""
    if issubclass(kind, Exception):
        return call()
    try:
        return call()
    except Exception as e:  # noqa: BLE001 (what we check is what arrives here)
        raise AssertionError(f"arrived as Exception: {type(e).__name__}: {e}") from e


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
def test_numpy_passes_producer_exceptions_through(kind):
    """The reference behaviour, established on the installed NumPy."""
    p = Raising(kind, "__dlpack__")
    with pytest.raises(kind) as got:
        np.from_dlpack(p)
    assert got.value is p.raised[-1]


IMPORT_FORMS = {
    "default": lambda p: dh.import_tensor(p),
    "max_version": lambda p: dh.import_tensor(p, max_version=(1, 3)),
    "copy": lambda p: dh.import_tensor(p, copy=False),
    "dl_device": lambda p: dh.import_tensor(p, dl_device=(1, 0)),
    "exchange_api": lambda p: dh.import_tensor(p, use_exchange_api=True),
}


@pytest.mark.parametrize("form", IMPORT_FORMS)
@pytest.mark.parametrize("kind", KIND_PARAMS)
def test_dlpack_exception_propagates_unchanged(kind, form):
    p = Raising(kind, "__dlpack__")
    with pytest.raises(kind) as got:
        _not_caught_as_exception(kind, lambda: IMPORT_FORMS[form](p))
    _check(got, p)


DEVICE_FORMS = {
    "device": lambda p: dh.device(p),
    "is_cpu_accessible": lambda p: dh.is_cpu_accessible(p),
}


@pytest.mark.parametrize("form", DEVICE_FORMS)
@pytest.mark.parametrize("kind", KIND_PARAMS)
def test_dlpack_device_exception_propagates_unchanged(kind, form):
    p = Raising(kind, "__dlpack_device__")
    with pytest.raises(kind) as got:
        _not_caught_as_exception(kind, lambda: DEVICE_FORMS[form](p))
    _check(got, p)


@_REWRAPPED
def test_cause_and_context_of_a_producer_exception_are_kept():
    class Chained:
        def __dlpack__(self, **kw):
            try:
                raise KeyError("inner")
            except KeyError as inner:
                raise ValueError("outer") from inner

        def __dlpack_device__(self):
            return (1, 0)

    with pytest.raises(ValueError) as got:
        dh.import_tensor(Chained())
    assert isinstance(got.value.__cause__, KeyError) and got.value.__cause__.args == ("inner",)


def test_the_package_still_works_after_a_producer_exception():
    """No Python error state is left behind by a failed import."""
    for kind in KINDS:
        try:
            dh.import_tensor(Raising(kind, "__dlpack__"))
        except BaseException:  # noqa: BLE001 (any outcome; what follows is checked)
            pass
        with dh.import_tensor(np.arange(4.0)) as t:
            assert np.from_dlpack(t).tolist() == [0.0, 1.0, 2.0, 3.0]
