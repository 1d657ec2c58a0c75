"""Saved lazy expressions and UDFs (issue 33 item 5): python-blosc2's two on-disk forms
(:mod:`.layout`: the b2o carrier and the legacy ``_LazyArray`` form), read and written both
ways, and read as untrusted input.

* :mod:`.layout` — metalayer and vlmeta names, each payload a checked, bounded dataclass;
* :mod:`.check` — what a saved expression string may hold (the parser's allow-list, its
  names, bounded constructors that write no file);
* :mod:`.place` — where operands may be (inside the directory or store holding the
  carrier), cycles;
* :mod:`.udfsource` — a plain UDF's source, checked, then compiled in a fresh namespace;
* :mod:`.writer` — ``save``/``to_cframe``;
* :mod:`.mixin` — what lazy arrays gain (``save``, ``to_cframe``, ``vlmeta``, ``with``);
* :mod:`.reader` — opening both forms (registered with :mod:`pyblosc2.vlarrays.kinds` by
  :mod:`pyblosc2.compute`, so ``pyblosc2.open``, ``from_cframe`` and the stores open them).

This package's ``__init__`` imports nothing: :mod:`..lazyarray` imports :mod:`.mixin`, and
:mod:`.reader` imports :mod:`..lazyexpr`.
"""
