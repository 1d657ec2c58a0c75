"""Blosc chunks (``../shared/specs/chunk-format.md``): the header (header.py), the layout of
blocks and dictionary (layout.py), block size rules (blocksize.py), the filter pipeline
(pipeline.py), encoding (encode.py), decoding (decode.py), ranged reads from storage
(ranged.py) and special-value chunks (special.py)."""
