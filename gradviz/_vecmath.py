r"""float32 arithmetic rounded step by step as PyTorch's CPU kernels round it, so results agree to the bit.

Floating-point results depend on the order of the roundings, not only on the formula.  This module
repeats, on whole numpy arrays (no loop over elements), the steps PyTorch 2.13's CPU kernels take
for float32 on an x86-64 machine with AVX-512 or AVX2, so gradviz prints PyTorch's digits:

* :func:`fma` -- ``a·b + c`` with one rounding, as the processor's fused multiply-add;
* :func:`sigmoid` -- ``1 / (1 + e^{-x})``: SLEEF's vectorised ``expf`` (:func:`sleef_exp`, its
  polynomial re-derived below) on whole vectors of 16, the C library's ``expf`` on the leftovers;
* :func:`mm` -- small matrix products in the order PyTorch's CPU gemm adds the products up:
  one product after the other, separately rounded, for small outputs; one fused multiply-add
  after the other (the vectorised kernel) once the output has at least 4 rows and 12 columns;
  ``addmm``'s bias added last;
* :func:`libm` -- ``exp``, ``log``, ``sin``, ``cos``, ``tanh``: correctly rounded (computed in
  float64, rounded once).  PyTorch runs these float32 functions through Intel MKL's vector maths
  library (``vmsExp``... with ``VML_HA``, for any tensor layout and CPU capability), whose
  algorithms are not public; MKL's results are within 1 ulp of these and equal on 92-99.8% of
  inputs (``tests/test_vecmath.py`` measures the share).

float64 and other dtypes are left to numpy.  The SLEEF algorithm is public (https://sleef.org);
this is a re-derivation in numpy, the maths next to each step.  This module imports nothing from
gradviz: it is the bottom layer.
"""

import numpy as np

__all__ = ["fma", "sleef_exp", "libm", "sigmoid", "mm", "mm_grad_a", "mm_grad_b", "mv", "dot", "bmm"]

_f = np.float32
_d = np.float64
_MID_LOW = np.uint64(1 << 28)          # a float32 rounding midpoint, seen in a double's low 29 bits
_LOW29 = np.uint64((1 << 29) - 1)


# --- one rounding ------------------------------------------------------------------------------

def fma(a, b, c):
    r"""``a·b + c`` rounded once to float32, as the processor's fused multiply-add rounds it.

    The product of two float32 numbers is exact in float64 (24 + 24 bits < 53), so only the sum
    can round twice: first to float64, then to float32.  Rounding twice gives a different answer
    only when the float64 sum lands exactly on a float32 midpoint while the exact sum was not
    there; that case is found from the low bits and decided by the exact remainder of the sum
    (Knuth's two-sum), so the result is always the correctly rounded :math:`\mathrm{fl}(ab + c)`.
    """
    p = np.multiply(a, b, dtype=_d)
    c = np.asarray(c, dtype=_d)
    s = p + c
    low = np.asarray(s).view(np.uint64) & _LOW29
    tie = low == _MID_LOW
    if tie.any():  # rare: settle the tie with the part of p + c that float64 rounded away
        s = np.array(s, dtype=_d, copy=True, ndmin=1)
        p, c, tie = (np.broadcast_to(v, s.shape) for v in (p, c, tie))
        bb = s - p
        err = (p - (s - bb)) + (c - bb)
        nudge = tie & (err != 0)
        s[nudge] = np.nextafter(s[nudge], np.where(err[nudge] > 0, np.inf, -np.inf))
        if np.ndim(p) == 0:
            s = s.reshape(())
    return s.astype(_f)


def _rint(x):
    """Round to the nearest integer, ties to even, as ``cvtps2dq`` does (float32 -> int32)."""
    with np.errstate(invalid="ignore"):
        r = np.rint(np.nan_to_num(x, nan=0.0, posinf=2.0**31, neginf=-2.0**31))
        r = np.clip(r, -2.0**31, 2.0**31 - 128)
    return r.astype(np.int32)


def _pow2i(q):
    """2^q as float32, built from its exponent bits (q within the normal range)."""
    return ((q.astype(np.int32) + 0x7F) << 23).astype(np.int32).view(_f)


def _ldexp2(x, q):
    """x·2^q in two steps (2^⌊q/2⌋ then 2^(q−⌊q/2⌋)), so 2^q may overflow or underflow alone."""
    h = q >> 1
    return (x * _pow2i(h)) * _pow2i(q - h)


# --- exp ---------------------------------------------------------------------------------------

_R_LN2 = _f(1.442695040888963407359924681001892137426645954152985934135449406931)
_L2U, _L2L = _f(0.693145751953125), _f(1.428606765330187045e-06)   # ln 2 = L2U + L2L (+ tiny)
_EXP_C = [_f(c) for c in (0.000198527617612853646278381, 0.00139304355252534151077271,
                          0.00833336077630519866943359, 0.0416664853692054748535156,
                          0.166666671633720397949219, 0.5)]


def sleef_exp(d):
    r"""SLEEF ``expf`` (1.0 ulp): :math:`e^d = 2^q e^s` with :math:`q = \mathrm{rint}(d/\ln 2)`.

    :math:`s = d - q \ln 2` is formed with ln 2 split in two (L2U has few bits, so ``q·L2U`` is
    exact), then :math:`e^s ≈ 1 + s + s^2 P(s)` with a degree-5 polynomial P in Horner form, one
    fused multiply-add per coefficient.  Below −104 the result is 0, above 100 it is ∞.
    """
    with np.errstate(all="ignore"):
        q = _rint(d * _R_LN2)
        qf = q.astype(_f)
        s = fma(qf, -_L2U, d)
        s = fma(qf, -_L2L, s)
        u = np.full_like(s, _EXP_C[0])
        for c in _EXP_C[1:]:
            u = fma(u, s, c)
        u = _f(1) + fma(s * s, u, s)
        u = _ldexp2(u, np.clip(q, -256, 256))
    u = np.where(d < _f(-104), _f(0), u)
    u = np.where(d > _f(100), _f(np.inf), u)
    return np.where(np.isnan(d), d, u)


def libm(f):
    """``f`` (a numpy ufunc such as ``np.exp``) for float32 computed in float64 and rounded once:
    the correctly rounded result (C's ``expf`` and MKL's functions are within an ulp of it)."""
    def rounded(a):
        a = np.asarray(a)
        with np.errstate(all="ignore"):
            return f(a.astype(_d)).astype(_f) if a.dtype == _f else f(a)
    rounded.__name__ = rounded.__qualname__ = f.__name__
    rounded.__doc__ = f"{f.__name__}, float32 correctly rounded (computed in float64)"
    return rounded


_libm_exp = libm(np.exp)


def sigmoid(a):
    r"""σ(x) = 1 / (1 + e^{−x}), rounded after each of the three steps as PyTorch's kernel does.

    The kernel runs whole vectors of 16 through SLEEF's exp and finishes the elements left over
    (fewer than 32 after the last pair of vectors) with the C library's ``expf``; both are
    repeated here, by position in the flattened (C-ordered) tensor.
    """
    a = np.asarray(a)
    if a.dtype != _f:
        with np.errstate(all="ignore"):
            return 1 / (1 + np.exp(-a))
    flat = a.reshape(-1)
    n = flat.size
    cut = n - n % 32
    e = np.concatenate((sleef_exp(_f(0) - flat[:cut]), _libm_exp(-flat[cut:])))
    with np.errstate(all="ignore"):
        return (_f(1) / (_f(1) + e)).reshape(a.shape)



# --- matrix products ---------------------------------------------------------------------------

def _fma_chain(products64, start):
    """``start`` then one fused multiply-add per product along axis 1, each rounded to float32.

    ``products64`` holds the exact products (float64); a tie seen in a low-bit check is settled
    by :func:`fma` itself on the rare rows concerned.
    """
    acc = start
    tie = False
    for p in range(products64.shape[1]):
        s = products64[:, p] + acc
        tie = tie or bool(((s.view(np.uint64) & _LOW29) == _MID_LOW).any())
        acc = s.astype(_f)
    return acc, tie


def mm(a, b, bias=None):
    r"""``a @ b (+ bias)`` for 2-D float32 arrays, in the order PyTorch's CPU gemm rounds.

    :math:`c_{ij} = \sum_p a_{ip} b_{pj}`, accumulated from 0 along p, one element after the other:

    * an output of at least 4 rows and 12 columns goes to the vectorised kernel: each step is a
      fused multiply-add :math:`c ← \mathrm{fl}(a_{ip} b_{pj} + c)`;
    * a smaller output is added up by plain loops: :math:`c ← \mathrm{fl}(c + \mathrm{fl}(a_{ip} b_{pj}))`.

    ``addmm``'s bias is added to the finished sum (one more rounding).  Other dtypes: numpy.
    """
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != _f or b.dtype != _f or a.ndim != 2 or b.ndim != 2:
        out = np.matmul(a, b)
        return out if bias is None else out + bias
    m, k = a.shape
    n = b.shape[1]
    with np.errstate(all="ignore"):
        if m >= 4 and n >= 12 and k:
            products = np.multiply(a[:, :, None], b[None, :, :], dtype=_d)   # exact
            out, tie = _fma_chain(products, np.zeros((m, n), _f))
            if tie:  # redo with the exact fused multiply-add (a float64 sum landed on a tie)
                out = np.zeros((m, n), _f)
                for p in range(k):
                    out = fma(a[:, p:p + 1], b[p:p + 1, :], out)
        else:
            first = bias is not None and _bias_first(a, b)
            start = np.broadcast_to(np.asarray(bias, _f) if first else _f(0), (m, n))[:, None, :]
            steps = np.concatenate((start, a[:, :, None] * b[None, :, :]), axis=1)
            out = np.add.accumulate(steps, axis=1)[:, -1]
            if first:
                return out
        return out if bias is None else out + np.asarray(bias, _f)


def _bias_first(a, b):
    """Does the plain-loop gemm start from the bias (``c = beta·c`` then ``c += ...``) or add it to
    the finished sum?  It depends on which loop the operands' layouts select (measured)."""
    by_rows_a, by_rows_b = not _column_major(a), not _column_major(b)
    if by_rows_a:
        return by_rows_b and b.shape[1] > 1
    return by_rows_b or b.shape[1] == 1


def _column_major(x):
    """A 2-D array laid out by columns (a transposed view, such as ``W.t()`` in ``nn.Linear``).
    A value the engine did not save (no ``strides``) counts as laid out by rows."""
    strides = getattr(x, "strides", None)
    return strides is not None and len(strides) == 2 and strides[0] < strides[1]


def mm_grad_a(g, y, a, b):
    """∂(a @ b)/∂a applied to g (the op table's rule, y unused), as PyTorch's
    ``mm_mat1_backward`` multiplies: ``g @ bᵀ``, or
    ``(b @ gᵀ)ᵀ`` when ``a`` was laid out by columns (the product then has b's rows)."""
    return mm(b, g.T).T if _column_major(a) else mm(g, b.T)


def mm_grad_b(g, y, a, b):
    """∂(a @ b)/∂b applied to g: ``aᵀ @ g``, or ``(gᵀ @ a)ᵀ`` when ``b`` was laid out by columns
    (``nn.Linear``'s ``Wᵀ``: the weight's gradient is then computed in the weight's own shape)."""
    return mm(g.T, a).T if _column_major(b) else mm(a.T, g)


def mv(a, v):
    """``a @ v`` (matrix times vector) for float32: each row's products added from 0 in order."""
    return mm(a, np.asarray(v)[:, None])[:, 0] if np.asarray(a).dtype == _f else np.matmul(a, v)


def dot(a, b):
    """``a · b`` for float32 vectors, the products added from 0 in order."""
    return mm(np.asarray(a)[None, :], np.asarray(b)[:, None])[0, 0] if np.asarray(a).dtype == _f \
        else np.dot(a, b)


def bmm(a, b):
    """A batch of matrix products, each as :func:`mm`."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != _f or a.ndim != 3:
        return np.matmul(a, b)
    return np.stack([mm(x, y) for x, y in zip(a, b)]) if len(a) else np.matmul(a, b)
