"""Codecs: one module per codec, a registry keyed by codec id."""
