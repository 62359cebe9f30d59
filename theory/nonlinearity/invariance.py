"""Invariance of M = {theta = eta = rho = 0} for every member, proved with sympy
(docs/math/nonlinearities.md#invariance-of-m).

Claim: for every predictor T(X) = sum_l phi_l(a_1, ..., a_L) b_l (every member of the family:
element-wise phi_l = sigma(lambda a_l), softmax phi_l = w_l), R(kappa, nu, theta, eta, rho) =
R(kappa, nu, -theta, -eta, -rho). Hence R_theta, R_eta, R_rho are odd under that flip and vanish
on M, and PGD and the flow (``numerics.dynamics.overlap_steps``) keep M invariant. No oddness of sigma is
needed (the paper's erf argument, Section 3, uses it; the symmetry below does not).

Proof (each step checked symbolically by ``m_invariance_proof``):
1. the informative token's density of (a, b, y) with (theta, eta, rho) equals the density of
   (a, -b, -y) with (-theta, -eta, -rho) (mean s (kappa, theta, 0), covariance gamma^2 G);
2. a noise token's density of (a, b) with rho equals that of (a, -b) with -rho;
3. the loss (y + xi - sum_l phi_l(a) b_l)^2 is unchanged by (b_l, y, xi) -> -(b_l, y, xi) (xi is
   centred Gaussian, symmetric), for arbitrary functions phi_l (checked with L = 3 undefined
   sympy functions; the algebra is the same for every L).
Changing variables (b, y, xi) -> -(b, y, xi) in the expectation then gives the claim.
Steps 1 and 2 compare the two Gaussian densities through what determines them, the quadratic form
Q = (x - m)^T C^-1 (x - m) (a rational function: its difference cancelled to 0) and det C (a
polynomial: its difference expanded to 0), since N(m, C)(x) = exp(-Q/2) / sqrt((2 pi)^n det C); the
same identity as simplifying the difference of the two densities, at a twentieth of the cost.
"""

from __future__ import annotations

import dataclasses

__all__ = ["MInvarianceProof", "m_invariance_proof", "gaussian_density", "gaussian_form"]


@dataclasses.dataclass(frozen=True)
class MInvarianceProof:
    """The simplified residuals of the three steps and ``holds`` (every residual exactly 0); a density
    step's residual is the pair (quadratic form, covariance determinant) of the module docstring."""

    informative_density: object
    noise_density: object
    loss: object

    @property
    def holds(self) -> bool:
        return all(r == 0 for r in (*self.informative_density, *self.noise_density, self.loss))


def gaussian_form(x, mean, cov):
    """(Q, det C) of the Gaussian N(mean, cov) at x: Q = (x - mean)^T cov^-1 (x - mean), sympy
    expressions (column matrices x, mean); the density is exp(-Q/2) / sqrt((2 pi)^n det C)."""
    diff = x - mean
    return (diff.T * cov.inv() * diff)[0, 0], cov.det()


def gaussian_density(x, mean, cov):
    """The Gaussian density N(mean, cov) at x, as a sympy expression (column matrices x, mean)."""
    import sympy as sp

    q, det = gaussian_form(x, mean, cov)
    return sp.exp(-q / 2) / sp.sqrt((2 * sp.pi) ** len(x) * det)


def _form_residual(one, two):
    """(Q_1 - Q_2 cancelled, det_1 - det_2 expanded): (0, 0) iff the two densities are equal."""
    import sympy as sp

    return sp.cancel(one[0] - two[0]), sp.expand(one[1] - two[1])


def m_invariance_proof() -> MInvarianceProof:
    """Steps 1-3 of the module docstring, each simplified to its residual (0 when it holds)."""
    import sympy as sp

    a, b, y, xi = sp.symbols("a b y xi", real=True)
    kappa, nu, theta, eta, rho = sp.symbols("kappa nu theta eta rho", real=True)
    s, gamma = sp.symbols("s gamma", positive=True)

    def informative(th, et, rh, bb, yy):
        G = sp.Matrix([[1, rh, et], [rh, 1, nu], [et, nu, 1]])
        return gaussian_form(sp.Matrix([a, bb, yy]), s * sp.Matrix([kappa, th, 0]), gamma**2 * G)

    def noise(rh, bb):
        return gaussian_form(sp.Matrix([a, bb]), sp.zeros(2, 1), sp.Matrix([[1, rh], [rh, 1]]))

    r1 = _form_residual(informative(theta, eta, rho, b, y), informative(-theta, -eta, -rho, -b, -y))
    r2 = _form_residual(noise(rho, b), noise(-rho, -b))
    A = sp.symbols("a1:4", real=True)
    B = sp.symbols("b1:4", real=True)
    phi = [sp.Function(f"phi{l}")(*A) for l in range(1, 4)]
    loss = lambda bs, yy, x: (yy + x - sum(p * bl for p, bl in zip(phi, bs))) ** 2
    r3 = sp.expand(loss(B, y, xi) - loss([-bl for bl in B], -y, -xi))
    return MInvarianceProof(r1, r2, r3)
