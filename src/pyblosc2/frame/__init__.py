"""Frames: the container of a super-chunk (spec frame-format.md): header, index, trailer,
reading, changing through one commit, sparse frames, where a frame lives."""
