"""``njit`` for the small kernels that tests compile themselves around the kernels' helpers.

Such a kernel compiles the helpers it calls into its own machine code (``numerics.kernels.sfc64``,
``erf_poly``, ``sgd_step``), so numba's on-disk cache, keyed on the test file's own timestamp, would load
old code after an edit of a helper. It is cached only in the kernels' own folder
(``numerics.kernels.kernel_cache_dir``: named by a digest of every kernel module, in use once a kernel
module is imported), where such an edit starts a fresh cache; elsewhere it compiles in memory, once per
process. Compiling ``_draw_step``'s test kernel costs about 3 s of CPU; loading it from the cache, 0.1 s.

Such a kernel reaches the helpers through their module (``ke.erf_block`` after ``import numerics.kernels.erf_poly
as ke``), not as names imported into the enclosing function: numba keys a closure's cache entry on the pickled
closure variables, and a pickled compiled function differs from one process to the next, so every process would
miss the cache, compile again (about 1.5 s for ``erf_block``'s) and add a file to the cache folder.
"""


def njit_over_kernels(fn):
    """``numba.njit(fn)``, with ``cache=True`` when numba's cache folder is ``kernel_cache_dir()``
    (import the kernel modules whose helpers ``fn`` calls first)."""
    import numba

    from numerics.kernels import kernel_cache_dir

    compiled = [c.cell_contents for c in fn.__closure__ or () if isinstance(c.cell_contents, numba.core.dispatcher.Dispatcher)]
    if compiled:
        raise TypeError(f"{fn.__qualname__} closes over the compiled function(s) {[f.__name__ for f in compiled]}: "
                        "call them through their module so that numba's cache key is the same in every process")
    return numba.njit(cache=numba.config.CACHE_DIR == str(kernel_cache_dir()))(fn)
