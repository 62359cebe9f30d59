"""Options of the ODE integrations (scipy ``solve_ivp``), as one frozen object.

Every route that integrates an ODE (``overlap_flow``, ``manifold_flow``, ``separatrix``,
``sgd_flow_gap``) takes ``ode=OdeOptions(...)`` instead of loose ``method``/``rtol``/``atol``
keywords. The default, LSODA at rtol 1e-10 and atol 1e-12, switches to a stiff method by itself
when lambda sqrt(d) is large.
"""

from __future__ import annotations

import dataclasses

import numpy as np

__all__ = ["OdeOptions", "ODE_METHODS"]

ODE_METHODS = ("RK45", "RK23", "DOP853", "Radau", "BDF", "LSODA")


@dataclasses.dataclass(frozen=True, kw_only=True)
class OdeOptions:
    """``method`` (one of ``ODE_METHODS``), relative and absolute tolerances of ``solve_ivp``."""

    method: str = "LSODA"
    rtol: float = 1e-10
    atol: float = 1e-12

    def __post_init__(self):
        if self.method not in ODE_METHODS:
            raise ValueError(f"method={self.method!r} is not allowed: method must be one of {ODE_METHODS}")
        for name in ("rtol", "atol"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float, np.floating)) and np.isfinite(value) and value > 0):
                raise ValueError(f"{name}={value!r} is not allowed: {name} must be a finite number > 0")

    def kwargs(self) -> dict:
        """The keywords of ``scipy.integrate.solve_ivp``."""
        return {"method": self.method, "rtol": self.rtol, "atol": self.atol}
