"""Filters: numpy kernels per filter, a registry keyed by filter id."""
