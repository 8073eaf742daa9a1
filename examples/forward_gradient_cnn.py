"""A small convolutional classifier trained by *forward gradients* (no backward pass), next to the
same network trained by backpropagation.

Forward gradient (Baydin et al., "Gradients without Backpropagation", 2022): draw a random
direction v ~ N(0, I) over all parameters, compute the directional derivative
d = grad L . v with one forward-mode pass (a jvp: dual numbers through conv, relu, max
pooling, linear and cross entropy), and step along g = d v, an unbiased estimate of the
gradient. Backpropagation computes grad L exactly with one reverse pass.

Data: 8x8 images of a horizontal bar, a vertical bar or a diagonal, with noise (3 classes).
Net: conv 3x3 (1 -> 4 channels) -> relu -> max pool 2 -> linear (64 -> 3).

Run: python examples/forward_gradient_cnn.py
"""

from __future__ import annotations

import numpy as np

import pushforward as pf
import pushforward.nn.functional as F
from pushforward.func import jvp

N_CLASSES = 3


def make_data(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """n noisy 8x8 images with labels: 0 a horizontal bar, 1 a vertical bar, 2 a diagonal."""
    x = 0.3 * rng.standard_normal((n, 1, 8, 8))
    y = rng.integers(0, N_CLASSES, n)
    for i in range(n):
        k = rng.integers(1, 7)
        if y[i] == 0:
            x[i, 0, k, :] += 1.0
        elif y[i] == 1:
            x[i, 0, :, k] += 1.0
        else:
            x[i, 0] += np.eye(8, k=int(k) - 4)
    return x, y


def init_params(rng: np.random.Generator) -> list[np.ndarray]:
    return [
        rng.standard_normal((4, 1, 3, 3)) / 3.0,
        np.zeros(4),
        rng.standard_normal((N_CLASSES, 64)) / 8.0,
        np.zeros(N_CLASSES),
    ]


def forward(params, x):
    w1, b1, w2, b2 = params
    h = F.max_pool2d(F.relu(F.conv2d(x, w1, b1, padding=1)), 2)  # (n, 4, 4, 4)
    return F.linear(h.flatten(1), w2, b2)


def loss_fn(x, y):
    def loss(*params):
        return F.cross_entropy(forward(params, x), y)

    return loss


def accuracy(params, x, y) -> float:
    with pf.no_grad():
        pred = forward([pf.tensor(p) for p in params], x).argmax(1).numpy()
    return float((pred == y.numpy()).mean())


def train_forward_gradient(params, x, y, steps, lr, rng, directions=1):
    """Each step: `directions` jvps along random v (no backward pass); step along the mean of d * v."""
    params = [p.copy() for p in params]
    loss = loss_fn(x, y)
    curve = []
    for _ in range(steps):
        est = [np.zeros_like(p) for p in params]
        for _ in range(directions):
            v = [rng.standard_normal(p.shape) for p in params]
            value, d = jvp(loss, tuple(pf.tensor(p) for p in params), tuple(pf.tensor(t) for t in v))
            for e, t in zip(est, v):
                e += float(d) * t / directions
        curve.append(float(value))
        params = [p - lr * e for p, e in zip(params, est)]
    return params, curve


def train_backprop(params, x, y, steps, lr):
    params = [p.copy() for p in params]
    loss = loss_fn(x, y)
    curve = []
    for _ in range(steps):
        ts = [pf.tensor(p, requires_grad=True) for p in params]
        value = loss(*ts)
        grads = pf.autograd.grad(value, ts)
        curve.append(float(value))
        params = [p - lr * g.numpy() for p, g in zip(params, grads)]
    return params, curve


def check_directional_derivative(params, x, y, rng) -> float:
    """|jvp(L, v) - grad L . v| / |grad L . v|: forward and reverse mode agree on the same net."""
    loss = loss_fn(x, y)
    v = [rng.standard_normal(p.shape) for p in params]
    _, d = jvp(loss, tuple(pf.tensor(p) for p in params), tuple(pf.tensor(t) for t in v))
    ts = [pf.tensor(p, requires_grad=True) for p in params]
    grads = pf.autograd.grad(loss(*ts), ts)
    exact = sum(float((g.numpy() * t).sum()) for g, t in zip(grads, v))
    return abs(float(d) - exact) / abs(exact)


def main(steps: int = 150, verbose: bool = True, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    xn, yn = make_data(96, rng)
    x, y = pf.tensor(xn), pf.tensor(yn)
    p0 = init_params(rng)
    agree = check_directional_derivative(p0, x, y, rng)
    pf_fg, curve_fg = train_forward_gradient(
        p0, x, y, steps, lr=0.02, rng=np.random.default_rng(seed + 1), directions=4
    )
    pf_bp, curve_bp = train_backprop(p0, x, y, steps, lr=0.3)
    xt, yt = make_data(300, np.random.default_rng(seed + 2))
    res = {
        "forward_gradient": curve_fg,
        "backprop": curve_bp,
        "jvp_vs_grad_rel_error": agree,
        "acc_forward_gradient": accuracy(pf_fg, pf.tensor(xt), pf.tensor(yt)),
        "acc_backprop": accuracy(pf_bp, pf.tensor(xt), pf.tensor(yt)),
        "acc_initial": accuracy(p0, pf.tensor(xt), pf.tensor(yt)),
    }
    if verbose:
        n_params = sum(p.size for p in p0)
        print(f"CNN with {n_params} parameters on 96 synthetic 8x8 images (3 classes), {steps} steps each")
        print(f"jvp vs backprop directional derivative, relative difference: {agree:.1e}\n")
        print(f"{'step':>5}  {'forward gradient (4 jvps/step)':>30}  {'backpropagation':>16}")
        for k in list(range(0, steps, max(steps // 10, 1))) + [steps - 1]:
            print(f"{k:>5}  {curve_fg[k]:>30.4f}  {curve_bp[k]:>16.4f}")
        print(
            f"\ntest accuracy: initial {res['acc_initial']:.2f}, forward gradient "
            f"{res['acc_forward_gradient']:.2f}, backpropagation {res['acc_backprop']:.2f}"
        )
    return res


if __name__ == "__main__":
    main()
