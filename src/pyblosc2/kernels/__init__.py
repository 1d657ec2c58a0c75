"""Kernels: the hot loops of the filters and codecs (byte and bit shuffle, the delta prefixes,
BloscLZ), behind one protocol (:class:`~.base.KernelSet`) with one numpy implementation (the
reference) and a numba one, chosen once at run time (:mod:`.select`; numba loads in the
background while numpy serves the first calls). Filters and codecs ask :func:`active` for a
kernel; none imports an implementation.
"""

from .base import KernelSet
from .select import (
    ENV_VAR,
    active,
    kernel_sets,
    kernels_in_use,
    kernels_status,
    use_kernels,
    wait_for_kernels,
)

__all__ = [
    "ENV_VAR",
    "KernelSet",
    "active",
    "kernel_sets",
    "kernels_in_use",
    "kernels_status",
    "use_kernels",
    "wait_for_kernels",
]
