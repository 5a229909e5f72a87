#!/usr/bin/env python3
"""Fit the polynomials of graphlab's float32 Erf kernel (src/ops/elementwise.c) and print
them as C statements.

    python3 bench/erf_fit.py          (needs numpy)

Two pieces, both evaluated in double and rounded once to float:
  |x| <  SPLIT:  erf(x) = x * P(x*x)          P fitted for relative error
  |x| >= SPLIT:  erf(x) = 1 - Q(t), t = |x| mapped from [SPLIT, ONE] onto [-1, 1],
                 Q fitted to erfc for absolute error (the result is within 0.16 of 1,
                 so absolute error is what costs ulps); |x| is clamped to ONE, where
                 1 - erfc(ONE) already rounds to 1.0f.
The fits are minimax by Lawson's iteration (reweighted least squares) on Chebyshev nodes;
the reference is Python's math.erf / math.erfc in double.
"""
import math
import numpy as np

SPLIT, ONE = 1.0, 3.92
DEG_P, DEG_Q = 6, 14


def minimax(t, f, deg, relative):
    scale = 1 / np.abs(f) if relative else np.ones_like(f)
    w = np.ones_like(t)
    V = np.vander(t, deg + 1, increasing=True)
    for _ in range(200):
        c, *_ = np.linalg.lstsq(V * (w * scale)[:, None], f * w * scale, rcond=None)
        err = np.abs(V @ c - f) * scale
        w = w * np.sqrt(err / err.max()) + 1e-30
        w /= w.max()
    return c, err.max()


def horner(var, name, c):
    lines = ["double %s = %.17g;" % (name, c[-1])]
    lines += ["%s = %s * %s + %.17g;" % (name, name, var, c[k]) for k in range(len(c) - 2, -1, -1)]
    return "\n".join(lines)


nodes = np.cos(np.linspace(0, np.pi, 8000))
u = (nodes + 1) / 2 * SPLIT * SPLIT
fp = np.array([math.erf(math.sqrt(v)) / math.sqrt(v) if v > 0 else 2 / math.sqrt(math.pi)
               for v in u])
cp, ep = minimax(u, fp, DEG_P, True)
a = (nodes + 1) / 2 * (ONE - SPLIT) + SPLIT
fq = np.array([math.erfc(v) for v in a])
cq, eq = minimax(nodes, fq, DEG_Q, False)
print("/* P: degree %d, max relative error %.2g; Q: degree %d, max absolute error %.2g */"
      % (DEG_P, ep, DEG_Q, eq))
print("t = a * %.17g + %.17g;" % (2 / (ONE - SPLIT), -(ONE + SPLIT) / (ONE - SPLIT)))
print(horner("u", "p", cp))
print(horner("t", "q", cq))
