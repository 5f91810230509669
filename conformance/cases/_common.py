"""Helpers shared by the core case modules (registers no case).

- fenced(): a struct image placed so that a read before or past a chosen byte range faults
- ro(): make a mapping read-only (a write faults)
- out_slot(): an out-parameter ending against a guard page, filled with a sentinel
- prime()/message_after(): prove that a failing call set its own message (ABI-ERROR-1)
- unchanged_message(): a call leaves the last-error message (pointer and text) unchanged
"""
from __future__ import annotations

import ctypes
import mmap as _mmap
import threading

PAGE = _mmap.PAGESIZE
_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                       ctypes.c_long]
_libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
PROT_NONE, PROT_READ, PROT_RW = 0, 1, 3
MAP_PRIVATE_ANON = 0x02 | 0x20

# Every 32-bit device type worth a row: each value DLPack 1.3 assigns, the gaps, negatives and
# values far above the last one.
DEVICE_TYPES = sorted(set(range(-3, 32)) | {-(1 << 31), (1 << 31) - 1, 64, 99, 255, 256, 1000, 1 << 16})
DEVICE_IDS = (0, 1, 7, -1, -(1 << 31), (1 << 31) - 1)


_RING, _RING_SIZE, _ring_next = [], 1024, [0]
_ring_lock = threading.Lock()


def pages(n: int, prot=PROT_RW) -> int:
    """`n` (at most 3) fresh read-write pages, then protected `prot`. They come from a ring of
    reused mappings (a process has a limited number of mappings): what a case places there is
    valid until 1024 more calls, long enough for one call of the function under test."""
    if n > 3:
        raise ValueError("pages(n): n <= 3")
    with _ring_lock:
        i = _ring_next[0] % _RING_SIZE
        _ring_next[0] += 1
        if i == len(_RING):
            p = _libc.mmap(None, 3 * PAGE, PROT_RW, MAP_PRIVATE_ANON, -1, 0)
            if p in (None, ctypes.c_void_p(-1).value):
                _ring_next[0] -= 1
                raise RuntimeError("mmap failed")
            _RING.append(p)
        p = _RING[i]
    protect(p, 3 * PAGE, PROT_RW)
    ctypes.memset(p, 0, 3 * PAGE)
    if prot != PROT_RW:
        protect(p, n * PAGE, prot)
    return p


def protect(addr: int, size: int, prot: int):
    base = addr & ~(PAGE - 1)
    end = (addr + size + PAGE - 1) & ~(PAGE - 1)
    if _libc.mprotect(base, end - base, prot) != 0:
        raise RuntimeError("mprotect failed")


def ro(addr: int, size: int):
    protect(addr, size, PROT_READ)


def fenced(image: bytes, lo: int = 0, hi: int | None = None, readonly: bool = True) -> int:
    """Place `image` (a struct's bytes) so that bytes [lo, hi) are readable and:
    - with hi given and lo == 0: byte `hi` onwards lies in a PROT_NONE page;
    - with lo > 0: bytes before `lo` lie in a PROT_NONE page (and hi, if given, must then be
      the image's length or less; the bytes after the image are readable up to the page end).
    The readable page is made read-only when `readonly`. Returns the struct's address."""
    if hi is None:
        hi = len(image)
    if lo == 0:
        p = pages(2)
        base = p + PAGE - hi
        ctypes.memmove(base, image[:hi], hi)
        protect(p + PAGE, PAGE, PROT_NONE)
        if readonly:
            protect(p, PAGE, PROT_READ)
        return base
    p = pages(3)
    protect(p, PAGE, PROT_NONE)
    protect(p + 2 * PAGE, PAGE, PROT_NONE)
    ctypes.memmove(p + PAGE, image[lo:hi], hi - lo)
    if readonly:
        protect(p + PAGE, PAGE, PROT_READ)
    return p + PAGE - lo


def noaccess() -> int:
    """An address whose every byte faults when read or written."""
    return pages(1, PROT_NONE)


def out_slot(ctype, fill: int = 0x5A):
    """An out-parameter of `ctype` whose last byte ends against a guard page (a write past it
    faults), filled with the byte `fill`. Returns (instance, pointer, raw bytes getter)."""
    n = ctypes.sizeof(ctype)
    p = pages(2)
    protect(p + PAGE, PAGE, PROT_NONE)
    addr = p + PAGE - n
    ctypes.memset(addr, fill, n)
    inst = ctype.from_address(addr)
    return inst, ctypes.pointer(inst), (lambda: ctypes.string_at(addr, n))


def bytes_of(obj) -> bytes:
    return ctypes.string_at(ctypes.addressof(obj), ctypes.sizeof(obj))


def cstring(data: bytes, readonly: bool = True) -> int:
    """A NUL-terminated string whose NUL is the last readable byte (a read past it faults)."""
    return fenced(data + b"\0", readonly=readonly)


def msg_ptr(ctx):
    f = ctx.f.dlpack_last_error_message
    f.restype = ctypes.c_void_p
    return f()


MARK_MAJOR, MARK_MINOR = 913_577, 24_680_135


def prime(ctx):
    """Make a failing call whose message names two distinctive numbers (CORE-VERSION-CHECK-5):
    a later failing call that did not set its own message leaves them in place."""
    st = ctx.f.dlpack_version_check(ctx.T.DLPackVersion(MARK_MAJOR, MARK_MINOR), None)
    ctx.expect(st, "UNSUPPORTED_VERSION", what="priming dlpack_version_check")
    text = ctx.last_error()
    ctx.check(str(MARK_MINOR).encode() in text, "dlpack_version_check's message does not name the minor found")
    return text


def message_after(ctx, what: str) -> bytes:
    """After a failing call made right after prime(): its own message, non-empty UTF-8."""
    text = ctx.last_error()
    ctx.check(text != b"", f"{what}: the last-error message is empty after a failure")
    ctx.check(str(MARK_MINOR).encode() not in text,
              f"{what}: the failing call did not set its own last-error message")
    try:
        text.decode("utf-8")
    except UnicodeDecodeError:
        ctx.check(False, f"{what}: the last-error message is not UTF-8: {text!r}")
    return text


def expect_fail(ctx, call, *statuses, what=""):
    """prime(), call(), expect one of `statuses`, and check that the call set its own message."""
    prime(ctx)
    st = call()
    ctx.expect(st, *statuses, what=what)
    message_after(ctx, what or statuses[0])
    return st


class unchanged_message:
    """with unchanged_message(ctx, 'what'): ... checks pointer and text of the message."""

    def __init__(self, ctx, what):
        self.ctx, self.what = ctx, what

    def __enter__(self):
        prime(self.ctx)
        self.ptr, self.text = msg_ptr(self.ctx), self.ctx.last_error()
        return self

    def __exit__(self, et, ev, tb):
        if et is None:
            self.ctx.check(msg_ptr(self.ctx) == self.ptr and self.ctx.last_error() == self.text,
                           f"{self.what}: the last-error message changed")
        return False


def as_u8_fn(ctx, name, argtypes):
    """Bind `name` with a one-byte unsigned return type, to see the exact byte of a C bool."""
    addr = ctypes.cast(getattr(ctx.handle, name), ctypes.c_void_p).value
    return ctypes.CFUNCTYPE(ctypes.c_uint8, *argtypes)(addr)


def static_ranges():
    """Address ranges of every loaded object's image: its file mappings and the anonymous
    mapping right after them (its .bss). Static storage of a library (and of a library it
    depends on) lies there; heap, stacks and mmap'ed memory do not."""
    out, extend = [], False
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split()
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            named = len(parts) >= 6 and parts[5].startswith("/")
            if named and ".so" in parts[5]:
                out.append((lo, hi))
                extend = True
            elif extend and len(parts) < 6 and out and out[-1][1] == lo:
                out.append((lo, hi))
                extend = False
            else:
                extend = False
    return out


_ranges = {}


def in_library(ctx, addr: int) -> bool:
    """True when `addr` lies in a loaded shared object's image (static storage)."""
    if "ranges" not in _ranges:
        _ranges["ranges"] = static_ranges()
    return any(lo <= addr < hi for lo, hi in _ranges["ranges"])
