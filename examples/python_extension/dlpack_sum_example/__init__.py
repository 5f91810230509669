"""Example C extension built against the dlpack_helpers wheel's C SDK (see README.md).

``sum(obj)``: the sum of the float32/float64 elements of any DLPack-capable object on a
host-readable device, as a float. ``describe(obj)``: what the import got (dtype and device
names, ndim, whether the producer sent the legacy struct, writability, DLPack version).
"""
from ._sum import describe, sum  # noqa: A004  (the example's name for the operation)

__all__ = ["sum", "describe"]
