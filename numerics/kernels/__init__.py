"""Compiled kernels (numba, cached on disk, compiled lazily) of the toolkit's hot loops.
The cache folder is named by a digest of every kernel module's source (``kernel_cache_dir``), so an
edit of a helper that a kernel compiles in is never hidden by stale machine code.

Each kernel is the inner loop of a NumPy reference route, transcribed operation by operation:
``pgd_kernel`` (``numerics.dynamics.pgd.overlap_pgd``), ``vector_pgd_kernel``
(``numerics.dynamics.pgd_vectors.vector_pgd``), ``sgd_reduced_kernel``
(``numerics.sgd.reduced.online_sgd_reduced``), ``sgd_full_kernel`` (``numerics.sgd.full.online_sgd_full``) and ``span_risk_kernel``
(``numerics.montecarlo.population_risk.population_risk_mc``). The public functions choose with
``engine="kernel"`` (default) or ``engine="numpy"`` (the reference); both give the same numbers to
round-off (``docs/math/kernels.md``). Randomness comes from the caller's explicit generators:
NumPy draws the streams and the kernels consume them, except the reduced- and full-SGD kernels' tokens,
which they draw from the run's own ``numpy.random.Generator`` (its SFC64 state, ``sfc64``: the same numbers as
NumPy's), so the seeds mean the same on both routes.

The kernel modules (``pgd_step``, ``pgd_vectors_step``, ``sgd_step``, ``sgd_full_step``, ``montecarlo_step``, ``sfc64``) import numba; this package
and the routes import them only when a kernel runs.
"""

from ._jit import ENGINES, check_engine, kernel_cache_dir, source_digest
from .blas import blas_threads_per_worker, limit_blas_threads

__all__ = ["ENGINES", "check_engine", "kernel_cache_dir", "source_digest", "blas_threads_per_worker", "limit_blas_threads"]
