"""``slr risk``: the population risk R(k, v) at given parameters and overlaps, by up to three routes
(closed form of Theorem 1, quadrature, Monte Carlo), at one point or along a sweep of one parameter,
as text or JSON.

The point is given by the problem (d, L, gamma, eps, lambda; see ``theory.Problem``) and the five
overlaps kappa = <k, k*>, nu = <v, v*>, theta = <k, v*>, eta = <v, k*>, rho = <k, v>
(``theory.Overlaps``; the manifold M of the paper is theta = eta = rho = 0).
``--sweep NAME=START:STOP:NUM`` evaluates NUM evenly spaced values of NAME from START to STOP
(both included), ``--sweep NAME=V1,V2,...`` the listed values. The Monte-Carlo route of point i of
a sweep is seeded by ``SeedSequence(seed).spawn(NUM)[i]`` (a single point by ``default_rng(seed)``).
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from theory.parameters import PAPER_GAMMA, PAPER_L

__all__ = ["add_risk_parser", "parse_sweep"]

# (name, type, default or None if required, help)
_PROBLEM = (
    ("d", int, None, "token dimension d (a positive integer)"),
    ("L", int, PAPER_L, f"number of tokens L per sequence (default {PAPER_L}, the paper's)"),
    ("gamma", float, PAPER_GAMMA, "standard deviation gamma of the informative token around "
                                     "sqrt(d/2) k* (default sqrt(1/2), the paper's)"),
    ("eps", float, 0.0, "standard deviation eps of the output noise (default 0)"),
    ("lam", float, None, "lambda, the inverse temperature of the erf attention gate (> 0)"),
)
_OVERLAPS = (
    ("kappa", float, None, "overlap kappa = <k, k*> of the key with the true key, in [-1, 1]"),
    ("nu", float, None, "overlap nu = <v, v*> of the value with the true value, in [-1, 1]"),
    ("theta", float, 0.0, "overlap theta = <k, v*> (default 0: on the manifold M)"),
    ("eta", float, 0.0, "overlap eta = <v, k*> (default 0: on the manifold M)"),
    ("rho", float, 0.0, "overlap rho = <k, v> (default 0: on the manifold M)"),
)
_FIELDS = {name: kind for name, kind, _, _ in _PROBLEM + _OVERLAPS}


def parse_sweep(text: str) -> tuple[str, list]:
    """'lam=0.1:1:10' -> ('lam', 10 values); 'd=100,200,400' -> ('d', [100, 200, 400])."""
    name, sep, spec = text.partition("=")
    name = name.strip()
    if not sep or name not in _FIELDS:
        raise ValueError(f"--sweep {text!r} is not allowed: NAME=START:STOP:NUM or NAME=V1,V2,... is "
                         f"needed, with NAME one of {', '.join(_FIELDS)}")
    try:
        if ":" in spec:
            start, stop, num = spec.split(":")
            if int(num) < 1:
                raise ValueError
            values = np.linspace(float(start), float(stop), int(num)).tolist()
        else:
            values = [float(v) for v in spec.split(",")]
    except ValueError:
        raise ValueError(f"--sweep {text!r} is not allowed: START and STOP must be numbers and NUM a "
                         "positive integer (NAME=START:STOP:NUM), or a comma-separated list of numbers") from None
    if _FIELDS[name] is int:
        if any(v != round(v) for v in values):
            raise ValueError(f"--sweep {text!r} is not allowed: {name} takes integers, got {values}")
        values = [int(round(v)) for v in values]
    return name, values


def _point(args, name=None, value=None) -> tuple:
    from theory import Overlaps, Problem

    fields = {f: getattr(args, f) for f in _FIELDS}
    if name is not None:
        fields[name] = value
    missing = [f"--{f}" for f, v in fields.items() if v is None]
    if missing:
        raise ValueError(f"{', '.join(missing)} is required (give it, or sweep it with --sweep)")
    problem = Problem(**{f: fields[f] for f, *_ in _PROBLEM})
    return problem, Overlaps(**{f: fields[f] for f, *_ in _OVERLAPS}), fields


def _evaluate(args, problem, overlaps, rng) -> dict:
    from theory import population_risk
    from theory.risk_quad import population_risk_quad

    row = {"closed_form": float(population_risk(problem, overlaps))}
    if args.quad:
        q = population_risk_quad(problem, overlaps)
        row["quadrature"] = {"value": float(q.value), "abserr": float(q.abserr)}
    if args.mc:
        from numerics.montecarlo import population_risk_mc

        est = population_risk_mc(problem, overlaps, n=args.mc, rng=rng)
        row["monte_carlo"] = {"mean": float(est.mean), "stderr": float(est.stderr), "n": int(est.n)}
    return row


def _print_point(row) -> None:
    print(f"closed form : {row['closed_form']:.15g}")
    if "quadrature" in row:
        print(f"quadrature  : {row['quadrature']['value']:.15g}  (abserr {row['quadrature']['abserr']:.2g})")
    if "monte_carlo" in row:
        mc = row["monte_carlo"]
        print(f"Monte Carlo : {mc['mean']:.15g}  (stderr {mc['stderr']:.2g}, n {mc['n']})")


def _print_sweep(name, rows) -> None:
    from ..table import text_table

    header = [name, "closed form"]
    header += ["quadrature", "abserr"] if "quadrature" in rows[0] else []
    header += ["Monte Carlo", "stderr"] if "monte_carlo" in rows[0] else []
    body = []
    for r in rows:
        cells = [f"{r['point'][name]:g}", f"{r['closed_form']:.12g}"]
        if "quadrature" in r:
            cells += [f"{r['quadrature']['value']:.12g}", f"{r['quadrature']['abserr']:.2g}"]
        if "monte_carlo" in r:
            cells += [f"{r['monte_carlo']['mean']:.12g}", f"{r['monte_carlo']['stderr']:.2g}"]
        body.append(cells)
    print(text_table(header, body))


def risk_command(args) -> int:
    if args.sweep is None:
        problem, overlaps, fields = _point(args)
        rows = [{"point": fields, **_evaluate(args, problem, overlaps, np.random.default_rng(args.seed))}]
        name = None
    else:
        name, values = parse_sweep(args.sweep)
        points = [_point(args, name, v) for v in values]   # every point validated before any work
        streams = np.random.SeedSequence(args.seed).spawn(len(points))
        rows = [{"point": fields, **_evaluate(args, p, o, np.random.default_rng(s))}
                for (p, o, fields), s in zip(points, streams)]
    if args.json:
        print(json.dumps({"sweep": name, "seed": args.seed, "rows": rows}, indent=1))
    elif name is None:
        _print_point(rows[0])
    else:
        _print_sweep(name, rows)
    return 0


def add_risk_parser(sub, seed_type=int) -> argparse.ArgumentParser:
    """The ``risk`` subcommand on the subparsers ``sub``."""
    risk = sub.add_parser(
        "risk", help="population risk at given parameters and overlaps (closed form, quadrature, Monte Carlo)",
        description="The population risk R(k, v) of the erf attention predictor at the given problem and "
                    "overlaps: closed form (Theorem 1), and on request by quadrature and Monte Carlo; at one "
                    "point, or along a sweep of one parameter or overlap.",
        epilog="example: slr risk --d 400 --lam 0.5 --kappa 0.3 --nu 0.2 --quad --sweep lam=0.1:1:10")
    for title, fields in (("problem", _PROBLEM), ("overlaps of (k, v) with (k*, v*)", _OVERLAPS)):
        group = risk.add_argument_group(title)
        for name, kind, default, text in fields:
            required = " (required unless swept)" if default is None else ""
            group.add_argument(f"--{name}", type=kind, default=default, metavar=name.upper(), help=text + required)
    routes = risk.add_argument_group("routes and output")
    routes.add_argument("--quad", action="store_true", help="also by 1-D Gaussian quadrature (with its error estimate)")
    routes.add_argument("--mc", type=int, default=0, metavar="N",
                        help="also by Monte Carlo with N sampled sequences (mean and standard error)")
    routes.add_argument("--seed", type=seed_type, default=0, help="root seed of the Monte-Carlo route (default 0)")
    routes.add_argument("--sweep", metavar="NAME=START:STOP:NUM",
                        help="evaluate along NUM evenly spaced values of one parameter or overlap (ends "
                             "included), or NAME=V1,V2,... for listed values; one row per value")
    routes.add_argument("--json", action="store_true", help="print JSON (parameters and results of every point)")
    risk.set_defaults(func=risk_command)
    return risk
