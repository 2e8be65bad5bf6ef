"""The lowest layer: concepts every other package shares, written once.

- ``loom.core.scalars``: the one table of scalar types (MLIR spelling, bits, kind,
  numpy dtype, C type, ctypes type, value range).
- ``loom.core.numformats``: the one definition of the custom number formats (fixed point, custom
  floats, rounding and overflow modes), exact in Python; the ``base2`` lowering is tested against it.
- ``loom.core.affine``: the one linear affine form (``sum(coeff * var) + const``)
  and the one parser of affine-map text.
- ``loom.core.compile_cache``: the one cache of compiled C (key = sources, flags,
  compiler identity; atomic writes; verified on load; ``$CC``/``$CFLAGS``).
- ``loom.core.text``: the text cursor and located errors shared by loom's small parsers.

Depends on nothing of loom but ``loom.errors``.
"""
