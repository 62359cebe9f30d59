"""The ``slr`` command line: ``slr risk``, and later ``slr figures``, ``slr verify``, ``slr reproduce``."""

from __future__ import annotations

import argparse
import sys

import numpy as np


def _risk_command(args) -> int:
    from theory import Overlaps, Problem, population_risk
    from theory.risk_quad import population_risk_quad

    problem = Problem(d=args.d, L=args.L, gamma=args.gamma, eps=args.eps, lam=args.lam)
    overlaps = Overlaps(kappa=args.kappa, nu=args.nu, theta=args.theta, eta=args.eta, rho=args.rho)
    print(f"closed form : {float(population_risk(problem, overlaps)):.15g}")
    if args.quad:
        q = population_risk_quad(problem, overlaps)
        print(f"quadrature  : {q.value:.15g}  (abserr {q.abserr:.2g})")
    if args.mc:
        from numerics.montecarlo import population_risk_mc

        est = population_risk_mc(problem, overlaps, n=args.mc, rng=np.random.default_rng(args.seed))
        print(f"Monte Carlo : {est.mean:.15g}  (stderr {est.stderr:.2g}, n {est.n})")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="slr",
        description="Companion toolkit of 'Attention layers provably solve single-location regression'.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    risk = sub.add_parser("risk", help="population risk at given parameters and overlaps")
    risk.add_argument("--d", type=int, required=True, help="token dimension")
    risk.add_argument("--L", type=int, default=10, help="number of tokens (default 10)")
    risk.add_argument("--gamma", type=float, default=np.sqrt(0.5), help="default sqrt(1/2)")
    risk.add_argument("--eps", type=float, default=0.0, help="output noise (default 0)")
    risk.add_argument("--lam", type=float, required=True, help="lambda, the erf inverse temperature")
    for name, default in (("kappa", None), ("nu", None), ("theta", 0.0), ("eta", 0.0), ("rho", 0.0)):
        risk.add_argument(f"--{name}", type=float, default=default, required=default is None)
    risk.add_argument("--quad", action="store_true", help="also by quadrature")
    risk.add_argument("--mc", type=int, default=0, metavar="N", help="also by Monte Carlo with N samples")
    risk.add_argument("--seed", type=int, default=0, help="seed of the Monte-Carlo route")
    risk.set_defaults(func=_risk_command)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except ValueError as exc:
        parser.exit(2, f"slr {args.command}: error: {exc}\n")


if __name__ == "__main__":
    sys.exit(main())
