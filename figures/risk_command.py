"""``slr risk``: the population risk at given parameters and overlaps, by up to three routes (closed
form, quadrature, Monte Carlo; paper Theorem 1)."""

from __future__ import annotations

import numpy as np

from theory.parameters import PAPER_GAMMA, PAPER_L

__all__ = ["add_risk_parser", "risk_command"]


def risk_command(args) -> int:
    """Print the risk of ``args`` by the closed form, and by quadrature / Monte Carlo if asked."""
    from theory import Overlaps, Problem, population_risk
    from theory.risk_quad import population_risk_quad

    problem = Problem(d=args.d, L=args.L, gamma=args.gamma, eps=args.eps, lam=args.lam)
    overlaps = Overlaps(kappa=args.kappa, nu=args.nu, theta=args.theta, eta=args.eta, rho=args.rho)
    print(f"closed form : {float(population_risk(problem, overlaps)):.15g}")
    if args.quad:
        q = population_risk_quad(problem, overlaps)
        print(f"quadrature  : {q.value:.15g}  (abserr {q.abserr:.2g})")
    if args.mc:
        from numerics.montecarlo.population_risk import population_risk_mc

        est = population_risk_mc(problem, overlaps, n=args.mc, rng=np.random.default_rng(args.seed))
        print(f"Monte Carlo : {est.mean:.15g}  (stderr {est.stderr:.2g}, n {est.n})")
    return 0


def add_risk_parser(sub, seed_type) -> None:
    """The ``risk`` subcommand on the subparsers ``sub``; ``seed_type`` parses --seed. Defaults:
    the paper's L and gamma (``theory.PAPER_L``, ``PAPER_GAMMA``)."""
    risk = sub.add_parser("risk", help="population risk at given parameters and overlaps")
    risk.add_argument("--d", type=int, required=True, help="token dimension")
    risk.add_argument("--L", type=int, default=PAPER_L, help=f"number of tokens (default {PAPER_L})")
    risk.add_argument("--gamma", type=float, default=PAPER_GAMMA, help="default sqrt(1/2)")
    risk.add_argument("--eps", type=float, default=0.0, help="output noise (default 0)")
    risk.add_argument("--lam", type=float, required=True, help="lambda, the erf inverse temperature")
    for name, default in (("kappa", None), ("nu", None), ("theta", 0.0), ("eta", 0.0), ("rho", 0.0)):
        risk.add_argument(f"--{name}", type=float, default=default, required=default is None)
    risk.add_argument("--quad", action="store_true", help="also by quadrature")
    risk.add_argument("--mc", type=int, default=0, metavar="N", help="also by Monte Carlo with N samples")
    risk.add_argument("--seed", type=seed_type, default=0, help="seed of the Monte-Carlo route")
    risk.set_defaults(func=risk_command)
