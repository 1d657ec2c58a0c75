"""The pyblosc2 exception hierarchy.

Every error raised because of bad *input bytes* is a :class:`FormatError`; every error raised
because of bad *arguments* is a :class:`ParamError`. Both derive from :class:`Blosc2Error`,
which derives from :class:`ValueError`, so ``except ValueError`` catches all of them. Where
python-blosc2 (or Python itself) raises another built-in class, ours derives from it too:
an argument of the wrong type is a :class:`ParamTypeError` (also a :class:`TypeError`), an
index out of range a :class:`BoundsError` (also an :class:`IndexError`).
Format paths that exist in the Blosc formats but are not implemented here raise
:class:`NotImplementedError` naming the feature instead.
"""

from __future__ import annotations

__all__ = [
    "ArgumentConflictError",
    "Blosc2Error",
    "BoundsError",
    "CodecError",
    "FormatError",
    "FrameChangedError",
    "MemoryBudgetError",
    "MissingPartError",
    "NotAFrameError",
    "OrderError",
    "ParamAttributeError",
    "ParamError",
    "ParamTypeError",
    "RegistrationError",
    "RemoteError",
    "RemoteWarning",
    "TruncatedError",
    "UnsupportedError",
    "stream_error",
]


class Blosc2Error(ValueError):
    """Root of every pyblosc2 error (a :class:`ValueError`)."""


class ParamError(Blosc2Error):
    """A parameter passed by the caller is out of range or inconsistent."""


class ParamTypeError(ParamError, TypeError):
    """A parameter of the wrong type (``clevel=5.0``, ``typesize="4"``): a :class:`ParamError`
    that ``except TypeError`` catches as well.

    >>> issubclass(ParamTypeError, ValueError) and issubclass(ParamTypeError, TypeError)
    True
    """


class ArgumentConflictError(ParamError, AttributeError, KeyError):
    """A parameter group given both whole and field by field (``cparams=`` with ``clevel=``,
    ``storage=`` with ``urlpath=``): a :class:`ParamError`, and also the classes python-blosc2
    happens to raise for it depending on the call (``AttributeError`` for ``compress2`` and
    ``SChunk(storage=...)``, ``KeyError`` for the NDArray constructors).

    >>> issubclass(ArgumentConflictError, ValueError | AttributeError | KeyError)
    True
    """


class ParamAttributeError(ParamError, AttributeError):
    """An argument lacking an attribute the call needs (``pack("abc")``: no ``itemsize``):
    a :class:`ParamError`, also the ``AttributeError`` python-blosc2 raises.

    >>> issubclass(ParamAttributeError, ValueError | AttributeError)
    True
    """


class UnsupportedError(ParamError, NotImplementedError):
    """A value python-blosc2 accepts for a feature pyblosc2 does not implement (a C plugin
    codec such as ZFP or NDLZ): a :class:`NotImplementedError` naming it, and the
    ``ValueError`` python-blosc2 raises when its build lacks the feature.

    >>> [issubclass(UnsupportedError, e) for e in (ValueError, NotImplementedError)]
    [True, True]
    """


class RegistrationError(ParamError, RuntimeError):
    """A codec or filter id is already registered under another name (python-blosc2 raises
    ``RuntimeError`` there, C-Blosc2 refuses the registration)."""


class BoundsError(Blosc2Error, IndexError):
    """An index or position out of range (a chunk number, an item index): also an
    :class:`IndexError`, as python-blosc2 and numpy raise for these."""


class FormatError(Blosc2Error, RuntimeError):
    """Input bytes that do not form a valid Blosc structure. Also a ``RuntimeError``: what
    python-blosc2 raises when C-Blosc2 cannot open or read them, so ``except RuntimeError``
    written for python-blosc2 catches it too.

    ``where`` names the structure ("chunk header", "block 3 stream 1"), ``field`` the field,
    ``offset`` its byte offset from the start of the buffer, and ``expected``/``got`` what the
    rule wanted and what the bytes hold.

    >>> str(FormatError("chunk header", "cbytes", 12, "at most 812 (buffer size)", 9000))
    'chunk header: cbytes at offset 12 is 9000, expected at most 812 (buffer size)'
    """

    def __init__(
        self,
        where: str,
        field: str,
        offset: int | None,
        expected: object,
        got: object,
    ) -> None:
        self.where = where
        self.field = field
        self.offset = offset
        self.expected = expected
        self.got = got
        at = f" at offset {offset}" if offset is not None else ""
        super().__init__(f"{where}: {field}{at} is {got}, expected {expected}")


class TruncatedError(FormatError):
    """The bytes end before the structure does: a file or buffer cut short (a copy or a
    download that stopped, a disk that filled). Its message ends by saying so.

    >>> str(TruncatedError("frame header", "frame_len", 16, "at most 174 (bytes available)", 349))
    'frame header: frame_len at offset 16 is 349, expected at most 174 (bytes available): truncated'
    """

    def __init__(
        self, where: str, field: str, offset: int | None, expected: object, got: object
    ) -> None:
        super().__init__(where, field, offset, expected, got)
        self.args = (f"{self.args[0]}: truncated",)


class NotAFrameError(FormatError):
    """The bytes at the given offset do not start with a frame's magic: a
    :class:`FormatError`, and also the ``RuntimeError`` python-blosc2 raises when it cannot
    open a frame there.

    >>> issubclass(NotAFrameError, ValueError) and issubclass(NotAFrameError, RuntimeError)
    True
    """


class MissingPartError(FormatError, FileNotFoundError):
    """A store without a part it cannot do without (a ``.b2z`` with no ``embed.b2e``
    member): a :class:`FormatError` naming it, and also the ``FileNotFoundError``
    python-blosc2 raises there.

    >>> issubclass(MissingPartError, ValueError) and issubclass(MissingPartError, OSError)
    True
    """


class OrderError(ParamError, RuntimeError):
    """A chunk order with repeated or out-of-range positions: a :class:`ParamError`, and also
    the ``RuntimeError`` python-blosc2 raises for it (a wrongly shaped order stays a plain
    :class:`ParamError`, its ``ValueError``).

    >>> issubclass(OrderError, ValueError) and issubclass(OrderError, RuntimeError)
    True
    """


class CodecError(FormatError):
    """A codec stream that fails to decode (or decodes to the wrong length)."""


def stream_error(codec: str, expected: object, got: object) -> CodecError:
    """The error a codec raises for an undecodable stream (the chunk layer adds the offset).

    >>> str(stream_error("lz4", "64 decoded bytes", 60))
    'lz4 stream: data is 60, expected 64 decoded bytes'
    """
    return CodecError(f"{codec} stream", "data", None, expected, got)


class FrameChangedError(Blosc2Error):
    """Another handle changed the frame since this one last read it, and this handle does not
    use locking: its change is refused rather than written over the other one's (open the
    frame again, or use ``locking=True`` on every handle)."""


class MemoryBudgetError(Blosc2Error, MemoryError):
    """An operation whose projected peak memory exceeds the bound it runs under
    (``max_memory=``, by default the machine's available memory), refused before anything is
    allocated: names the operation, the bytes it needs and the bound. Also a
    :class:`MemoryError`.

    >>> e = MemoryBudgetError("expr[...] as numpy", 8_000_000_000, 1_000_000_000)
    >>> str(e)[:60], e.needed, e.bound
    ('expr[...] as numpy needs 8000000000 bytes (7.45 GiB), over t', 8000000000, 1000000000)
    """

    def __init__(self, what: str, needed: int, bound: int) -> None:
        self.what, self.needed, self.bound = what, needed, bound
        super().__init__(
            f"{what} needs {needed} bytes ({needed / 2**30:.2f} GiB), over the memory bound "
            f"of {bound} bytes ({bound / 2**30:.2f} GiB)"
        )


class RemoteError(Blosc2Error, OSError):
    """Reading a remote object failed (an HTTP error status, a dropped connection, a short
    body) after the bounded retries: names the URL, the byte range and the cause. Also an
    :class:`OSError`, as a failed local read would be."""


class RemoteWarning(UserWarning):
    """A remote object is read in a costly way the server imposes (e.g. a server without
    Range support: the whole object is downloaded once, to a temporary file)."""
