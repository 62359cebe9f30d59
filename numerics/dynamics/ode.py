"""Options of the ODE integrations (scipy ``solve_ivp``), as one frozen object.

Every route that integrates an ODE (``overlap_flow``, ``manifold_flow``, ``separatrix``,
``sgd_flow_gap``) takes ``ode=OdeOptions(...)`` instead of loose ``method``/``rtol``/``atol``
keywords. The default, LSODA at rtol 1e-10 and atol 1e-12, switches to a stiff method by itself
when lambda sqrt(d) is large. ``check_solution`` is the one check of an integration's result: every
route raises through it when the solver failed or the state became non-finite.
"""

from __future__ import annotations

import dataclasses

import numpy as np

__all__ = ["OdeOptions", "ODE_METHODS", "check_solution"]

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


def check_solution(sol, what: str, method: str, hint: str = "") -> None:
    """Raise RuntimeError if the ``solve_ivp`` result ``sol`` failed (status < 0) or holds a non-finite
    state: LSODA can report success over NaN states, which would otherwise be returned silently. The
    message: '<what> integration failed at t=<first bad time> with method=<method>: <why><hint>'."""
    finite = np.all(np.isfinite(sol.y), axis=0)
    if sol.status >= 0 and finite.all():
        return
    where, why = ((sol.t[-1], sol.message.rstrip(".")) if finite.all()
                  else (sol.t[np.argmin(finite)], "the state became non-finite"))
    raise RuntimeError(f"{what} integration failed at t={where:.6g} with method={method!r}: {why}{hint}")
