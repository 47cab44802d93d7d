r"""Matrix products (``mm``, ``addmm``, ``mv``, ``dot``, ``bmm``) in the order PyTorch's CPU BLAS adds them up.

Float32 matrix products in the order PyTorch's CPU BLAS adds the products up, which depends on the
shapes and layouts: plain loops (one product after the other), the vectorised kernel (one fused
multiply-add after the other, for outputs of at least 4 rows and 12 columns), the matrix-vector and
dot kernels (several running sums folded in pairs), and ``x @ W.t()``'s row kernel (sums cut at
16-byte boundaries); ``addmm``'s bias first or last as the loops do.  The shape classes measured,
and the few still open, are listed in ``tests/test_vecmath.py``.  float64 products and other dtypes
are left to numpy.
"""

import numpy as np

from ._numerics import _LOW29, _MID_LOW, fma32 as fma

__all__ = ["mm", "addmm", "mv", "dot", "bmm", "column_major"]

_f = np.float32
_d = np.float64

# --- matrix products ---------------------------------------------------------------------------

def _fma_chain(a, b):
    """Σ_p a[:, p]·b[p, :] from 0, one fused multiply-add per step (each rounded to float32).

    Each step is one numpy call: the exact product (float64) plus the running float32 sum, added
    in float64 and written out rounded to float32.  Rounding twice (float64, then float32) could
    differ from one rounding only where the float64 sum lands on a float32 tie; all the float64
    sums are recomputed at the end and checked for that, and the rare product with such a tie is
    redone with :func:`fma`.
    """
    k = a.shape[1]
    products = np.multiply(a.T[:, :, None], b[:, None, :], dtype=_d)    # (k, m, n), exact
    accs = np.zeros((k + 1,) + products.shape[1:], _f)
    for p in range(k):
        np.add(products[p], accs[p], out=accs[p + 1], casting="unsafe")
    low = (products + accs[:-1]).view(np.uint64)
    np.bitwise_and(low, _LOW29, out=low)
    if not (low == _MID_LOW).any():
        return accs[-1]
    acc = accs[0]
    for p in range(k):
        acc = fma(a[:, p:p + 1], b[p:p + 1, :], acc)
    return acc


def _running_sum(a, b, start):
    """``start`` + a[:, 0]·b[0, :] + a[:, 1]·b[1, :] + ..., each product and each sum rounded."""
    k = a.shape[1]
    if k == 0:
        return np.array(np.broadcast_to(start, (a.shape[0], b.shape[1])), _f)
    if np.ndim(start) == 0:   # from 0: the same sums, and the sign of a zero result made +0
        return np.add.accumulate(a[:, :, None] * b[None, :, :], axis=1)[:, -1] + start
    out = a[:, :1] * b[:1]
    out += start
    for p in range(1, k):
        out += a[:, p:p + 1] * b[p:p + 1]
    return out


def _sequential(products, start=None):
    """``products`` (..., k) added left to right along the last axis, after ``start`` if given."""
    if start is not None:
        products = np.concatenate((np.asarray(start, _f)[..., None], products), axis=-1)
    if not products.shape[-1]:
        return np.zeros(products.shape[:-1], _f)
    return np.add.accumulate(products, axis=-1)[..., -1]


def _lanes(q, start, stride, blocks, peel):
    """Running sums of ``q`` (..., k) over ``blocks`` blocks of ``stride`` from ``start``, one per
    lane; the ``peel`` products before ``start`` join lane 0 first."""
    end = start + stride * blocks
    lanes = np.add.accumulate(q[..., start:end].reshape(q.shape[:-1] + (blocks, stride)), axis=-2)[..., -1, :]
    if peel:
        lanes[..., 0] = _sequential(q[..., start:end:stride], _sequential(q[..., :peel]))
    return lanes


def _four_accumulators(products):
    r"""Each row's sum as the column kernel for 4 or more rows adds it: the first r = k mod 4
    (or 4) products in order, then four running sums :math:`s_j` over the rest (element r + j,
    r + j + 4, ..., the first r joining :math:`s_0`), then :math:`(s_0 + s_2) + (s_1 + s_3)`."""
    k = products.shape[1]
    if k <= 4:
        return _sequential(products) + _f(0)
    r = k % 4 or 4
    s = _lanes(products, r, 4, (k - r) // 4, r)
    return (s[:, 0] + s[:, 2]) + (s[:, 1] + s[:, 3]) + _f(0)   # the sums start at 0: no −0


def _eight_accumulators(products):
    r"""Each row's sum as the column kernel for the 1 to 3 rows left after the fours adds it: the
    first 4 products in order, then blocks of 8 into eight running sums :math:`s_j` (the first
    four joining :math:`s_0`), folded as :math:`((s_0 + s_4) + (s_2 + s_6)) + ((s_1 + s_5) +
    (s_3 + s_7))`; the second of those rows takes the same blocks into four running sums instead,
    folded as :math:`(s_0 + s_2) + (s_1 + s_3)`; then the leftover products in order."""
    k = products.shape[1]
    blocks = (k - 4) // 8 if k >= 12 else 0
    if not blocks:
        return _sequential(products) + _f(0)
    end = 4 + 8 * blocks
    s = _lanes(products, 4, 8, blocks, 4)
    total = ((s[:, 0] + s[:, 4]) + (s[:, 2] + s[:, 6])) + ((s[:, 1] + s[:, 5]) + (s[:, 3] + s[:, 7]))
    if len(products) > 1:
        q = _lanes(products[1:2], 4, 4, 2 * blocks, 4)
        total[1] = ((q[:, 0] + q[:, 2]) + (q[:, 1] + q[:, 3]))[0]
    return _sequential(products[:, end:], total) + _f(0)

def _aligned_dots(products, peel, unit):
    r"""Dot products (..., k) as the row-by-row BLAS kernel adds them: the ``peel`` products that
    bring the row to a 16-byte boundary in order, then 4 (``unit`` 4, or 8 when 8 to 15 remain)
    or 8 (16 or more remain with ``unit`` 8) running sums over whole blocks, folded in pairs
    (:math:`(s_0 + s_2) + (s_1 + s_3)`, or the 8-sum fold of :func:`_eight_accumulators`), then
    the leftover products in order."""
    k = products.shape[-1]
    rest = k - peel
    if unit == 8 and rest >= 16:
        blocks = rest // 8
        s = _lanes(products, peel, 8, blocks, peel)
        total = ((s[..., 0] + s[..., 4]) + (s[..., 2] + s[..., 6])) + \
                ((s[..., 1] + s[..., 5]) + (s[..., 3] + s[..., 7]))
        end = peel + 8 * blocks
    else:
        groups = rest // 4 if unit == 4 else rest // 8 * 2
        if not groups:
            return _sequential(products) + _f(0)
        s = _lanes(products, peel, 4, groups, peel)
        total = (s[..., 0] + s[..., 2]) + (s[..., 1] + s[..., 3])
        end = peel + 4 * groups
    return _sequential(products[..., end:], total) + _f(0)


def _rows_times_columns(a, b):
    """``a @ b`` for row-major ``a`` and column-major ``b`` (``x @ W.t()``), few columns: each output
    a dot product of two contiguous rows, cut where row i of ``a`` (at offset i·k of an aligned
    tensor) meets a 16-byte boundary; columns in fours by one kernel, the rest by another.  One
    row goes to the matrix-vector kernels instead."""
    m, k = a.shape
    n = b.shape[1]
    products = a[:, None, :] * b.T[None, :, :]              # (m, n, k), rounded
    out = np.empty((m, n), _f)
    fours = n // 4 * 4
    if m == 1:   # one row: the matrix-vector kernel, columns in fours, then the rest
        out[0, :fours] = _four_accumulators(products[0, :fours])
        out[0, fours:] = _eight_accumulators(products[0, fours:])
        return out
    peels = (-np.arange(m) * k) % 4
    for peel in range(4):
        rows = np.nonzero(peels == peel)[0]
        if len(rows):
            if fours:
                out[rows, :fours] = _aligned_dots(products[rows, :fours], peel, 4)
            if fours < n:
                out[rows, fours:] = _aligned_dots(products[rows, fours:], peel, 8)
    return out


def _matrix_vector(a, v):
    """``a @ v`` for a matrix laid out by rows: rounded products, summed per row by the kernels
    PyTorch's BLAS runs for a one-column product: rows in fours by one, the rest by another."""
    products = a * v[None, :]
    fours = len(a) // 4 * 4
    return np.concatenate((_four_accumulators(products[:fours]), _eight_accumulators(products[fours:])))


def mm(a, b, bias=None):
    r"""``a @ b (+ bias)`` for 2-D float32 arrays, in the order PyTorch's CPU gemm rounds.

    :math:`c_{ij} = \sum_p a_{ip} b_{pj}`, accumulated from 0 along p, one element after the other:

    * an output of at least 4 rows and 12 columns goes to the vectorised kernel: each step is a
      fused multiply-add :math:`c ← \mathrm{fl}(a_{ip} b_{pj} + c)`;
    * a smaller output is added up by plain loops: :math:`c ← \mathrm{fl}(c + \mathrm{fl}(a_{ip} b_{pj}))`,
      starting from the bias or from 0 (then the bias is added last), as the operands' layouts select.

    Other dtypes and shapes: numpy.
    """
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != _f or b.dtype != _f or a.ndim != 2 or b.ndim != 2:
        out = np.matmul(a, b)
        return out if bias is None else out + bias
    m, k = a.shape
    n = b.shape[1]
    if k == 1 and (m > 1 or n == 1):   # no sum: the signs of zero products are what differs
        out = a * b                        # (an outer product keeps them; one column adds to 0)
        if n == 1:
            if bias is not None:
                return np.asarray(bias, _f) + out
            out = out + _f(0)
    elif n == 1 and k > 4 and not column_major(a) and (m > 1 or column_major(b)):
        out = _matrix_vector(a, b[:, 0])[:, None]
    elif m >= 4 and n >= 12 and k:
        out = _fma_chain(a, b)
    elif k >= 4 and n > 1 and column_major(b) and not column_major(a):
        out = _rows_times_columns(a, b)
    else:
        first = bias is not None and _bias_first(a, b)
        start = np.broadcast_to(np.asarray(bias, _f), (n,)) if first else _f(0)
        out = _running_sum(a, b, start)
        if n % 4 and n > 4 and not column_major(b):
            _peeled_columns(out, a, b, start)
        if first:
            return out
    return out if bias is None else out + np.asarray(bias, _f)


def _peeled_columns(out, a, b, start):
    r"""Redo, in place, the outputs the plain loops reach before a 16-byte boundary of the output
    row (row i of an n-column result starts at offset i·n): when a vector of 4 still follows in
    that row, those first outputs add the products 8 at a time, the first four one by one into
    the sum and the next four summed apart and then added; leftovers one by one."""
    m, k = a.shape
    n = b.shape[1]
    rows, cols = [], []
    for i in range(m):
        peel = (-i * n) % 4
        if peel and n - peel >= 4:
            rows += [i] * peel
            cols += range(peel)
    if not rows:
        return
    rows, cols = np.array(rows), np.array(cols)
    products = a[rows, :] * b[:, cols].T                   # (outputs, k), rounded
    acc = np.array(np.broadcast_to(start, (n,))[cols] if np.ndim(start) else
                   np.full(len(rows), start), _f)
    full = k // 8 * 8
    for c in range(0, full, 8):
        acc = _sequential(products[:, c:c + 4], acc)
        acc = acc + _sequential(products[:, c + 4:c + 8])
    out[rows, cols] = _sequential(products[:, full:], acc)


def _bias_first(a, b):
    """Does the plain-loop gemm start from the bias (``c = beta·c`` then ``c += ...``) or add it to
    the finished sum?  It depends on which loop the operands' layouts select (measured)."""
    by_rows_a, by_rows_b = not column_major(a), not column_major(b)
    if by_rows_a:
        return by_rows_b and b.shape[1] > 1
    return by_rows_b or b.shape[1] == 1


def column_major(x):
    """A 2-D array laid out by columns (a transposed view, such as ``W.t()`` in ``nn.Linear``).
    A value the engine did not save (no ``strides``) counts as laid out by rows."""
    strides = getattr(x, "strides", None)
    return strides is not None and len(strides) == 2 and strides[0] < strides[1]


def addmm(c, a, b):
    """``c + a @ b`` (``nn.Linear``: bias + x Wᵀ), the bias added where PyTorch's gemm adds it."""
    return mm(a, b, c)


def mv(a, v):
    """``a @ v`` (matrix times vector) for float32, summed as PyTorch's BLAS sums (see :func:`mm`)."""
    a, v = np.asarray(a), np.asarray(v)
    if a.dtype != _f or v.dtype != _f:
        return np.matmul(a, v)
    if a.shape[1] > 4 and not column_major(a):
        return _matrix_vector(a, v)
    return mm(a, v[:, None])[:, 0]


def dot(a, b):
    r"""``a · b`` for float32 vectors, as the vectorised dot kernel adds the rounded products up.

    Fewer than 4: in order.  Otherwise 16 running sums :math:`l_j` (lane j gets products j,
    j + 16, ...); the leftover is taken 8 then 4 at a time into the first lanes, then one by one
    into lane 0; the lanes fold as :math:`L_r = ((l_r + l_{r+4}) + l_{r+8}) + l_{r+12}`, then
    :math:`(L_0 + L_2) + (L_1 + L_3)`.
    """
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != _f or b.dtype != _f:
        return np.dot(a, b)
    p = a * b
    k = len(p)
    if k < 4:
        return _sequential(p[None, :])[0] + _f(0)   # sums start at 0: never −0
    lanes = np.zeros(16, _f)
    full = k // 16 * 16
    if full:
        lanes = np.add.accumulate(p[:full].reshape(-1, 16), axis=0)[-1]
    i = full
    for width in (8, 4):
        if k - i >= width:
            lanes[:width] += p[i:i + width]
            i += width
    lanes[0] = _sequential(p[None, i:], lanes[:1])[0]
    quarters = np.add.accumulate(lanes.reshape(4, 4), axis=0)[-1]
    return (quarters[0] + quarters[2]) + (quarters[1] + quarters[3]) + _f(0)


def bmm(a, b):
    """A batch of matrix products: small ones (fewer than 400 multiply-adds each) by PyTorch's own
    loop, the products added one after the other; larger ones each as :func:`mm` (BLAS)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != _f or b.dtype != _f or a.ndim != 3 or not len(a):
        return np.matmul(a, b)
    _, m, k = a.shape
    if m * k * b.shape[2] < 400:
        return np.stack([_running_sum(x, y, _f(0)) for x, y in zip(a, b)])
    return np.stack([mm(x, y) for x, y in zip(a, b)])
