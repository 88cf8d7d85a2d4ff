# RUN: %PYTHON %s | FileCheck %s
# GradBench's gmm eval (gradir.tools.gradbench.evals.gmm): the log posterior
# and its gradient w.r.t. alpha, mu, q, l, with m = 2 and gamma = 1.5, against
# a numpy implementation of the README's definition (Gaussian densities from
# Sigma^-1 = Q^T Q, a Wishart density with V = I / gamma^2, no algebraic
# simplification) and central differences (Inputs/gmm.json;
# `python gmm.py --regenerate` rewrites it).

import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
import gb_check  # noqa: E402

D, K, N, M, GAMMA = 3, 4, 10, 2, 1.5
SIZES = {"alpha": (K,), "mu": (K, D), "q": (K, D), "l": (K, D * (D - 1) // 2)}


def q_matrix(q, l):
    Q, ii = np.zeros((D, D)), 0
    for j in range(D):
        Q[j, j] = np.exp(q[j])
        for i in range(j + 1, D):
            Q[i, j] = l[ii]
            ii += 1
    return Q


def log_wishart(X, p, n, V):
    lgp = p * (p - 1) / 4 * math.log(math.pi) + sum(math.lgamma(n / 2 + (1 - j) / 2)
                                                    for j in range(1, p + 1))
    return ((n - p - 1) / 2 * np.log(np.linalg.det(X)) - np.trace(np.linalg.inv(V) @ X) / 2
            - n * p / 2 * math.log(2) - n / 2 * np.log(np.linalg.det(V)) - lgp)


def log_posterior(x, alpha, mu, q, l):
    phi = np.exp(alpha) / np.sum(np.exp(alpha))
    prec = [q_matrix(q[k], l[k]).T @ q_matrix(q[k], l[k]) for k in range(K)]
    total = 0.0
    for i in range(N):
        terms = []
        for k in range(K):
            dx = x[i] - mu[k]
            terms.append(np.log(phi[k]) - dx @ prec[k] @ dx / 2 - D / 2 * math.log(2 * math.pi)
                         + np.log(np.linalg.det(prec[k])) / 2)
        mx = max(terms)
        total += mx + np.log(sum(np.exp(t - mx) for t in terms))
    V = np.eye(D) / GAMMA ** 2
    return float(total + sum(log_wishart(prec[k], D, D + M + 1, V) for k in range(K)))


def regenerate():
    rng = np.random.default_rng(45)
    x = rng.normal(size=(N, D))
    ind = {"alpha": rng.normal(size=K), "mu": rng.uniform(size=(K, D)),
           "q": rng.normal(size=(K, D)) * 0.3, "l": rng.normal(size=(K, D * (D - 1) // 2))}
    flat = np.concatenate([ind[k].ravel() for k in SIZES])

    def f(v):
        parts, off = {}, 0
        for k, shape in SIZES.items():
            size = int(np.prod(shape))
            parts[k] = v[off:off + size].reshape(shape)
            off += size
        return log_posterior(x, **parts)
    g = gb_check.central_differences(f, flat)
    grads, off = {}, 0
    for k, shape in SIZES.items():
        size = int(np.prod(shape))
        grads[k] = g[off:off + size].reshape(shape).tolist()
        off += size
    gb_check.save("gmm", {"d": D, "k": K, "n": N, "x": x.tolist(), "m": M, "gamma": GAMMA}
                  | {k: v.tolist() for k, v in ind.items()},
                  {"objective": f(flat), "jacobian": grads})


def main():
    from gradir.tools.gradbench.evals import gmm as module
    gb_check.check("gmm", module, 1e-7)


if __name__ == "__main__":
    regenerate() if "--regenerate" in sys.argv else main()

# CHECK: functions: objective, jacobian
# CHECK-NEXT: gmm objective ok
# CHECK-NEXT: gmm jacobian ok
