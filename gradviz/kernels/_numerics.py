"""Floating-point building blocks of PyTorch's CPU kernels, so gradviz rounds where they round.

``fma(a, b, c)`` is ``a * b + c`` rounded once, as a compiled kernel's fused multiply-add
computes it: ``arange``, ``linspace``, ``rand(low, high)`` and ``add(alpha=)`` use it.

>>> float(fma(0.1, 3.0, -0.3, np.float64)), 0.1 * 3.0 - 0.3    # one rounding, or two
(2.7755575615628914e-17, 5.551115123125783e-17)
"""

import numpy as np

from . import _mkl

__all__ = ["fma", "fma32", "fma64", "two_sum", "two_product", "round_sum", "add"]

_MID_LOW = np.uint64(1 << 28)          # a float32 rounding midpoint, seen in a double's low 29 bits
_LOW29 = np.uint64((1 << 29) - 1)
_LARGE = 1 << 14      # elements from which fma32 works in place
_MKL_FROM = {np.float32: 1 << 16, np.float64: 1 << 12}   # elements from which MKL's fma is the quicker (measured)


def fma(a, b, c, np_dtype):
    """``a * b + c`` rounded once, as the compiled kernels' fused multiply-add does."""
    if np.dtype(np_dtype) == np.float32:
        return fma32(a, b, c)
    return fma64(a, b, c)


def _split(x):
    """``x`` as a high half and a low half of 26 bits each, whose products are exact (Veltkamp)."""
    t = 134217729.0 * x   # 2**27 + 1
    hi = t - (t - x)
    return hi, x - hi


def fma64(a, b, c):
    r"""``a·b + c`` rounded once in float64, as the processor's fused multiply-add rounds it.

    The exact product is the pair ``p + e`` (:func:`two_product`); ``p + c`` is the pair ``s + t``
    (Knuth's two-sum).  Then :math:`ab + c = s + t + e` exactly, and rounding ``t + e`` *to odd*
    (when inexact, to the neighbour whose last bit is 1) before the last addition makes that
    addition round as the exact sum would (Boldo and Melquiond, "Emulation of FMA and correctly
    rounded sums: proved algorithms using rounding to odd", 2008): :func:`round_sum`.  Whole
    arrays, no loop; exact while a·b and its halves stay in the normal range (|a|, |b| < 2⁹⁹⁶);
    beyond, or for ∞ and nan, the plain ``a·b + c``.
    """
    fused = _by_mkl(a, b, c, np.float64, _fma64)
    return _fma64(a, b, c) if fused is None else fused


def _fma64(a, b, c):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return round_sum(*two_product(a, b), c)


def two_sum(x, y):
    """x + y exactly, as the pair (rounded sum, what the rounding dropped) (Knuth; SLEEF's
    ``dfadd2``/``ddadd2`` of two numbers)."""
    s = x + y
    v = s - x
    return s, (x - (s - v)) + (y - v)


def two_product(a, b):
    """(p, e): the float64 product ``p = fl(a·b)`` and what it rounded away, ``e = a·b − p`` exactly
    (Dekker: the factors split into halves of 26 bits, whose products are exact)."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def round_sum(p, e, c):
    """``p + e + c`` rounded once in float64, ``p + e`` an exact product (:func:`two_product`): the
    sum of :func:`fma64`."""
    s, t = two_sum(p, c)                                  # s + t == p + c exactly
    v, lost = two_sum(t, e)                               # v + lost == t + e exactly
    inexact = lost != 0
    # round to odd: step back to the truncated neighbour if v went past t + e, then set the last bit
    bits = (v.view(np.int64) - (inexact & ((lost < 0) != (v < 0)))) | inexact
    out = s + bits.view(np.float64)
    zero = s == 0     # a·b + c exactly 0 (then t = e = 0): s has IEEE's sign for it, -0 only for -0 + -0,
    if zero.any():    # which adding a +0 would lose
        out = np.where(zero & (out == 0), s, out)
    if not np.isfinite(out).all():
        with np.errstate(all="ignore"):
            out = np.where(np.isfinite(out), out, p + c)
    return out


def fma32(a, b, c):
    r"""``a·b + c`` rounded once to float32, as the processor's fused multiply-add rounds it.

    The product of two float32 numbers is exact in float64 (24 + 24 bits < 53), so only the sum
    can round twice: first to float64, then to float32.  Rounding twice gives a different answer
    only when the float64 sum lands exactly on a float32 midpoint while the exact sum was not
    there; that case is found from the low bits and decided by the exact remainder of the sum
    (Knuth's two-sum), so the result is always the correctly rounded :math:`\mathrm{fl}(ab + c)`.
    Large arrays go to the processor's own fused multiply-add, through MKL (:func:`_by_mkl`).
    """
    fused = _by_mkl(a, b, c, np.float32, _fma32)
    return _fma32(a, b, c) if fused is None else fused


def _fma32(a, b, c):
    p = np.multiply(a, b, dtype=np.float64)
    if type(p) is np.ndarray and p.size >= _LARGE and p.flags.c_contiguous and np.ndim(c) <= p.ndim \
            and np.broadcast_shapes(p.shape, np.shape(c)) == p.shape:
        # a large array (an SGD step without MKL; c as it comes, a number or a row broadcast):
        # the same passes in place, no temporary arrays of doubles beyond p (each a fresh
        # allocation the size of the data, slow to touch); the rare tie is settled below from
        # p and s worked out again (1M: c a number 17.7 -> 2.9 ms; b and c rows, BatchNorm's, 6.4 -> 2.9)
        np.add(p, c, out=p)
        out = p.astype(np.float32)
        low = p.view(np.uint64)
        np.bitwise_and(low, _LOW29, out=low)
        tie = low == _MID_LOW
        return _settle(out, tie, a, b, c) if tie.any() else out
    s = np.add(p, c, dtype=np.float64)
    low = np.asarray(s).view(np.uint64) & _LOW29
    tie = low == _MID_LOW
    if tie.any():  # rare: settle the tie with the part of p + c that float64 rounded away
        c = np.asarray(c, dtype=np.float64)
        s = np.array(s, dtype=np.float64, copy=True, ndmin=1)
        p, c, tie = (np.broadcast_to(v, s.shape) for v in (p, c, tie))
        err = two_sum(p, c)[1]       # (its sum is s)
        nudge = tie & (err != 0)
        s[nudge] = np.nextafter(s[nudge], np.where(err[nudge] > 0, np.inf, -np.inf))
        if np.ndim(p) == 0:
            s = s.reshape(())
    return s.astype(np.float32)


def _by_mkl(a, b, c, dtype, emulated):
    """``a·b + c`` (broadcast, all of ``dtype``) by MKL's fused multiply-adds, where one processor
    instruction per element does in one pass what the emulation does in several: a factor of one
    number (:func:`_one_number`) by :func:`gradviz.kernels._mkl.axpy`, else by
    :func:`gradviz.kernels._mkl.fma_into` (a million float32 times a row of sums: 5.3 -> 2.0 ms; of
    one number, log_softmax(0)'s gradient of ones: 0.74 ms), from :data:`_MKL_FROM` elements on; None
    otherwise (smaller arrays, other dtypes, no MKL).  sbmv adds a +0 last, so its zeros are
    worked out again by ``emulated`` (an exact -0 + -0, a negative product too small for the
    dtype: -0 both)."""
    start = _MKL_FROM[dtype]
    if not (type(c) is np.ndarray and c.size >= start or type(a) is np.ndarray and a.size >= start
            or type(b) is np.ndarray and b.size >= start):
        return None
    a, b, c = (np.asarray(v) for v in (a, b, c))
    if not a.dtype == b.dtype == c.dtype == dtype or _mkl.library() is None or not _fuses(dtype, emulated):
        return None
    shape = np.broadcast_shapes(a.shape, b.shape, c.shape)
    out = np.array(np.broadcast_to(c, shape), order="C")     # (a copy: MKL adds into it)
    number = _one_number(a, shape)
    x, y = (b, a) if number is not None else (a, b)
    number = number if number is not None else _one_number(b, shape)
    x = np.ascontiguousarray(np.broadcast_to(x, shape))
    if number is not None and _mkl.axpy(number, x, out):    # (axpy refuses a factor of 0, which BLAS skips:
        return out                                          # ±0 stay arrays; its zeros are the fma's)
    if not _mkl.fma_into(x, np.ascontiguousarray(np.broadcast_to(y, shape)), out):
        return None
    zero = out == 0
    if zero.any():
        flat = np.flatnonzero(zero)
        at = np.unravel_index(flat, shape)
        out[at] = emulated(*(_gather(v, shape, at, flat) for v in (a, b, c)))
    return out


_FUSES = {}     # dtype -> do MKL's sbmv and axpy round once here (checked once: _fuses)


def _fuses(dtype, emulated):
    """Do MKL's ``sbmv`` and ``axpy`` compute each element as one fused multiply-add on this
    processor?  They do on those with FMA (MKL's own code path for AVX2 and AVX-512 kernels), which
    is what PyTorch's kernels use; BLAS promises no such thing, so it is checked once, on products
    whose rounding error ``c = −fl(a·b)`` brings out (fused: the error; unfused: 0), against the
    emulation.  Where they do not, :func:`_by_mkl` leaves every fma to the emulation."""
    key = np.dtype(dtype)
    if key not in _FUSES:
        rng = np.random.default_rng(0)
        a, b = (rng.standard_normal(64).astype(dtype) for _ in range(2))
        c = -(a * b)
        out, scaled = c.copy(), c.copy()
        _FUSES[key] = (_mkl.fma_into(a, b, out) and _mkl.axpy(a[0], b, scaled)
                       and np.array_equal(out, emulated(a, b, c)) and np.array_equal(scaled, emulated(a[0], b, c))
                       and bool(out.any()))
    return _FUSES[key]


def _one_number(v, shape):
    """The one number a factor broadcast to ``shape`` holds: a 0-d one's, or a broadcast one's (smaller,
    or with strides of 0) whose numbers are all equal (``g`` of ones makes the column sums of
    log_softmax(0)'s gradient so); None otherwise.  (Equal numbers have the same bits, but for 0 and
    -0: :func:`_by_mkl` sends no 0 to axpy.)"""
    if v.ndim == 0:
        return v[()]
    if v.shape == shape and 0 not in v.strides or not v.size:    # (a whole array: not looked through)
        return None
    numbers = v[tuple(slice(None, 1) if step == 0 else slice(None) for step in v.strides)]   # each once
    first = numbers.flat[0]
    return first if (numbers == first).all() else None


def _settle(out, tie, a, b, c):
    """``out`` (float32, ``a·b + c`` rounded through float64) with its ties settled as :func:`fma32`
    settles them, worked out at the tie positions only (a few in a million: the arrays whole would
    cost several passes of doubles; sums that float64 holds exactly, which stay, can be many more:
    ``g`` of ones), and written back where one was rounded."""
    flat = np.flatnonzero(tie)      # (one flat scan: nonzero of a 2-D mask is 8x slower)
    at = np.unravel_index(flat, tie.shape)
    p = np.multiply(_gather(a, tie.shape, at, flat), _gather(b, tie.shape, at, flat), dtype=np.float64)
    c = _gather(c, tie.shape, at, flat).astype(np.float64)
    s, err = two_sum(p, c)           # err: what the float64 sum rounded away
    nudge = err != 0
    if nudge.any():
        s = np.nextafter(s[nudge], np.where(err[nudge] > 0, np.inf, -np.inf))
        out[tuple(i[nudge] for i in at)] = s.astype(np.float32)
    return out


def _gather(x, shape, at, flat):
    """``x`` broadcast to ``shape``, at the ties: ``at`` their indices, ``flat`` the same in a C-ordered
    flat array (from which the gather is twice as fast, when ``x`` is laid out so)."""
    if type(x) is np.ndarray and x.shape == shape and x.flags.c_contiguous:
        return x.reshape(-1)[flat]
    return np.broadcast_to(x, shape)[at]


def add(a, b, alpha=1, out=None):
    """a + αb (α = 1 unless ``a.add(b, alpha=...)``); ``out``: an array of the result's shape and
    dtype to write it into (``a`` itself for ``a.add_(b, alpha=...)``, the SGD step)."""
    if alpha == 1:
        return np.add(a, b, out=out)
    dtype = a.dtype
    if dtype == b.dtype and dtype.char in "fd":
        # PyTorch's kernel is one fused multiply-add, b·α + a rounded once: what makes
        # ``param.add_(grad, alpha=-lr)`` (every SGD step) agree to the last bit.  MKL's axpy adds
        # so, in place (a copy of a, unless out is a); else the fused multiply-add in numpy
        alpha = dtype.type(alpha)
        if a.shape == b.shape and a.ndim and _mkl.library() is not None:
            y = a if out is a else np.array(a, order="K") if out is None else None
            if y is not None and _mkl.axpy(alpha, b, y):
                return y
        result = fma(b, alpha, a, dtype)
    else:
        result = np.add(a, np.multiply(b, alpha, dtype=b.dtype))
    if out is None:
        return result
    out[...] = result
    return out
