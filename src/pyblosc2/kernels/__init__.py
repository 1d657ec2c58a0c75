"""Kernels: the hot loops of the filters and codecs (byte and bit shuffle, the delta prefixes,
BloscLZ), behind one protocol (:class:`~.base.KernelSet`) with one numpy implementation (the
reference) and room for others, chosen once at run time (:mod:`.select`). Filters and codecs
ask :func:`active` for a kernel; none imports an implementation.
"""

from .base import KernelSet
from .select import ENV_VAR, active, kernel_sets, kernels_in_use, use_kernels

__all__ = ["ENV_VAR", "KernelSet", "active", "kernel_sets", "kernels_in_use", "use_kernels"]
