"""The compiled PGD route with its step size changed: the corruption that tests of the PGD claims plant."""

import numerics.dynamics.pgd as pgd_module


def scale_pgd_step_size(monkeypatch, factor):
    """``overlap_pgd``'s compiled route (the default engine) runs with the step size alpha * factor: each step is
    ``pgd_step(alpha * factor, ...)``, since the kernel compiles ``numerics.dynamics.overlap_steps.pgd_step``
    itself (``numerics.kernels.pgd_step._pgd_step = jit(pgd_step)``). The same corruption as a changed
    ``pgd_step`` on the NumPy route, at the compiled route's speed."""
    kernel = pgd_module._ROUTES["kernel"]

    def scaled(state, logs, log_steps, lam, first, cols, d, L, gamma, alpha, *rest):
        return kernel(state, logs, log_steps, lam, first, cols, d, L, gamma, alpha * factor, *rest)

    monkeypatch.setitem(pgd_module._ROUTES, "kernel", scaled)
