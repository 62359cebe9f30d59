"""An approximate Jacobian of the moment closure's right-hand side, for the Newton iterations of stiff solvers
(docs/math/highdim.md#fluctuations-of-the-fast-overlap).

The closure's state is z = (x (5), upper triangle of Sigma (15)) with dx/dtau = F + alpha D + curvature and
dSigma/dtau = J Sigma + Sigma J^T + alpha J Sigma J^T + (alpha / B) C (``numerics.highdim.moment_closure_rhs``). Its
stiffness is the fast mode of J (rate ~ d), so the block-diagonal matrix

    d(dx)/dx ~ J,    d(dSigma)/dSigma = the linear map S -> J S + S J^T (+ alpha J S J^T in discrete time),

exact in the covariance equation at fixed J and missing only the non-stiff couplings (through D, C and the
curvature), is a Jacobian for the Newton iterations of an implicit method (LSODA's stiff mode, BDF, Radau). It does
not enter the solution's error control: a poorer Jacobian costs iterations, never accuracy. Without it LSODA
differences the 20 components, 20 right-hand sides of up to six quadratures each.
"""

from __future__ import annotations

import numpy as np

__all__ = ["closure_jacobian", "IMPLICIT_METHODS"]

IMPLICIT_METHODS = ("LSODA", "BDF", "Radau")
_IU = np.triu_indices(5)
# the symmetric basis matrices of the upper-triangle coordinates: E_k = e_i e_j^T + e_j e_i^T (i < j), 2 e_i e_i^T
_BASIS = np.zeros((15, 5, 5))
_BASIS[np.arange(15), _IU[0], _IU[1]] = 1.0
_BASIS = _BASIS + np.swapaxes(_BASIS, 1, 2)


def closure_jacobian(J, *, alpha, discrete_time=True) -> np.ndarray:
    """The 20 x 20 matrix of the module docstring from the Jacobian J (5, 5) used in the covariance equation.
    Column k of the covariance block is the upper triangle of L(E_k) / (1 + [i == j]): a diagonal coordinate
    Sigma_ii enters Sigma once (E_k = 2 e_i e_i^T halved), an off-diagonal one twice."""
    J = np.asarray(J, dtype=float)
    JE = np.einsum("ab,kbc->kac", J, _BASIS)
    L = JE + np.swapaxes(JE, 1, 2)
    if discrete_time:
        L = L + alpha * np.einsum("kab,cb->kac", JE, J)
    L = L / np.where(_IU[0] == _IU[1], 2.0, 1.0)[:, None, None]
    out = np.zeros((20, 20))
    out[:5, :5] = J
    out[5:, 5:] = L[:, _IU[0], _IU[1]].T
    return out
