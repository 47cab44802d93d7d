r"""smooth_l1_loss and huber_loss, element by element, and their gradients, rounded step by step as
PyTorch 2.13's CPU kernels (``aten/src/ATen/native/cpu/BinaryOpsKernel.cpp``: ``smooth_l1_kernel``,
``huber_kernel``; ``PointwiseOpsKernel.cpp``: ``smooth_l1_backward_cpu_kernel``,
``huber_backward_cpu_kernel``).

The forwards compute the same thing on vectors and on single numbers.  The gradients do not: the
vector formula (single whole vectors, not pairs: measured against torch 2.13, as hardtanh's gradient;
:func:`gradviz.kernels._activations._pointwise`) multiplies
``norm · (x/β) · g``, the scalar one ``norm · x · g / β`` with β a C ``double`` (the division, and
huber's ``· δ``, done in double and rounded back), and compares x with ±β in double too.  With β = δ = 1
(the defaults) the two agree to the bit.

>>> import numpy as np
>>> smooth_l1(np.array([0.5, 3.0], np.float32), np.zeros(2, np.float32)).tolist()
[0.125, 2.5]
"""

import numpy as np

from ._activations import _pointwise

__all__ = ["smooth_l1", "smooth_l1_backward", "huber", "huber_backward"]


def _common(*arrays):
    """All in their common dtype (a float64 target promotes a float32 input)."""
    dtype = np.result_type(*arrays)
    return tuple(np.asarray(v, dtype) for v in arrays)


def smooth_l1(a, b, beta=1.0):
    """½z²/β where z = |a − b| < β, else z − ½β (β rounded to the inputs' common dtype)."""
    a, b = _common(a, b)
    dt = a.dtype.type
    beta = dt(beta)
    with np.errstate(all="ignore"):
        z = np.abs(a - b)
        return np.where(z < beta, dt(0.5) * z * z / beta, z - dt(0.5) * beta).astype(a.dtype, copy=False)


def huber(a, b, delta=1.0):
    """½z² where z = |a − b| < δ, else δ(z − ½δ): computed in the common dtype, returned in a's
    (PyTorch writes it into a tensor like the input)."""
    out = a.dtype
    a, b = _common(a, b)
    dt = a.dtype.type
    delta = dt(delta)
    with np.errstate(all="ignore"):
        z = np.abs(a - b)
        return np.where(z < delta, dt(0.5) * z * z, delta * (z - dt(0.5) * delta)).astype(out, copy=False)


def _sign(x):
    """The vector loops' ±1: 1 where x > 0, else −1 (blendv(−1, 1, x > 0))."""
    return np.where(x > 0, x.dtype.type(1), x.dtype.type(-1))


def smooth_l1_backward(g, a, b, norm, beta=1.0):
    """norm · g · (sign(x) where |x| ≥ β, else x/β), x = a − b; ``norm`` is 1/n for the mean, else 1.
    Computed in the common dtype, returned in a's (the gradient of a)."""
    out = np.asarray(a).dtype
    g, a, b = _common(g, a, b)
    dtype = a.dtype
    dt = dtype.type
    n, bf = dt(norm), dt(beta)

    def vector(a, b, g):
        x = a - b
        return n * np.where(np.abs(x) >= bf, _sign(x), x / bf) * g

    def scalar(a, b, g):
        x = a - b
        xd = x.astype(np.float64)
        middle = ((n * x * g).astype(np.float64) / float(beta)).astype(dtype)
        return np.where(xd <= -float(beta), -n * g, np.where(xd >= float(beta), n * g, middle))

    return _pointwise(vector, scalar, a, b, g, pairs=False).astype(out, copy=False)


def huber_backward(g, a, b, norm, delta=1.0):
    """norm · g · (±δ where |x| ≥ δ, else x), x = a − b, returned in a's dtype."""
    out = np.asarray(a).dtype
    g, a, b = _common(g, a, b)
    dtype = a.dtype
    dt = dtype.type
    n, df = dt(norm), dt(delta)

    def vector(a, b, g):
        x = a - b
        return n * np.where(np.abs(x) >= df, _sign(x) * df, x) * g

    def scalar(a, b, g):
        x = a - b
        xd, d = x.astype(np.float64), float(delta)
        lo = ((-n * g).astype(np.float64) * d).astype(dtype)
        hi = ((n * g).astype(np.float64) * d).astype(dtype)
        return np.where(xd <= -d, lo, np.where(xd >= d, hi, n * x * g))

    return _pointwise(vector, scalar, a, b, g, pairs=False).astype(out, copy=False)
