"""Blosc chunks: header, block geometry, encoding and decoding."""
