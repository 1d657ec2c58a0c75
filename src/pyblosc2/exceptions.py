"""python-blosc2's ``blosc2.exceptions`` names: the errors of saved lazy expressions
(:class:`MissingOperands`) and of the deserialization policy
(:class:`UnsafeDeserializationError`), re-exported.

>>> issubclass(MissingOperands, ValueError), issubclass(UnsafeDeserializationError, ValueError)
(True, True)
"""

from .compute import MissingOperands
from .vlarrays.policy import UnsafeDeserializationError

__all__ = ["MissingOperands", "UnsafeDeserializationError"]
