"""Frames: the container of a super-chunk (spec frame-format.md). Read side so far."""
