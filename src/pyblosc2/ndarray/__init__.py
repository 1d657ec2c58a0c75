"""Typed N-d arrays over super-chunks: the ``b2nd`` metalayer (frame-format.md §8)."""
