"""PyTorch's and PaddlePaddle's C exchange tables against their own ``Tensor.__dlpack__``
(issue 25: nothing lost, nothing invented), run by scripts/test frameworks in the framework venv.

PyTorch's table (``managed_tensor_from_py_object_no_sync``) exports any tensor's memory as it
lies, skipping the refusals and the dispatch of ``Tensor.__dlpack__`` (torch/_tensor.py): a
tensor with the conjugate bit would come through with its unconjugated memory (wrong values), a
``requires_grad`` tensor writable, a sparse tensor with a ``RuntimeError`` from deep inside
PyTorch, and a subclass's ``__torch_function__`` would never run. The import checks those
properties and, when one is set, calls ``__dlpack__``, so the user gets PyTorch's own answer:
its ``BufferError``, or for the negative bit (which PyTorch 2.15's ``__dlpack__`` exports as its
raw memory, un-negated) exactly what ``__dlpack__`` gives (the table gives the same, so it stays
in use). Ordinary tensors keep the table. PaddlePaddle's table likewise skips its
``__dlpack__``'s refusals of a tensor with ``stop_gradient=False`` (exported writable) and of a
sparse tensor (a ``RuntimeError`` from the table).
"""
import ctypes
from ctypes import byref

import numpy as np
import pytest

from frameworks import dh, paddle, torch
from dlpack_helpers import _lib
from dlpack_helpers._lib import lib

EXCHANGE = _lib.IMPORTED_EXCHANGE_API


def _sparse_csr():
    return torch.tensor([[1.0, 0.0], [0.0, 2.0]]).to_sparse_csr()


REFUSED = {
    "conj": lambda: torch.tensor([1 + 2j, 3 - 4j]).conj(),
    "requires_grad": lambda: torch.tensor([1.0, 2.0], requires_grad=True),
    "parameter": lambda: torch.nn.Parameter(torch.ones(2, 3)),
    "grad_view": lambda: torch.ones(2, 3, requires_grad=True)[0],
    "sparse_coo": lambda: torch.tensor([1.0, 0.0, 2.0]).to_sparse(),
    "sparse_csr": _sparse_csr,
}


def _dlpack_error(t):
    with pytest.raises(Exception) as direct:
        t.__dlpack__(max_version=(1, 3))
    return direct.value


def _assert_dlpacks_answer(t):
    """``dh.import_tensor(t)`` raises what ``t.__dlpack__(max_version=(1, 3))`` raises (type and
    message); returns that exception."""
    expected = _dlpack_error(t)
    with pytest.raises(type(expected)) as got:
        dh.import_tensor(t)
    assert str(got.value) == str(expected)
    return expected


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_by_dlpack_is_refused_through_the_package(name):
    t = REFUSED[name]()
    expected = _assert_dlpacks_answer(t)
    assert isinstance(expected, BufferError)  # what PyTorch 2.15's __dlpack__ raises


@pytest.mark.parametrize("name", sorted(REFUSED))
@pytest.mark.parametrize("with_stream", [False, True])
def test_refused_through_the_c_import_with_the_exchange_flag(name, with_stream):
    t = REFUSED[name]()
    expected = str(_dlpack_error(t))
    req = _lib.ImportRequest()
    req.flags = _lib.IMPORT_EXCHANGE_API
    out = ctypes.POINTER(_lib.DLManagedTensorVersioned)()
    how = ctypes.c_uint32(0)
    if with_stream:
        s = _lib.Stream()
        rc = lib.dlpack_object_import_with_stream(t, byref(req), byref(out), byref(how), byref(s))
    else:
        rc = lib.dlpack_object_import(t, byref(req), byref(out), byref(how))
    if rc == 0:
        lib.dlpack_tensor_delete(out)
    assert lib.dlpack_status_string(rc) == b"PRODUCER_BUFFER_ERROR"
    assert expected in lib.dlpack_last_error_message().decode()


NEG = {
    "neg_view": lambda: torch._neg_view(torch.tensor([1.0, 2.0, 3.0])),
    "conj_imag": lambda: torch.tensor([1 + 2j, 3 - 4j]).conj().imag,
}


@pytest.mark.parametrize("name", sorted(NEG))
def test_negative_bit_gets_what_dlpack_gives(name):
    """PyTorch 2.15's ``__dlpack__`` does not refuse the negative bit: it exports the memory as
    it lies (un-negated: ``t.tolist()`` differs from what any consumer reads). The table gives
    the same, so it stays in use; if a later PyTorch refuses or resolves it, this test fails and
    the guard (``rules::TableGuard::Torch``) must check ``is_neg()`` too."""
    t = NEG[name]()
    assert t.is_neg()
    direct = np.from_dlpack(t)  # through PyTorch's own __dlpack__
    np.testing.assert_array_equal(direct, -np.asarray(t.tolist()))  # PyTorch's fault, kept
    with dh.import_tensor(t) as got, dh.import_tensor(t, use_exchange_api=False) as ref:
        assert got.how & EXCHANGE and not ref.how & EXCHANGE
        np.testing.assert_array_equal(np.from_dlpack(got), direct)
        assert (got.readonly, got.flags, got.shape, got.strides) == (
            ref.readonly, ref.flags, ref.shape, ref.strides)


def test_ordinary_tensors_keep_the_table():
    cases = [
        torch.ones(2, 3, dtype=torch.float32),
        torch.arange(6.0).reshape(2, 3).t(),
        torch.ones(2, 3, requires_grad=True).detach(),
        torch.tensor([1 + 2j]).imag.resolve_neg(),
        torch.arange(6, dtype=torch.int32).reshape(2, 3),
        torch.nn.Parameter(torch.ones(2, 3), requires_grad=False),  # dispatch disabled
    ]
    for t in cases:
        with dh.import_tensor(t) as got:
            assert got.how & EXCHANGE and got.source == "exchange_api", t
            np.testing.assert_array_equal(np.from_dlpack(got), t.detach().numpy())


def test_complex_tensors_are_imported_through_dlpack():
    """Only complex tensors carry PyTorch's conjugate bit, and ``is_conj()`` may run Python code
    (a ``TorchFunctionMode``), which must not run after the table exported: a complex export is
    released and ``__dlpack__`` answers (it calls ``is_conj()`` before it exports)."""
    for t in (torch.tensor([1 + 2j]), torch.tensor([1 + 2j]).conj().resolve_conj()):
        with dh.import_tensor(t) as got:
            assert not got.how & EXCHANGE and got.source == "versioned_capsule", t
            np.testing.assert_array_equal(np.from_dlpack(got), t.numpy())


def test_subclass_torch_function_is_called():
    """``Tensor.__dlpack__`` dispatches through a subclass's ``__torch_function__``; the table
    would skip it, so such a subclass is imported through ``__dlpack__``."""
    calls = []

    class Traced(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            calls.append(getattr(func, "__name__", func))
            return super().__torch_function__(func, types, args, kwargs or {})

    with dh.import_tensor(torch.arange(4.0).as_subclass(Traced)) as t:
        assert not t.how & EXCHANGE
    assert "__dlpack__" in calls
    calls.clear()
    with dh.import_tensor(torch.arange(4.0).as_subclass(Traced), use_exchange_api=False):
        pass
    assert "__dlpack__" in calls


def test_exchange_api_find_still_answers_for_torch():
    """The C lookup keeps handing out PyTorch's table (its documented caveat applies)."""
    api = ctypes.POINTER(_lib.DLPackExchangeAPI)()
    assert lib.dlpack_exchange_api_find(torch.ones(2), byref(api)) == 0


PADDLE_REFUSED = {
    "requires_grad": lambda: paddle.to_tensor([1.0, 2.0], stop_gradient=False),
    "int_requires_grad": lambda: paddle.to_tensor([1, 2], stop_gradient=False),
    "sparse_coo": lambda: paddle.to_tensor([[1.0, 0.0], [0.0, 2.0]]).to_sparse_coo(2),
}


@pytest.mark.parametrize("name", sorted(PADDLE_REFUSED))
def test_paddle_refused_by_dlpack_is_refused_through_the_package(name):
    t = PADDLE_REFUSED[name]()
    expected = _assert_dlpacks_answer(t)
    assert isinstance(expected, BufferError)  # what PaddlePaddle 3.3's __dlpack__ raises


def test_paddle_ordinary_tensors_keep_the_table():
    for t in (paddle.ones([2, 3]), paddle.arange(6, dtype="int32"),
              paddle.to_tensor([1.0], stop_gradient=False).detach()):
        with dh.import_tensor(t) as got:
            assert got.how & EXCHANGE and got.source == "exchange_api"
            np.testing.assert_array_equal(np.from_dlpack(got), t.numpy())


def test_an_answer_that_is_not_a_bool_goes_to_dlpack():
    """The import lets the table stand in only on the exact ``False`` it expects; any other
    answer (here a subclass whose ``requires_grad`` is a truthy non-bool) is left to
    ``__dlpack__``, which decides by truth value."""

    class Odd(torch.Tensor):
        @property
        def requires_grad(self):
            return 1

    t = torch.arange(3.0).as_subclass(Odd)
    _assert_dlpacks_answer(t)


def _int_requires_grad_true():
    class IntRequiresGrad(torch.Tensor):
        @property
        def requires_grad(self):
            return True
    return torch.arange(3).as_subclass(IntRequiresGrad)


def _int_requires_grad_raises():
    class IntRequiresGradRaises(torch.Tensor):
        @property
        def requires_grad(self):
            raise RuntimeError("requires_grad of this subclass raises")
    return torch.arange(3).as_subclass(IntRequiresGradRaises)


def _real_is_conj_true():
    class RealConj(torch.Tensor):
        def is_conj(self):
            return True
    return torch.arange(3.0).as_subclass(RealConj)


def _layout_sparse():
    class SparseLayout(torch.Tensor):
        @property
        def layout(self):
            return torch.sparse_coo
    return torch.arange(3.0).as_subclass(SparseLayout)


def _device_raises():
    class DeviceRaises(torch.Tensor):
        @property
        def device(self):
            raise RuntimeError("device of this subclass raises")
    return torch.arange(3.0).as_subclass(DeviceRaises)


SUBCLASS_READS = {
    "int_requires_grad_true": _int_requires_grad_true,
    "int_requires_grad_raises": _int_requires_grad_raises,
    "real_is_conj_true": _real_is_conj_true,
    "layout_sparse": _layout_sparse,
    "device_raises": _device_raises,
}


@pytest.mark.parametrize("name", sorted(SUBCLASS_READS))
def test_subclass_overriding_what_dlpack_reads_gets_dlpacks_answer(name):
    """``Tensor.__dlpack__`` decides by ``self.requires_grad``, ``self.is_conj()``,
    ``self.layout`` and ``self.device``; a subclass that defines one of them changes that answer
    where the table (which reads the C++ tensor) does not see it. The per-import checks skip
    integer and real tensors, so such a subclass was exported through the table (an int
    tensor whose ``requires_grad`` raises came out writable): the type must not use the table."""
    t = SUBCLASS_READS[name]()
    expected = _assert_dlpacks_answer(t)
    req = _lib.ImportRequest()
    req.flags = _lib.IMPORT_EXCHANGE_API
    out = ctypes.POINTER(_lib.DLManagedTensorVersioned)()
    how = ctypes.c_uint32(0)
    rc = lib.dlpack_object_import(t, byref(req), byref(out), byref(how))
    if rc == 0:
        lib.dlpack_tensor_delete(out)
    assert rc != 0 and str(expected) in lib.dlpack_last_error_message().decode()


def test_subclass_getattribute_gets_dlpacks_answer():
    """A subclass's ``__getattribute__`` decides what every attribute ``__dlpack__`` reads
    answers (here ``requires_grad`` True on an integer tensor, which the per-import checks
    skip), and would run Python code in those checks after the table exported."""

    class Attr(torch.Tensor):
        def __getattribute__(self, name):
            if name == "requires_grad":
                return True
            return super().__getattribute__(name)

    t = torch.arange(3).as_subclass(Attr)
    _assert_dlpacks_answer(t)


def test_instance_is_conj_runs_before_any_export():
    """``t.is_conj = f`` (an attribute in the instance's ``__dict__``) is what
    ``Tensor.__dlpack__`` calls, before it exports. The import called it after PyTorch's table
    had exported: an ``f`` that resizes the tensor freed the memory the export pointed at (the
    export kept the new shape with the old data pointer, a read after free). Such an attribute
    is left to ``__dlpack__``, so ``f`` runs first and the export is of the resized tensor."""
    n = 4096
    t = torch.tensor([1 + 2j, 3 - 4j])

    def resize_then_false():
        t.resize_(n)
        t.zero_()
        return False

    t.is_conj = resize_then_false
    with dh.import_tensor(t) as got:
        assert not got.how & EXCHANGE  # checked before any element is read
        assert got.shape == (n,)
        a = np.from_dlpack(got)
        assert a.ctypes.data == t.data_ptr()
        np.testing.assert_array_equal(a, np.zeros(n, dtype=np.complex64))


def test_instance_is_conj_on_a_real_tensor_gets_dlpacks_answer():
    """An instance attribute ``is_conj`` is what ``Tensor.__dlpack__`` calls, also on a real
    tensor (the table exported it: the instance dictionary was not looked at)."""
    t = torch.arange(3.0)
    t.is_conj = lambda: True
    _assert_dlpacks_answer(t)


def _unreadable(attr):
    def raises(cls):
        raise RuntimeError(f"{attr} of this metaclass raises")
    # In the class body: setattr on a metaclass cannot replace type's __mro__ descriptor.
    return type(type(torch.Tensor))("Meta", (type(torch.Tensor),), {attr: property(raises)})


@pytest.mark.parametrize("attr", ["__mro__", "__dict__"])
def test_unreadable_mro_gets_dlpacks_answer(attr):
    """A metaclass whose ``__mro__`` (or ``__dict__``) property raises hides which class
    publishes the table and whether the subclass overrides ``__dlpack__``: the import used
    PyTorch's table (unguarded for ``__mro__``) and skipped the override, so the tensor came
    out where the subclass's ``__dlpack__`` raises."""

    class Hidden(torch.Tensor, metaclass=_unreadable(attr)):
        def __dlpack__(self, **kwargs):
            raise BufferError("the subclass's own __dlpack__")

    t = torch.ones(2).as_subclass(Hidden)
    with pytest.raises(BufferError, match="the subclass's own __dlpack__"):
        dh.import_tensor(t)


def _metaclass_attribute(requires_grad):
    class Meta(type(torch.Tensor)):
        @property
        def requires_grad(cls):
            return "a class-level answer"

    class WithMeta(torch.Tensor, metaclass=Meta):
        pass
    return torch.ones(2, requires_grad=requires_grad).as_subclass(WithMeta)


def _getattr_hook(requires_grad):
    class WithGetattr(torch.Tensor):
        def __getattr__(self, name):
            raise AttributeError(name)
    return torch.ones(2, requires_grad=requires_grad).as_subclass(WithGetattr)


@pytest.mark.parametrize("make", [_metaclass_attribute, _getattr_hook])
@pytest.mark.parametrize("requires_grad", [False, True])
def test_requires_grad_read_without_the_cached_getter_answers_the_same(make, requires_grad):
    """Issue 26: where the attribute lookup of ``requires_grad`` would call PyTorch's getset
    descriptor, the import calls its getter directly; a type with a non-generic attribute hook
    (``__getattr__``) is read the generic way, and a metaclass attribute of the same name
    changes nothing for instances. Either way the answer is ``__dlpack__``'s: refused when the
    tensor requires grad, the table otherwise."""
    t = make(requires_grad)
    if requires_grad:
        _assert_dlpacks_answer(t)
    else:
        with dh.import_tensor(t) as got:
            assert got.how & EXCHANGE
            assert not got.readonly


def _assigned_later_requires_grad():
    class AssignedLater(torch.Tensor):
        pass
    with dh.import_tensor(torch.ones(2).as_subclass(AssignedLater)) as first:
        assert first.how & EXCHANGE
    AssignedLater.requires_grad = property(lambda self: True)
    return torch.ones(2).as_subclass(AssignedLater)


def _assigned_later_getattribute():
    class GetattributeLater(torch.Tensor):
        pass
    with dh.import_tensor(torch.ones(2).as_subclass(GetattributeLater)) as first:
        assert first.how & EXCHANGE

    def lying(self, name):
        return True if name == "requires_grad" else torch.Tensor.__getattribute__(self, name)
    GetattributeLater.__getattribute__ = lying
    return torch.ones(2).as_subclass(GetattributeLater)


def _paddle_assigned_later_stop_gradient():
    class PaddleLater(paddle.Tensor):
        pass
    with dh.import_tensor(PaddleLater(paddle.ones([2]))) as first:
        assert first.how & EXCHANGE
    PaddleLater.stop_gradient = property(lambda self: False)
    return PaddleLater(paddle.ones([2]))


def _metaclass_hiding_requires_grad():
    getset = vars(torch._C.TensorBase)["requires_grad"]

    class Hiding(type(torch.Tensor)):
        def __getattribute__(cls, name):
            if name == "__dict__":
                d = dict(type.__getattribute__(cls, "__dict__"))
                d.pop("requires_grad", None)
                return d
            if name == "requires_grad":
                return getset
            return super().__getattribute__(name)

    class Hidden(torch.Tensor, metaclass=Hiding):
        @property
        def requires_grad(self):
            return True
    return torch.ones(2).as_subclass(Hidden)


PER_IMPORT_READS = {
    "requires_grad_assigned_after_the_first_import": _assigned_later_requires_grad,
    "getattribute_assigned_after_the_first_import": _assigned_later_getattribute,
    "paddle_stop_gradient_assigned_after_the_first_import": _paddle_assigned_later_stop_gradient,
    "metaclass_hiding_the_class_requires_grad": _metaclass_hiding_requires_grad,
}


@pytest.mark.parametrize("name", sorted(PER_IMPORT_READS))
def test_the_per_import_read_sees_what_the_attribute_lookup_sees(name):
    """Issue 26's faster read of ``requires_grad``/``stop_gradient`` (the getset descriptor's
    getter, called directly) stands in for the attribute lookup only where the lookup would
    call that descriptor, checked on every import: a property or ``__getattribute__``
    assigned to the class after its first import, or a metaclass that hides the class's own
    property from ``__dict__`` and ``getattr(cls, ...)``, is seen, and the user gets
    ``__dlpack__``'s refusal (a first version cached the decision per type and exported these
    tensors writable through the table)."""
    t = PER_IMPORT_READS[name]()
    _assert_dlpacks_answer(t)


@pytest.mark.xfail(strict=True, reason=(
    "not fixed: the answer about a type (table, guard, overrides) is cached for the process on "
    "the first import; a __dlpack__ (or is_conj, layout, device) assigned to the class "
    "afterwards is not seen, and the table skips it (requires_grad is read on every import, "
    "and a __torch_function__ sees that read). Seeing it needs the type's version tag (not in "
    "the stable ABI) or a type watcher (CPython 3.12+)"))
def test_class_changed_after_the_first_import_gets_dlpacks_answer():
    class Later(torch.Tensor):
        pass

    with dh.import_tensor(torch.ones(2).as_subclass(Later)) as first:
        assert first.how & EXCHANGE

    def override(self, **kwargs):
        raise BufferError("assigned after the first import")
    Later.__dlpack__ = override
    with pytest.raises(BufferError, match="assigned after the first import"):
        dh.import_tensor(torch.ones(2).as_subclass(Later))


def test_paddle_subclass_overriding_what_dlpack_reads_gets_dlpacks_answer():
    """PaddlePaddle's ``__dlpack__`` decides by ``self.is_sparse()`` (and ``stop_gradient``,
    ``place``): a subclass whose ``is_sparse()`` answers True was exported by the table."""

    class SparseSaid(paddle.Tensor):
        def is_sparse(self):
            return True

    t = SparseSaid(paddle.ones([2]))
    _assert_dlpacks_answer(t)


def test_subclass_republishing_the_table_is_still_guarded():
    """A subclass that puts PyTorch's table in its own ``__dict__`` (module ``__main__``) still
    hands out PyTorch's table: it was used unguarded, so a conjugate tensor came out with its
    unconjugated memory (wrong values) and a tensor that requires grad writable."""

    class Republished(torch.Tensor):
        __dlpack_c_exchange_api__ = torch.Tensor.__dlpack_c_exchange_api__

    for t in (torch.tensor([1 + 2j]).conj().as_subclass(Republished),
              torch.ones(2, requires_grad=True).as_subclass(Republished)):
        _assert_dlpacks_answer(t)
    with dh.import_tensor(torch.ones(2).as_subclass(Republished)) as ok:
        assert ok.how & EXCHANGE


def test_paddle_instance_is_sparse_gets_dlpacks_answer():
    """PaddlePaddle's ``__dlpack__`` calls ``self.is_sparse()``: an instance attribute of that
    name is its answer (the table exported it)."""
    t = paddle.ones([2])
    t.is_sparse = lambda: True
    _assert_dlpacks_answer(t)


def test_subclass_publishing_its_own_table_keeps_it():
    """A subclass of ``torch.Tensor`` that publishes a table of its own (here the package's
    ``Tensor`` table) with its own ``__dlpack__`` keeps that table: PyTorch's guard applies only
    when the subclass re-publishes PyTorch's table."""

    class Own(torch.Tensor):
        __dlpack_c_exchange_api__ = dh.Tensor.__dlpack_c_exchange_api__

        def __dlpack__(self, **kwargs):
            return super().__dlpack__(**kwargs)

    own = ctypes.POINTER(_lib.DLPackExchangeAPI)()
    assert lib.dlpack_exchange_api_find(torch.ones(2).as_subclass(Own), byref(own)) == 0, \
        lib.dlpack_last_error_message()
    ref = ctypes.POINTER(_lib.DLPackExchangeAPI)()
    assert lib.dlpack_exchange_api_find(dh.import_tensor(np.arange(2.0)), byref(ref)) == 0
    assert ctypes.addressof(own.contents) == ctypes.addressof(ref.contents)


# ------------------------------------------ issue 26, new-user run: what the table skipped

# Each case makes, in a child process, a tensor whose requires_grad read (PyTorch's getter, or a
# property) resizes it: the storage moves. The import read it AFTER the table had exported, so
# the export pointed at the freed buffer (a read after free: SIGSEGV for a 64 MiB tensor). Now
# every read that may run Python code comes first: the import sees the resized tensor.
_RESIZED_SETUP = {
    "torch_function_mode": """
from torch.overrides import TorchFunctionMode
class Resizing(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        if getattr(func, "__name__", "") == "__get__" and args and args[0] is x and x.numel() == N:
            with torch._C.DisableTorchFunction():
                x.resize_(4 * N)
        return func(*args, **(kwargs or {}))
x = torch.ones(N)
with Resizing():
    t = dh.import_tensor(x)
""",
    "property_assigned_later": """
class Later(torch.Tensor):
    pass
dh.import_tensor(torch.ones(2).as_subclass(Later)).release()
def requires_grad(self):
    if self.numel() == N:
        torch.Tensor.resize_(self, 4 * N)
    return False
Later.requires_grad = property(requires_grad)
x = torch.ones(N).as_subclass(Later)
t = dh.import_tensor(x)
""",
    "torch_function_assigned_later": """
class Later(torch.Tensor):
    pass
dh.import_tensor(torch.ones(2).as_subclass(Later)).release()
def tf(cls, func, types, args=(), kwargs=None):
    with torch._C.DisableTorchFunctionSubclass():
        if args and args[0] is x and x.numel() == N:
            torch.Tensor.resize_(x, 4 * N)
        return func(*args, **(kwargs or {}))
Later.__torch_function__ = classmethod(tf)
x = torch.ones(N).as_subclass(Later)
t = dh.import_tensor(x)
""",
    "getattribute_assigned_later": """
class Later(torch.Tensor):
    pass
dh.import_tensor(torch.ones(2).as_subclass(Later)).release()
def getattribute(self, name):
    if name == "requires_grad" and torch.Tensor.numel(self) == N:
        torch.Tensor.resize_(self, 4 * N)
    return torch.Tensor.__getattribute__(self, name)
Later.__getattribute__ = getattribute
x = torch.ones(N).as_subclass(Later)
t = dh.import_tensor(x)
""",
}


@pytest.mark.parametrize("name", sorted(_RESIZED_SETUP))
def test_no_python_code_runs_after_the_table_exported(name):
    import subprocess
    import sys
    import textwrap
    code = ("import numpy as np, torch, dlpack_helpers as dh\nN = 1 << 16\n" + _RESIZED_SETUP[name]
            + textwrap.dedent("""
                a = np.from_dlpack(t)
                print(x.numel() == 4 * N, t.shape == (4 * N,), a.ctypes.data == x.data_ptr(),
                      bool((a[:N] == 1).all()))
            """))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, (r.returncode, r.stderr[-2000:])
    assert r.stdout.split() == ["True"] * 4, r.stdout


def test_paddle_stop_gradient_read_comes_before_the_export():
    """The same for PaddlePaddle's ``stop_gradient`` (a property assigned after the first
    import that replaces the tensor's data): the import gave the old data (1.0) where
    ``__dlpack__`` gives the new (7.0)."""

    class Replacing(paddle.Tensor):
        pass
    with dh.import_tensor(Replacing(paddle.ones([2]))) as first:
        assert first.how & EXCHANGE

    def stop_gradient(self):
        self.get_tensor().set(np.full([8], 7.0, dtype="float32"), paddle.CPUPlace())
        return True
    Replacing.stop_gradient = property(stop_gradient)
    x = Replacing(paddle.ones([2]))
    with dh.import_tensor(x) as t:
        np.testing.assert_array_equal(np.from_dlpack(t), np.full([8], 7.0, dtype="float32"))


@pytest.mark.parametrize("make", [lambda: torch.ones(2), lambda: torch.arange(3, dtype=torch.int32),
                                  lambda: paddle.ones([2])], ids=["torch", "torch_int", "paddle"])
def test_an_instance_dlpack_is_called(make):
    """``x.__dlpack__ = f`` is what every consumer calls (NumPy's and PyTorch's
    ``from_dlpack``); the import took the type's table and never called it."""
    x = make()

    def refuse(**kwargs):
        raise BufferError("this instance refuses")
    x.__dlpack__ = refuse
    with pytest.raises(BufferError, match="this instance refuses"):
        np.from_dlpack(x)
    with pytest.raises(BufferError, match="this instance refuses"):
        dh.import_tensor(x)
    del x.__dlpack__
    with dh.import_tensor(x) as t:  # the instance dictionary stays; the table is used again
        assert t.how & EXCHANGE


def _hiding_metaclass(base, *names):
    class Hiding(type(base)):
        def __getattribute__(cls, name):
            if name == "__dict__":
                d = dict(type.__getattribute__(cls, "__dict__"))
                for n in names:
                    d.pop(n, None)
                return d
            return super().__getattribute__(name)
    return Hiding


def _refuse(self, *args, **kwargs):
    raise BufferError("the subclass's own __dlpack__ refuses")


def _raising_property(self):
    raise BufferError("the subclass's device refuses")


def _refusing_torch_function(cls, func, types, args=(), kwargs=None):
    raise BufferError("the subclass's __torch_function__ refuses")


HIDDEN = {
    "__dlpack__": _refuse,
    "is_conj": lambda self: True,
    "layout": torch.sparse_coo,
    "device": property(_raising_property),
    "__torch_function__": classmethod(_refusing_torch_function),
}


@pytest.mark.parametrize("name", sorted(HIDDEN))
def test_a_metaclass_cannot_hide_an_override(name):
    """A metaclass whose ``__getattribute__`` filters what ``cls.__dict__`` shows hid a
    subclass's own ``__dlpack__`` (or what PyTorch's ``__dlpack__`` reads) from the per-type
    check, and the table stood in: the classes' real dictionaries are read now."""
    Sub = _hiding_metaclass(torch.Tensor, name)("Sub", (torch.Tensor,), {name: HIDDEN[name]})
    x = torch.ones(2).as_subclass(Sub)
    _assert_dlpacks_answer(x)


def test_a_metaclass_cannot_hide_the_class_from_the_mro():
    class LyingMro(type(torch.Tensor)):
        def __getattribute__(cls, name):
            if name == "__mro__":
                return type.__getattribute__(cls, "__mro__")[1:]  # without the class itself
            return super().__getattribute__(name)

    class Sub(torch.Tensor, metaclass=LyingMro):
        __dlpack__ = _refuse
    with pytest.raises(BufferError, match="own __dlpack__ refuses"):
        dh.import_tensor(torch.ones(2).as_subclass(Sub))


def test_a_metaclass_cannot_hide_a_paddle_override():
    Sub = _hiding_metaclass(paddle.Tensor, "__dlpack__")("Sub", (paddle.Tensor,), {"__dlpack__": _refuse})
    with pytest.raises(BufferError, match="own __dlpack__ refuses"):
        dh.import_tensor(Sub(paddle.ones([2])))


@pytest.mark.parametrize("make", [lambda: torch.arange(3.0), lambda: paddle.arange(3, dtype="float32")],
                         ids=["torch", "paddle"])
def test_max_version_below_1_gets_the_legacy_answer(make):
    """``max_version=(0, 8)`` asks for the legacy struct; the table exports the versioned one
    (writable), ``__dlpack__`` the legacy capsule (read-only by the provenance rule)."""
    x = make()
    with dh.import_tensor(x, max_version=(0, 8)) as t, \
            dh.import_tensor(x, max_version=(0, 8), use_exchange_api=False) as u:
        assert not t.how & EXCHANGE
        assert (t.source, t.readonly) == (u.source, u.readonly) == ("legacy_capsule", True)


# ------------------------------------ issue 26, second new-user run: more the table skipped


class _HidingDict(dict):
    def __getitem__(self, key):
        raise KeyError(key)


class _RaisingKey:
    def __init__(self, name):
        self.name = name

    def __hash__(self):
        return hash(self.name)

    def __eq__(self, other):
        raise RuntimeError("this key's __eq__ raised")


def _dict_subclass_is_conj():
    t = torch.arange(3.0)
    t.__dict__ = _HidingDict(is_conj=lambda: True)
    return t


def _raising_key(name, make):
    def build():
        t = make()
        t.__dict__[_RaisingKey(name)] = 1
        return t
    return build


def _instance_torch_function():
    def tf(func, types, args=(), kwargs=None):
        if func is torch.Tensor.__dlpack__:
            raise BufferError("the instance's __torch_function__ refuses __dlpack__")
        with torch._C.DisableTorchFunctionSubclass():
            return func(*args, **(kwargs or {}))

    class Sub(torch.Tensor):
        pass
    t = torch.ones(2).as_subclass(Sub)
    t.__torch_function__ = tf
    return t


def _behind_a_torch_named_mixin():
    Mixin = type("Mixin", (), {"__module__": "torch.mixin"})
    Sub = type("Sub", (Mixin, torch.Tensor),
               {"__dlpack_c_exchange_api__": torch.Tensor.__dlpack_c_exchange_api__})
    return torch.tensor([1 + 2j]).conj().as_subclass(Sub)


def _named_like_disabled_impl():
    def _disabled_torch_function_impl(cls, func, types, args=(), kwargs=None):
        if func is torch.Tensor.__dlpack__:
            raise BufferError("a function that only bears the name dispatches")
        with torch._C.DisableTorchFunctionSubclass():
            return func(*args, **(kwargs or {}))
    _disabled_torch_function_impl.__module__ = "torch._C"
    _disabled_torch_function_impl.__qualname__ = "_disabled_torch_function_impl"

    class Sub(torch.Tensor):
        __torch_function__ = classmethod(_disabled_torch_function_impl)
    return torch.ones(2).as_subclass(Sub)


SECOND_RUN = {
    "dict_subclass_hiding_is_conj": _dict_subclass_is_conj,
    "key_raising_like_is_conj": _raising_key("is_conj", lambda: torch.arange(3.0)),
    "key_raising_like_is_conj_int": _raising_key("is_conj", lambda: torch.arange(3, dtype=torch.int32)),
    "paddle_key_raising_like_is_sparse": _raising_key("is_sparse", lambda: paddle.ones([2])),
    "instance_torch_function": _instance_torch_function,
    "table_republished_behind_a_torch_named_mixin": _behind_a_torch_named_mixin,
    "function_named_like_the_disabled_impl": _named_like_disabled_impl,
}


@pytest.mark.parametrize("name", sorted(SECOND_RUN))
def test_what_the_second_new_user_run_found_gets_dlpacks_answer(name):
    t = SECOND_RUN[name]()
    _assert_dlpacks_answer(t)


@pytest.mark.parametrize("table", ["dlpack_helpers", "torch"])
def test_a_failing_table_is_answered_by_dlpack(table):
    """A class that publishes another type's table (which refuses its objects) and has a working
    ``__dlpack__``: the table's error was the answer (for PyTorch's table only when the class's
    ``__module__`` did not say ``torch``); ``__dlpack__`` answers now, as for every consumer."""
    cap = (dh.Tensor if table == "dlpack_helpers" else torch.Tensor).__dlpack_c_exchange_api__

    class Publishes:
        __dlpack_c_exchange_api__ = cap

        def __init__(self):
            self.a = np.arange(3.0)

        def __dlpack__(self, **kwargs):
            return self.a.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return (1, 0)
    x = Publishes()
    with dh.import_tensor(x) as t:
        assert not t.how & EXCHANGE
        np.testing.assert_array_equal(np.from_dlpack(t), x.a)


# ------------------------------------- issue 26, third new-user run: Python code in the checks


def test_an_instance_dict_replaced_during_its_lookup_is_not_read_after_free():
    """A key whose ``__eq__`` replaces ``x.__dict__`` while the import looks in it freed the
    dictionary under the lookup (SIGSEGV): in a child process, the import must answer as
    ``__dlpack__`` does."""
    import subprocess
    import sys
    code = '''
import torch, dlpack_helpers as dh
class K(str):
    def __hash__(self): return hash("__dlpack__")
    def __eq__(self, other):
        x.__dict__ = {"pad%d" % i: i for i in range(3)}
        return False
x = torch.ones(2)
d = {K("zz"): 1}
for i in range(40): d["filler%d" % i] = i
x.__dict__ = d
del d
t = dh.import_tensor(x)
print(t.shape == (2,), bool((__import__("numpy").from_dlpack(t) == 1).all()))
'''
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, (r.returncode, r.stderr[-2000:])
    assert r.stdout.split() == ["True", "True"], r.stdout


def test_a_class_changed_by_the_checks_gets_the_new_class_answer():
    """A key's ``__eq__`` that sets ``x.__class__ = B`` during the instance-dictionary look: the
    table and the per-type answers found for ``A`` were used for a ``B`` (which overrides
    ``is_conj``)."""
    class A(torch.Tensor):
        pass

    class B(torch.Tensor):
        def is_conj(self):
            return True
    with dh.import_tensor(torch.ones(2).as_subclass(A)) as first:
        assert first.how & EXCHANGE
    x = torch.ones(2).as_subclass(A)

    class K(str):
        def __hash__(self):
            return hash("__dlpack__")

        def __eq__(self, other):
            x.__class__ = B
            return False
    x.__dict__[K("zz")] = 1
    with pytest.raises(BufferError, match="conjugate bit"):
        dh.import_tensor(x)


class _ConjMixin:
    def __getattribute__(self, name):
        if name == "is_conj":
            return lambda: True
        return super().__getattribute__(name)


class _RefuseMixin:
    def __getattribute__(self, name):
        if name == "__dlpack__":
            def refuse(**kwargs):
                raise BufferError("the mixin's __dlpack__ refuses")
            return refuse
        return super().__getattribute__(name)


class _SparseMixin:
    def __getattribute__(self, name):
        if name == "is_sparse":
            return lambda: True
        return super().__getattribute__(name)


def _torch_after(mixin):
    return lambda: torch.ones(2).as_subclass(type("T", (torch.Tensor, mixin), {}))


def _paddle_parameter_after():
    import paddle.base.framework as fw
    p = paddle.create_parameter([2], "float32")
    p.stop_gradient = True
    p.__class__ = type("P", (fw.EagerParamBase, _SparseMixin), {})
    return p


LATER_IN_THE_MRO = {
    "torch_getattribute_is_conj": _torch_after(_ConjMixin),
    "torch_getattribute_dlpack": _torch_after(_RefuseMixin),
    "paddle_getattribute_is_sparse": _paddle_parameter_after,
}


@pytest.mark.parametrize("name", sorted(LATER_IN_THE_MRO))
def test_a_mixin_after_the_producer_that_wins_the_lookup_gets_dlpacks_answer(name):
    """A mixin listed after ``torch.Tensor`` (or Paddle's ``EagerParamBase``) whose
    ``__getattribute__`` wins the lookup (the producer's classes define none): the rule looked
    only below the publishing class, and the table exported."""
    t = LATER_IN_THE_MRO[name]()
    _assert_dlpacks_answer(t)


# ------------------------------------- issue 34: the guard's getter called directly


@pytest.mark.parametrize("producer", ["torch", "paddle"])
def test_a_getter_copied_into_an_unrelated_class_is_never_called_on_it(producer):
    """The guard's read calls the producer's C getter itself once the attribute lookup finds the
    cached getset descriptor (issue 34), after the instance check ``getset_get`` makes: a class
    named like the producer's package that publishes its table and copies the descriptor
    (``requires_grad = torch.Tensor.requires_grad``) is not a tensor, and the getter would read
    it as one (a crash). In a child process: the descriptor answers with its ``TypeError`` and
    the import with ``__dlpack__``'s answer, before and after the getter was cached by a real
    tensor's import."""
    import subprocess
    import sys
    if producer == "torch":
        setup = '''
import torch
T, name, real = torch.Tensor, "requires_grad", torch.ones(3)
'''
    else:
        setup = '''
import paddle
T, name, real = type(paddle.ones([3])), "stop_gradient", paddle.ones([3])
'''
    code = setup + '''
import numpy as np, dlpack_helpers as dh, dlpack_helpers._lib
class Copy:
    __module__ = T.__module__ + ".copied"
    __dlpack_c_exchange_api__ = T.__dlpack_c_exchange_api__
    def __init__(self): self.a = np.arange(4.0)
    def __dlpack__(self, **kw): return self.a.__dlpack__(**kw)
    def __dlpack_device__(self): return (1, 0)
setattr(Copy, name, T.__dict__.get(name) or next(
    c.__dict__[name] for c in T.__mro__ if name in c.__dict__))
answers = []
for first_real in (False, True):
    if first_real:
        with dh.import_tensor(real) as t:
            answers.append(t.how & dh._lib.IMPORTED_EXCHANGE_API != 0)
    c = Copy()
    with dh.import_tensor(c) as t:
        answers.append(t.how & dh._lib.IMPORTED_EXCHANGE_API == 0 and np.from_dlpack(t).tolist() == [0, 1, 2, 3])
print(answers)
'''
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, (r.returncode, r.stderr[-2000:])
    assert r.stdout.split("\n")[-2] == "[True, True, True]", r.stdout
