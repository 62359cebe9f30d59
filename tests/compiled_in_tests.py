"""``njit`` for the small kernels that tests compile themselves around the kernels' helpers.

Such a kernel compiles the helpers it calls into its own machine code (``numerics.kernels.sfc64``,
``erf_poly``, ``sgd_step``), so numba's on-disk cache, keyed on the test file's own timestamp, would load
old code after an edit of a helper. It is cached only in the kernels' own folder
(``numerics.kernels.kernel_cache_dir``: named by a digest of every kernel module, in use once a kernel
module is imported), where such an edit starts a fresh cache; elsewhere it compiles in memory, once per
process. Compiling ``_draw_step``'s test kernel costs about 3 s of CPU; loading it from the cache, 0.1 s.
"""


def njit_over_kernels(fn):
    """``numba.njit(fn)``, with ``cache=True`` when numba's cache folder is ``kernel_cache_dir()``
    (import the kernel modules whose helpers ``fn`` calls first)."""
    import numba

    from numerics.kernels import kernel_cache_dir

    return numba.njit(cache=numba.config.CACHE_DIR == str(kernel_cache_dir()))(fn)
