"""A reference model of the layout and validation rules, written from the spec's pages alone.

`layout(...)` follows spec/functions/dlpack_dltensor_layout.md (CORE-DLTENSOR-LAYOUT-1..21) and
`validate(...)` spec/functions/dlpack_dltensor_validate.md (CORE-DLTENSOR-VALIDATE-1..24), rule
by rule, with Python's exact integers: a quantity that does not fit in int64_t is OVERFLOW, never
a wrapped value. Cases compare the library's answers with these, so every expected number comes
from the spec's formulas, never from the library under test.

A tensor description is a dict: ndim (int), shape (list or None), strides (list or None), dtype
(code, bits, lanes), byte_offset (int, unsigned 64-bit), data (int address), device (type, id).
"""
from __future__ import annotations

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
UINTPTR_MAX = (1 << 64) - 1
MAX_NDIM = 1024
POINTER_ADDRESSED = {1, 2, 3, 10, 11, 13, 14}
HOST_ALWAYS = {1, 3, 11, 13}
HOST_NEVER = {2, 4, 7, 8, 9, 10, 15, 16, 17, 18}
ASSIGNED_DEVICE_TYPES = set(range(1, 5)) | set(range(7, 19))

# Layout property bits (the Synopsis of dlpack_dltensor_layout).
C, F, COMPACT, BROADCAST, NEG, IMPLIED, EMPTY, PACKED = 1, 2, 4, 8, 16, 32, 64, 128
# Validate option bits (the Synopsis of dlpack_dltensor_validate).
V_LENIENT, V_C, V_F, V_COMPACT, V_CPU, V_WRITABLE, V_DTYPE, V_NOVEC = 1, 2, 4, 8, 16, 32, 64, 128
V_ELEM_ALIGNED, V_NOBCAST, V_NONEG, V_LEGACY_WRITABLE, V_NOCOPIED, V_RESOLVE = 256, 512, 1024, 2048, 4096, 65536
V_KNOWN = 0x1FFF | V_RESOLVE
READ_ONLY, IS_COPIED, PADDED_FLAG = 1, 2, 4


def fits(v: int) -> bool:
    return INT64_MIN <= v <= INT64_MAX


def dtype_valid(code: int, bits: int, lanes: int) -> bool:
    """CORE-DLTENSOR-LAYOUT-5."""
    if lanes < 1:
        return False
    if code in (0, 1):
        return bits in (1, 2, 4, 8, 16, 32, 64, 128)
    if code == 2:
        return bits in (16, 32, 64, 128)
    if code == 3:
        return bits != 0 and bits % 8 == 0
    if code == 4:
        return bits == 16
    if code == 5:
        return bits in (32, 64, 128)
    if code == 6:
        return bits == 8
    if 7 <= code <= 14:
        return bits == 8
    if code in (15, 16):
        return bits == 6
    if code == 17:
        return bits == 4
    return False


def implied_strides(shape, column_major=False):
    """Compact strides (CORE-DLTENSOR-LAYOUT-9, CORE-COMPACT-STRIDES-5), exact; None on overflow."""
    n = len(shape)
    out = [0] * n
    if n == 0:
        return out
    order = range(n - 1, -1, -1) if not column_major else range(n)
    acc, prev = 1, None
    for i in order:
        if prev is not None:
            acc = acc * max(shape[prev], 1)
            if acc > INT64_MAX:
                return None
        out[i] = acc
        prev = i
    return out


def pow2_divisor(v: int) -> int:
    return 0 if v == 0 else v & -v


def layout(t: dict, padded_flag: bool):
    """(status name, layout dict or None) as dlpack_dltensor_layout gives for `t`."""
    ndim, shape, strides = t["ndim"], t["shape"], t["strides"]
    code, bits, lanes = t["dtype"]
    if ndim < 0 or ndim > MAX_NDIM:
        return "INVALID_NDIM", None
    if ndim != 0 and shape is None:
        return "NULL_SHAPE", None
    shape = list(shape[:ndim]) if ndim else []
    if not dtype_valid(code, bits, lanes):
        return "INVALID_DTYPE", None
    bo = t["byte_offset"]
    if bo > INT64_MAX:
        return "OVERFLOW", None
    if any(s < 0 for s in shape):
        return "INVALID_SHAPE", None
    if strides is None or ndim == 0:
        s = implied_strides(shape)
        if s is None:
            return "OVERFLOW", None
    else:
        s = list(strides[:ndim])
    b = bits * lanes
    sub = b % 8 != 0
    padded = sub and padded_flag
    packed = sub and not padded
    element_bits = (b + 7) // 8 * 8 if padded else b
    dev = t["device"][0]
    v = ((t["data"] + bo) % (1 << 64)) if dev in POINTER_ADDRESSED else bo
    out = {"element_bits": element_bits, "first_element_alignment": pow2_divisor(v)}
    implied = IMPLIED if (strides is None and ndim != 0) else 0
    empty = any(x == 0 for x in shape)
    if empty:
        out.update(numel=0, nbytes=0, storage_elements=0, lowest_byte=bo, end_byte=bo,
                   properties=C | F | COMPACT | EMPTY | implied | (PACKED if packed else 0))
        return "OK", out
    numel = 1
    for x in shape:
        numel *= x
    if not fits(numel):
        return "OVERFLOW", None
    E = [i for i in range(ndim) if shape[i] > 1]
    lo = sum((shape[i] - 1) * s[i] for i in E if s[i] < 0)
    hi = sum((shape[i] - 1) * s[i] for i in E if s[i] > 0)
    storage = hi - lo + 1
    if not (fits(lo) and fits(hi) and fits(storage)):
        return "OVERFLOW", None
    if not packed:
        size = element_bits // 8
        nbytes, lob, end = numel * size, lo * size, bo + (hi + 1) * size
        if not (fits(nbytes) and fits(lob) and fits(end)):
            return "OVERFLOW", None
        low = bo + lob
    else:
        nbytes = -(-(numel * b) // 8)
        low = bo + (lo * b) // 8
        end = bo + -(-((hi + 1) * b) // 8)
        if not (fits(nbytes) and fits(low) and fits(end)):
            return "OVERFLOW", None
    props = implied | (PACKED if packed else 0)
    if all(s[i] == _prod(shape[i + 1:]) for i in E):
        props |= C
    if all(s[i] == _prod(shape[:i]) for i in E):
        props |= F
    if _compact(E, s, shape):
        props |= COMPACT
    if any(s[i] == 0 for i in E):
        props |= BROADCAST
    if any(s[i] < 0 for i in E):
        props |= NEG
    out.update(numel=numel, nbytes=nbytes, storage_elements=storage, lowest_byte=low,
               end_byte=end, properties=props)
    return "OK", out


def _prod(xs):
    p = 1
    for x in xs:
        p *= x
    return p


def _compact(E, s, shape) -> bool:
    left, want = set(E), 1
    while left:
        nxt = [i for i in left if s[i] == want]
        if not nxt:
            return False
        i = nxt[0]
        left.discard(i)
        want = s[i] * shape[i]
    return True


def element_natural_alignment(t, padded_flag):
    code, bits, lanes = t["dtype"]
    b = bits * lanes
    if b % 8 and not padded_flag:
        return 1
    return pow2_divisor((b + 7) // 8)


def effective_options(opts):
    """The option fields the implementation reads (CORE-DLTENSOR-VALIDATE-2..4): None is all
    zero; a member not entirely inside struct_size is 0."""
    z = {"flags": 0, "max_ndim": 0, "data_alignment": 0, "first_element_alignment": 0, "dtype": (0, 0, 0)}
    if opts is None:
        return z
    size = opts["struct_size"]
    spans = {"flags": (8, 12), "max_ndim": (12, 16), "data_alignment": (16, 24),
             "first_element_alignment": (24, 32), "dtype": (32, 36)}
    for k, (a, b) in spans.items():
        if b <= size:
            z[k] = opts.get(k, z[k])
    return z


def _pow2_or_zero(v):
    return v == 0 or (v & (v - 1)) == 0


def validate(t, version, flags, opts, tensor_null=False):
    """(status name, layout or None) as dlpack_dltensor_validate gives (CORE-DLTENSOR-VALIDATE-7)."""
    if tensor_null:
        return "NULL_POINTER", None
    if opts is not None and opts["struct_size"] < 8:
        return "INVALID_ARGUMENT", None
    o = effective_options(opts)
    of = o["flags"]
    if of & ~V_KNOWN or not _pow2_or_zero(o["data_alignment"]) or \
            not _pow2_or_zero(o["first_element_alignment"]) or o["max_ndim"] < 0:
        return "INVALID_ARGUMENT", None
    major, minor = version
    versioned = major != 0
    if not versioned:
        flags = 0
    if versioned and major != 1:
        return "UNSUPPORTED_VERSION", None
    if versioned and minor <= 3:
        defined = 0x3 if minor == 0 else 0x7
        if flags & ~defined:
            return "INVALID_FLAGS", None
    ndim = t["ndim"]
    if ndim < 0 or ndim > MAX_NDIM or (o["max_ndim"] > 0 and ndim > o["max_ndim"]):
        return "INVALID_NDIM", None
    if ndim != 0 and t["shape"] is None:
        return "NULL_SHAPE", None
    if ndim != 0 and t["strides"] is None and versioned and minor >= 2 and not of & V_LENIENT:
        return "NULL_STRIDES", None
    padded_flag = versioned and bool(flags & PADDED_FLAG)
    st, lay = layout(t, padded_flag)
    if st != "OK":
        return st, None
    code, bits, lanes = t["dtype"]
    if (of & V_NOVEC and lanes > 1) or (of & V_DTYPE and tuple(o["dtype"]) != (code, bits, lanes)):
        return "DTYPE_MISMATCH", None
    dev, dev_id = t["device"]
    if dev_id < 0:
        return "INVALID_DEVICE", None
    empty = lay["properties"] & EMPTY
    ptr = dev in POINTER_ADDRESSED
    if not empty and ptr and t["data"] == 0:
        return "NULL_DATA", None
    if not empty and ptr and (t["data"] + lay["lowest_byte"] < 0 or t["data"] + lay["end_byte"] > UINTPTR_MAX):
        return "OVERFLOW", None
    depends = dev not in HOST_ALWAYS and dev not in HOST_NEVER
    moved = bool(of & V_RESOLVE) and bool(of & V_CPU) and depends
    if of & V_CPU and not moved and dev not in HOST_ALWAYS:
        return "NOT_CPU_ACCESSIBLE", None
    if not empty:
        a = lay["first_element_alignment"]
        if o["data_alignment"] > 1 and ptr and t["data"] % o["data_alignment"]:
            return "MISALIGNED", None
        if o["first_element_alignment"] > 1 and a != 0 and a < o["first_element_alignment"]:
            return "MISALIGNED", None
        if of & V_ELEM_ALIGNED and a != 0 and a < element_natural_alignment(t, padded_flag):
            return "MISALIGNED", None
    p = lay["properties"]
    if (of & V_C and not p & C) or (of & V_F and not p & F) or (of & V_COMPACT and not p & COMPACT):
        return "NOT_CONTIGUOUS", None
    if (of & V_NOBCAST and p & BROADCAST) or (of & V_NONEG and p & NEG):
        return "UNSUPPORTED_STRIDES", None
    if of & V_WRITABLE:
        if (versioned and flags & READ_ONLY) or (not versioned and not of & V_LEGACY_WRITABLE):
            return "READ_ONLY", None
    if of & V_NOCOPIED and versioned and flags & IS_COPIED:
        return "COPIED_REJECTED", None
    if moved:
        # dlpack_dltensor_host_access: a "depends" type other than oneAPI, or oneAPI with no
        # context registered (the suite registers none), answers UNKNOWN.
        return "NOT_CPU_ACCESSIBLE", None
    return "OK", lay


def tensor_validate(t, version, flags, opts, tensor_null=False):
    """dlpack_tensor_validate (CORE-TENSOR-VALIDATE-1..4): major 0 is not legacy there."""
    if tensor_null:
        return "NULL_POINTER", None
    if opts is not None and opts["struct_size"] < 8:
        return "INVALID_ARGUMENT", None
    o = effective_options(opts)
    if o["flags"] & ~V_KNOWN or not _pow2_or_zero(o["data_alignment"]) or \
            not _pow2_or_zero(o["first_element_alignment"]) or o["max_ndim"] < 0:
        return "INVALID_ARGUMENT", None
    if version[0] != 1:
        return "UNSUPPORTED_VERSION", None
    return validate(t, version, flags, opts)
