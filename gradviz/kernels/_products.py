r"""Matrix products (``mm``, ``addmm``, ``mv``, ``dot``, ``bmm``) computed where PyTorch computes them.

PyTorch 2.13's CPU products call the BLAS of the MKL it ships: ``addmm``/``mm`` hand ``sgemm_``/``dgemm_``
the operands with transposes and leading dimensions read from their strides (a row-major result is
computed as its transpose, so ``x @ W.t()`` is ``gemm('T', 'N')``), ``mv`` calls ``gemv`` (but adds
the products in order itself for a vector of stride 0, such as ``sum``'s expanded gradient), ``dot``
calls ``dot``, and ``bmm`` loops itself over small batches (fewer than 400 multiply-adds per matrix)
and calls MKL's batched gemm for larger ones.  The second half of this module repeats that dispatch
step by step and calls the same MKL (:mod:`gradviz.kernels._mkl`), once per layout: what it hands
MKL is remembered (a plan), so a product of lesson size costs little more than the ctypes call
itself.  Every shape and layout, float32 and float64, gives PyTorch's bits -- MKL cuts long sums
into blocks (an inner dimension of 200 is added as 100 + 100) that no emulation could guess.  MKL
runs on PyTorch's threading (GNU OpenMP) with :func:`gradviz.get_num_threads` threads, so large
products split their work as PyTorch's do; where ``libgomp`` is missing, on one thread, which
agrees with ``torch.set_num_threads(1)`` and with small products.

Without MKL, the first half of this module takes over at lesson sizes: the order PyTorch's BLAS
adds float32 products in (measured on AVX2): plain loops, the vectorised kernel (one fused
multiply-add after the other, for outputs of at least 4 rows and 12 columns), the matrix-vector and
dot kernels (several running sums folded in pairs), ``x @ W.t()``'s row kernel (sums cut at 16-byte
boundaries); larger products are numpy's matmul (within rounding, at numpy's speed).

>>> import numpy as np
>>> mm(np.ones((2, 3), np.float32), np.ones((3, 2), np.float32)).tolist()
[[3.0, 3.0], [3.0, 3.0]]
"""

import numpy as np

from . import _mkl
from ._numerics import _LOW29, _MID_LOW, fma32

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
    redone with :func:`fma32`.
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
        acc = fma32(a[:, p:p + 1], b[p:p + 1, :], acc)
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


def _emulated_mm(a, b, bias=None):
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


def _emulated_mv(a, v):
    """``a @ v`` (matrix times vector) for float32, summed as PyTorch's BLAS sums (see :func:`mm`)."""
    a, v = np.asarray(a), np.asarray(v)
    if a.dtype != _f or v.dtype != _f:
        return np.matmul(a, v)
    if a.shape[1] > 4 and not column_major(a):
        return _matrix_vector(a, v)
    return _emulated_mm(a, v[:, None])[:, 0]


def _emulated_dot(a, b):
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


def _emulated_bmm(a, b):
    """A batch of matrix products: small ones (fewer than 400 multiply-adds each) by PyTorch's own
    loop, the products added one after the other; larger ones each as :func:`mm` (BLAS)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != _f or b.dtype != _f or a.ndim != 3 or not len(a):
        return np.matmul(a, b)
    _, m, k = a.shape
    if m * k * b.shape[2] < 400:
        return np.stack([_running_sum(x, y, _f(0)) for x, y in zip(a, b)])
    return np.stack([_emulated_mm(x, y) for x, y in zip(a, b)])


# --- the products PyTorch computes: its dispatch, MKL's BLAS ---------------------------------------
# aten/src/ATen/native/LinearAlgebra.cpp (addmm_impl_cpu_, bmm_out_or_baddbmm_), Blas.cpp (addmv,
# dot), CPUBlas.cpp (gemm: normalize_last_dims, use_blas_gemm) and BlasKernel.cpp (gemv, dot_impl),
# step by step: the same transposes, leading dimensions, alpha and beta reach the same MKL.

_BLAS_TYPES = (np.dtype(_f), np.dtype(_d))
_F32, _F64 = _BLAS_TYPES      # (numpy's own dtype objects: an array of float32 holds this very one)
_EXACT_ORDER_K = 192          # without MKL, the emulated order is followed up to this inner dimension
_EXACT_ORDER_WORK = 1 << 16    # and up to this many multiply-adds (lesson sizes: fast enough there)


def _emulate(dtype, m, k, n):
    """Without MKL, follow PyTorch's order (float32, lesson sizes), or leave it to numpy?"""
    return dtype == _f and k <= _EXACT_ORDER_K and m * k * n <= _EXACT_ORDER_WORK


def _steps(x):
    """A numpy array's strides in elements, as PyTorch counts them."""
    size = x.itemsize
    return tuple([s // size for s in x.strides])


def _blas_ready(*arrays):
    """May these arrays go to MKL as they lie?  float32 or float64 alike, MKL found, strides that
    PyTorch could have (none negative, whole elements)."""
    dtype = arrays[0].dtype
    if dtype not in _BLAS_TYPES or _mkl.library() is None:
        return False
    return all(x.dtype == dtype and (x.flags.c_contiguous or x.flags.f_contiguous
                                     or all(s >= 0 and s % x.itemsize == 0 for s in x.strides)) for x in arrays)


def _as_torch_lays(x):
    """``x`` as PyTorch could hold it: negative strides (numpy's flips) become a contiguous copy."""
    if x.flags.c_contiguous or x.flags.f_contiguous:
        return x
    return np.ascontiguousarray(x) if any(s < 0 or s % x.itemsize for s in x.strides) else x


def _normalize_last_dims(transa, transb, m, n, k, lda, ldb, ldc):
    """PyTorch's ``internal::normalize_last_dims``: the leading dimensions BLAS is given where a
    matrix is a vector (its stride there is never read, but BLAS checks it)."""
    if n == 1:
        ldc = m
    if transa:
        lda = k if m == 1 else lda
    elif k == 1:
        lda = m
    if transb:
        ldb = n if k == 1 else ldb
    elif n == 1:
        ldb = k
    return lda, ldb, ldc


def _gemm(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc):
    """``cpublas::gemm``: the leading dimensions normalised for vectors, then MKL's gemm (True), or
    False where PyTorch would not call BLAS (leading dimensions too small).  (``m``, ``n``, ``k`` are
    at least 1: empty products never get here, so PyTorch's ``max(1, ...)`` are left out.)"""
    if m == 1 or n == 1 or k == 1:        # (a vector: only then is there anything to normalise)
        lda, ldb, ldc = _normalize_last_dims(transa, transb, m, n, k, lda, ldb, ldc)
    if lda < (k if transa else m) or ldb < (n if transb else k) or ldc < m \
            or max(m, n, k, lda, ldb, ldc) > _INT_MAX:                      # use_blas_gemm
        return False
    _mkl.gemm(c.dtype, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
    return True


_INT_MAX = 2 ** 31 - 1


def _lay(s0, s1, rows, cols):
    """How gemm reads a ``rows`` x ``cols`` operand with element strides ``(s0, s1)``: (transposed?,
    leading dimension), or None when it cannot as it lies (``addmm_impl_cpu_``'s checks; the
    sizes are at least 1)."""
    if s0 == 1 and s1 >= rows:
        return False, s1
    if s1 == 1 and s0 >= cols:
        return True, s0
    return None


def _gemm_operands(m1, m2):
    """How ``addmm_impl_cpu_`` hands ``m1 @ m2`` (2-D, neither empty) to gemm: ``(swap, a, b, transa,
    transb, m, n, k, lda, ldb, ldc)``, ``a`` and ``b`` the operands as gemm reads them (``m2`` and
    ``m1`` when ``swap``), each as it lies or a copy by rows where its strides fit no lay; or None
    where PyTorch's gemm would not call BLAS (leading dimensions out of its bounds).

    The result is allocated by rows, as PyTorch allocates it; BLAS writes by columns, so (unless it
    has one column) PyTorch computes its transpose, ``m2ᵀ m1ᵀ``."""
    rows, k = m1.shape
    cols = m2.shape[1]
    size = m1.itemsize
    (p0, p1), (q0, q1) = m1.strides, m2.strides
    if p0 % size or p1 % size:    # not whole elements (no PyTorch tensor lies so): as a copy by rows would
        m1 = np.ascontiguousarray(m1)
        p0, p1 = m1.strides
    if q0 % size or q1 % size:    # (negative strides fit no lay below: those operands are copied there)
        m2 = np.ascontiguousarray(m2)
        q0, q1 = m2.strides
    swap = cols != 1
    if not swap:                  # one column: the result by columns as it is, m1 @ m2
        m, n, a, b, ldc = rows, 1, m1, m2, rows
        lay_a, lay_b = _lay(p0 // size, p1 // size, rows, k), _lay(q0 // size, q1 // size, k, 1)
        if lay_a is None:
            a, lay_a = np.ascontiguousarray(a), (True, k)         # (a row-major copy, read transposed)
        if lay_b is None:
            b, lay_b = np.ascontiguousarray(b), (True, 1)
    else:                         # its transpose: m2ᵀ m1ᵀ
        m, n, a, b, ldc = cols, rows, m2, m1, cols
        lay_a, lay_b = _lay(q1 // size, q0 // size, cols, k), _lay(p1 // size, p0 // size, k, rows)
        if lay_a is None:
            a, lay_a = np.ascontiguousarray(a), (False, cols)     # (a row-major copy's transpose, as it lies)
        if lay_b is None:
            b, lay_b = np.ascontiguousarray(b), (False, k)
    (ta, lda), (tb, ldb) = lay_a, lay_b
    if m == 1 or n == 1 or k == 1:        # cpublas::gemm: a vector's leading dimensions normalised,
        lda, ldb, ldc = _normalize_last_dims(ta, tb, m, n, k, lda, ldb, ldc)
    if lda < (k if ta else m) or ldb < (n if tb else k) or ldc < m \
            or max(m, n, k, lda, ldb, ldc) > _INT_MAX:                    # then use_blas_gemm
        return None
    return swap, a, b, ta, tb, m, n, k, lda, ldb, ldc


# --- planned products: what gemm is handed, worked out once per layout -----------------------------
# A product of lesson size costs less in MKL (well under a microsecond) than in working out its
# call, so that is done once per (shapes, strides, dtypes) of the operands and remembered: the
# plan is the routine, its integer arguments, and the cheapest lender of each operand's address
# (_mkl.lender), and which operands gemm cannot read as they lie and gets copied by rows.  A
# call then allocates the result, asks the lenders and calls MKL: about 2.2 µs for a 2x2 product
# here, where the floor through ctypes is about 1.2 (a ctypes call with 14 arguments 0.5, MKL's
# own 2x2 sgemm 0.15, three addresses 0.1 each, read from numpy's array struct, the result's
# allocation 0.15; numpy's matmul takes 0.65 in all).  Where the addresses are lent as buffers
# instead (:func:`gradviz.kernels._mkl.lender`), a read-only operand read as it lies (its lender
# refuses it) takes the long way.

_PLANS = {}
_MAX_PLANS = 4096     # (a program that multiplies ever new shapes starts over, rather than grow)


def _plan(m1, m2):
    """The plan for ``m1 @ m2`` (arrays of one BLAS dtype, 2-D, neither empty, MKL found): ``(routine,
    scalar type, 1, 0, result shape, swap, transa, transb, m, n, k, lda, ldb, ldc, lender of a,
    lender of b, copy a?, copy b?)``, or None where BLAS is not called.  An operand whose strides
    fit no lay (an expanded gradient's 0s, numpy's flips) is copied by rows at each call."""
    operands = _gemm_operands(m1, m2)
    if operands is None:
        return None
    swap, a, b, ta, tb, m, n, k, lda, ldb, ldc = operands
    copy_a, copy_b = a is not (m2 if swap else m1), b is not (m1 if swap else m2)
    routine, scalar, one, zero = _mkl.routine("gemm", m1.dtype)
    trans = _mkl.TRANS, _mkl.NO_TRANS
    return (routine, scalar, one, zero, (m1.shape[0], m2.shape[1]), swap, trans[not ta], trans[not tb], m, n, k,
            lda, ldb, ldc, _mkl.lender(a), _mkl.lender(b), copy_a, copy_b)


def _planned(bias, m1, m2, beta, alpha):
    """``beta·bias + alpha·(m1 @ m2)`` by the plan for the operands' layout (``m1``, ``m2`` numpy
    arrays, ``bias`` None or of their dtype, MKL found), or None: no plan (see :func:`_plan`), or a
    read-only operand, whose lender refuses it (the long way gets its address another way)."""
    key = (m1.shape, m1.strides, m2.shape, m2.strides, m1.dtype, m2.dtype)
    plan = _PLANS.get(key, _UNSEEN)
    if plan is _UNSEEN:
        plan = _remember(key, _plan(m1, m2) if m1.ndim == 2 and m2.ndim == 2 and m1.dtype in _BLAS_TYPES
                         and m2.dtype is m1.dtype and m1.size and m2.size else None)
    if plan is None:
        return None
    routine, scalar, one, zero, shape, swap, ta, tb, m, n, k, lda, ldb, ldc, lend_a, lend_b, copy_a, copy_b = plan
    result = np.empty(shape, m1.dtype)
    if bias is not None and beta != 0:
        result[...] = bias
    else:
        beta = 0                  # (BLAS then never reads the result's old values: no need to zero it)
    if swap:                      # (m1, m2 now gemm's a and b)
        m1, m2 = m2, m1
    if copy_a:
        m1 = np.ascontiguousarray(m1)
    if copy_b:
        m2 = np.ascontiguousarray(m2)
    try:                          # (beta 0, of either sign, means c is not read: BLAS's rule)
        routine(_COL_MAJOR, ta, tb, m, n, k, one if alpha == 1 else scalar(alpha), lend_a(m1), lda, lend_b(m2), ldb,
                zero if beta == 0 else one if beta == 1 else scalar(beta), _lend_rows(result), ldc)
    except TypeError:             # a read-only operand
        return None
    return result


_UNSEEN = object()
_lend_rows = _mkl.lender(np.empty((1, 1)))      # (the result is allocated by rows)
_COL_MAJOR = _mkl.COL_MAJOR


def _addmm_blas(bias, m1, m2, beta, alpha):
    """``beta·bias + alpha·(m1 @ m2)`` as ``addmm_impl_cpu_`` hands it to MKL, or None where
    PyTorch's gemm would not call BLAS: worked out here (where there is no plan, or a read-only
    operand), each operand read as it lies, transposed or not, or copied by rows where its strides
    fit neither."""
    operands = _gemm_operands(m1, m2)
    if operands is None:
        return None
    _, a, b, ta, tb, m, n, k, lda, ldb, ldc = operands
    result = np.empty((m1.shape[0], m2.shape[1]), m1.dtype)
    if bias is not None and beta != 0:
        result[...] = bias
    else:
        beta = 0
    _mkl.gemm(m1.dtype, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, result, ldc)
    return result


def _to_blas(a, b):
    """Do arrays ``a`` and ``b`` go straight to MKL: both float32 or both float64 (numpy's own
    dtype objects), ``b`` 2-D, neither empty, MKL found?  (Anything else takes the long way.)"""
    dtype = a.dtype
    return (dtype is _F32 or dtype is _F64) and b.dtype is dtype and b.ndim == 2 and a.size and b.size \
        and _mkl.library() is not None


def addmm(c, a, b, beta=1, alpha=1):
    r"""``beta·c + alpha·(a @ b)`` for 2-D ``a``, ``b`` (``nn.Linear``: bias + x Wᵀ), as PyTorch's
    CPU ``addmm`` computes it: by MKL's gemm, with its transposes and leading dimensions.

    Without MKL (or another dtype): float32 products with inner dimension up to 192 in the order
    PyTorch's BLAS adds them (measured on AVX2), else numpy's matmul (within rounding)."""
    if type(a) is np.ndarray and type(b) is np.ndarray and (c is None or type(c) is np.ndarray and c.dtype is a.dtype) \
            and _mkl.library() is not None:
        out = _planned(c, a, b, beta, alpha)         # (the usual case: a plan, then MKL)
        if out is not None:
            return out
    return _addmm(c, a, b, beta, alpha)


def _addmm(c, a, b, beta, alpha):
    """:func:`addmm` the long way: any operands, a plan or none."""
    if type(a) is not np.ndarray or type(b) is not np.ndarray:
        a, b = np.asarray(a), np.asarray(b)
    if c is not None and type(c) is not np.ndarray:
        c = np.asarray(c)
    if _to_blas(a, b) and (c is None or c.dtype is a.dtype):
        out = _addmm_blas(c, a, b, beta, alpha)
        if out is not None:
            return out
        return _fallback_addmm(c, a, b, beta, alpha)
    a, b = _as_torch_lays(a), _as_torch_lays(b)
    rows, k = a.shape
    cols = b.shape[1]
    dtype = a.dtype
    if not rows or not cols or not k:                  # PyTorch's pathological cases: no BLAS call
        dtype = np.result_type(a, b) if c is None else np.result_type(a, b, c)
        if c is None or beta == 0:
            return np.zeros((rows, cols), dtype)
        out = np.array(np.broadcast_to(c, (rows, cols)), dtype)
        return out if beta == 1 else out * dtype.type(beta)
    if (dtype == _f or dtype == _d) and b.dtype == dtype and (c is None or c.dtype == dtype) \
            and b.ndim == 2 and _mkl.library() is not None:
        out = _addmm_blas(c, a, b, beta, alpha)
        if out is not None:
            return out
    return _fallback_addmm(c, a, b, beta, alpha)


def _fallback_addmm(c, a, b, beta, alpha):
    """Without MKL: PyTorch's order where it is known and fast (float32, inner dimension ≤ 192,
    plain beta and alpha), numpy's matmul elsewhere."""
    if a.dtype == b.dtype and _emulate(a.dtype, a.shape[0], a.shape[1], b.shape[1]) and beta == 1 and alpha == 1 \
            and (c is None or c.dtype == a.dtype):
        return _emulated_mm(a, b, c)
    out = np.matmul(a, b)
    if alpha != 1:
        out = out * out.dtype.type(alpha)
    if c is None or beta == 0:
        return out
    return (c if beta == 1 else c * np.asarray(beta, c.dtype)) + out


def mm(a, b):
    """``a @ b`` for 2-D arrays, as PyTorch's CPU ``mm`` computes it (``addmm`` with beta 0)."""
    if type(a) is np.ndarray and type(b) is np.ndarray and _mkl.library() is not None:
        out = _planned(None, a, b, 0, 1)     # (the usual case: a product of lesson size costs
        if out is not None:                  # less in MKL than in working out its call)
            return out
    return _addmm(None, a, b, 0, 1)


def _plan_for(kind, make, a, b):
    """The plan ``make(a, b)`` for product ``kind`` ("mv", "dot", "bmm") of operands laid out as ``a``
    and ``b`` are: made once per layout, then remembered."""
    key = (kind, a.shape, a.strides, b.shape, b.strides, a.dtype, b.dtype)
    plan = _PLANS.get(key, _UNSEEN)
    return _remember(key, make(a, b)) if plan is _UNSEEN else plan


def _remember(key, plan):
    """Keep ``plan`` under ``key`` (and start over when there are too many) and return it."""
    if len(_PLANS) >= _MAX_PLANS:
        _PLANS.clear()
    _PLANS[key] = plan
    return plan


def _lies_as_a_tensor(x):
    """Are ``x``'s strides ones a PyTorch tensor could have (whole elements, none negative)?"""
    size = x.itemsize
    return all(s >= 0 and s % size == 0 for s in x.strides)


def _gemv_operands(a, v):
    """How ``addmv_impl_cpu_`` hands ``a @ v`` to gemv (``a`` 2-D and ``v`` 1-D, neither empty, both
    lying as a tensor could, ``v``'s stride not 0): ``(mat, trans, m, n, lda, incx)``, ``mat``
    ``a`` read by columns ('N') or by rows ('T') as it lies, or its copy by rows."""
    rows, cols = a.shape
    s0, s1 = _steps(a)
    if s0 == 1 and (cols == 1 or s1 >= max(1, rows)):          # lda_cond
        mat, trans, m, n, lda = a, False, rows, cols, s1
    elif s1 == 1 and (rows == 1 or s0 >= max(1, cols)):
        mat, trans, m, n, lda = a, True, cols, rows, s0
    else:
        mat, trans, m, n, lda = np.ascontiguousarray(a), True, cols, rows, cols
    if n == 1:                                                  # cpublas::gemv
        lda = m
    return mat, trans, m, n, lda, _steps(v)[0]


def _mv_plan(a, v):
    """The plan for ``a @ v``: ``(routine, its 1, its 0, rows, trans, m, n, lda, incx, lender of a,
    lender of v)``; :data:`_IN_ORDER` for a vector of stride 0 (PyTorch's own loop); or None where
    the long way is taken (other dtypes or dimensions, empty, a copy)."""
    dtype = a.dtype
    if a.ndim != 2 or v.ndim != 1 or dtype not in _BLAS_TYPES or v.dtype is not dtype or not a.size \
            or a.shape[1] != v.shape[0] or not _lies_as_a_tensor(a) or not _lies_as_a_tensor(v):
        return None
    if not v.strides[0]:
        return _IN_ORDER
    mat, trans, m, n, lda, inc = _gemv_operands(a, v)
    if mat is not a:
        return None
    routine, _, one, zero = _mkl.routine("gemv", dtype)
    return (routine, one, zero, a.shape[0], _mkl.TRANS if trans else _mkl.NO_TRANS, m, n, lda, inc, _mkl.lender(a),
            _mkl.lender(v))


def _in_order_mv(a, v):
    """``a @ v`` for a vector of stride 0 as PyTorch's cpublas::gemv computes it (its fast path, BLAS,
    wants incx > 0): its own loop, by rows ('T') or by columns ('N') alike Σ_j fl(a_ij·v_j) added in
    order from 0 (a zero sum +0)."""
    return np.add.accumulate(a * v, axis=1)[:, -1] + a.dtype.type(0)


_IN_ORDER = "in order"     # (mv's plan for a vector of stride 0)


def mv(a, v):
    """``a @ v`` (matrix times vector) as PyTorch's CPU ``mv`` computes it: MKL's gemv, the matrix
    read by columns ('N') or by rows ('T') as it lies; a vector of stride 0 (an expanded one, as
    ``sum``'s gradient) by PyTorch's own loop, each output the products added in order."""
    if type(a) is np.ndarray and type(v) is np.ndarray and _mkl.library() is not None:
        plan = _plan_for("mv", _mv_plan, a, v)
        if plan is _IN_ORDER:
            return _in_order_mv(a, v)
        if plan is not None:
            routine, one, zero, rows, trans, m, n, lda, inc, lend_a, lend_v = plan
            y = np.empty(rows, a.dtype)
            try:
                routine(_COL_MAJOR, trans, m, n, one, lend_a(a), lda, lend_v(v), inc, zero, _lend_rows(y), 1)
            except TypeError:     # a read-only operand: the long way
                pass
            else:
                return y
    a, v = _as_torch_lays(np.asarray(a)), _as_torch_lays(np.asarray(v))
    rows, cols = a.shape
    if not rows:
        return np.zeros(0, np.result_type(a, v))
    if not cols:
        return np.zeros(rows, np.result_type(a, v))
    if not v.strides[0] and a.dtype in _BLAS_TYPES and v.dtype is a.dtype:
        return _in_order_mv(a, v)
    if not _blas_ready(a, v):
        if a.dtype == v.dtype and _emulate(a.dtype, rows, cols, 1):
            return _emulated_mv(a, v)
        return np.matmul(a, v)
    mat, trans, m, n, lda, inc = _gemv_operands(a, v)
    y = np.empty(rows, a.dtype)
    _mkl.gemv(a.dtype, trans, m, n, 1.0, mat, lda, v, inc, 0.0, y, 1)
    return y


def _dot_plan(a, b):
    """The plan for ``a · b``: ``(routine, n, incx, incy, lender of a, lender of b, scalar type)``,
    or None (another dtype or dimension, empty, a copy: the long way)."""
    dtype = a.dtype
    if a.ndim != 1 or b.shape != a.shape or dtype not in _BLAS_TYPES or b.dtype is not dtype or not a.size \
            or not _lies_as_a_tensor(a) or not _lies_as_a_tensor(b):
        return None
    n = a.shape[0]
    inc_a, inc_b = (1, 1) if n == 1 else (_steps(a)[0], _steps(b)[0])
    return _mkl.routine("dot", dtype)[0], n, inc_a, inc_b, _mkl.lender(a), _mkl.lender(b), dtype.type


def dot(a, b):
    """``a · b`` for vectors as PyTorch's CPU ``dot`` computes it: MKL's dot (an expanded vector too:
    PyTorch hands BLAS its stride 0)."""
    if type(a) is np.ndarray and type(b) is np.ndarray and _mkl.library() is not None:
        plan = _plan_for("dot", _dot_plan, a, b)
        if plan is not None:
            routine, n, inc_a, inc_b, lend_a, lend_b, scalar = plan
            try:
                return scalar(routine(n, lend_a(a), inc_a, lend_b(b), inc_b))
            except TypeError:     # a read-only operand: the long way
                pass
    a, b = _as_torch_lays(np.asarray(a)), _as_torch_lays(np.asarray(b))
    n = a.shape[0]
    if not _blas_ready(a, b) or not n:
        if a.dtype == b.dtype and n and _emulate(a.dtype, 1, n, 1):
            return _emulated_dot(a, b)
        return np.dot(a, b)
    inc_a, inc_b = (1, 1) if n == 1 else (_steps(a)[0], _steps(b)[0])
    return a.dtype.type(_mkl.dot(a.dtype, n, a, inc_a, b, inc_b))


def _items_by_rows_or_columns(t):
    """``batch_items_contiguous_or_transposed``: each matrix of the batch laid by rows or by columns."""
    _, rows, cols = t.shape
    s = _steps(t)
    return (s[2] == 1 and (rows == 1 or s[1] >= cols)) or (s[1] == 1 and (cols == 1 or s[2] >= rows))


def _batch_operands(a, b):
    """How ``bmm_out_or_baddbmm_`` hands a batch of more than one product to MKL's batched gemm (the
    matrices by rows or by columns, 3-D arrays of one BLAS dtype, none empty): ``(transa, transb,
    m, n, k, lda, ldb, ldc)`` for gemm's a = b's and b = a's matrices (it sees everything
    transposed) and a result by rows; or None where use_blas_gemm refuses the leading dimensions."""
    _, rows, k = a.shape
    cols = b.shape[2]
    sa, sb = _steps(a), _steps(b)
    ta = sb[1] == 1 and sb[2] >= b.shape[1]
    tb = sa[1] == 1 and sa[2] >= a.shape[1]
    m, n = cols, rows
    lda, ldb, ldc = _normalize_last_dims(ta, tb, m, n, k, sb[2 if ta else 1], sa[2 if tb else 1], cols)
    if not (lda >= max(1, k if ta else m) and ldb >= max(1, n if tb else k) and ldc >= max(1, m)):
        return None
    return ta, tb, m, n, k, lda, ldb, ldc


def _bmm_plan(a, b):
    """The plan for ``bmm(a, b)`` where it goes to MKL's batched gemm: (result shape, the prepared
    call, :func:`gradviz.kernels._mkl.batch_caller`), or None (anything else takes the long way)."""
    dtype = a.dtype
    if a.ndim != 3 or b.ndim != 3 or dtype not in _BLAS_TYPES or b.dtype is not dtype or a.shape[0] != b.shape[0] \
            or a.shape[2] != b.shape[1] or not _lies_as_a_tensor(a) or not _lies_as_a_tensor(b):
        return None
    count, rows, k = a.shape
    cols = b.shape[2]
    if count < 2 or not rows * cols * k or k * rows * cols < 400 \
            or not (_items_by_rows_or_columns(a) and _items_by_rows_or_columns(b)):
        return None
    operands = _batch_operands(a, b)
    if operands is None:
        return None
    ta, tb, m, n, k, lda, ldb, ldc = operands
    return (count, rows, cols), _mkl.batch_caller(dtype, ta, tb, count, m, n, k, 1.0, lda, b.strides[0], ldb,
                                                  a.strides[0], 0.0, ldc, rows * cols * dtype.itemsize)


def bmm(a, b):
    """A batch of matrix products as PyTorch's CPU ``bmm`` computes it: small ones (fewer than 400
    multiply-adds each) by its own loop, the products added one after the other; larger ones by
    MKL's batched gemm (or one gemm per matrix, for other layouts)."""
    if type(a) is np.ndarray and type(b) is np.ndarray and _mkl.library() is not None:
        plan = _plan_for("bmm", _bmm_plan, a, b)
        if plan is not None:
            shape, run = plan
            result = np.empty(shape, a.dtype)        # (beta 0: MKL does not read it)
            run(b, a, result)
            return result
    a, b = _as_torch_lays(np.asarray(a)), _as_torch_lays(np.asarray(b))
    count, rows, k = a.shape
    cols = b.shape[2]
    dtype = np.result_type(a, b)
    if not count * rows * cols:
        return np.zeros((count, rows, cols), dtype)
    if not k:
        return np.zeros((count, rows, cols), dtype)
    if k * rows * cols < 400:      # baddbmm_cpu_kernel: each product rounded, added from 0 in order
        if dtype in _BLAS_TYPES and a.dtype == b.dtype:
            products = a[:, :, :, None] * b[:, None, :, :]                  # (count, rows, k, cols)
            return np.add.accumulate(products, axis=2)[:, :, -1, :] + dtype.type(0)
        return np.matmul(a, b)
    if not _blas_ready(a, b):
        if a.dtype == b.dtype and _emulate(dtype, count * rows, k, cols):
            return _emulated_bmm(a, b)
        return np.matmul(a, b)
    if not (_items_by_rows_or_columns(a) and _items_by_rows_or_columns(b)):
        return np.stack([mm(x, y) for x, y in zip(a, b)])
    result = np.zeros((count, rows, cols), dtype)
    if count == 1:
        sa, sb = _steps(a), _steps(b)
        ta = sb[1] == 1 and sb[2] >= b.shape[1]     # gemm sees everything transposed:
        tb = sa[1] == 1 and sa[2] >= a.shape[1]                    # b first, then a
        if not _gemm(ta, tb, cols, rows, k, 1.0, b, sb[2 if ta else 1], a, sa[2 if tb else 1], 0.0, result, cols):
            return np.stack([mm(x, y) for x, y in zip(a, b)])
        return result
    operands = _batch_operands(a, b)                # then use_blas_gemm
    if operands is None:
        return np.stack([mm(x, y) for x, y in zip(a, b)])
    ta, tb, m, n, k, lda, ldb, ldc = operands
    _mkl.gemm_batch(dtype, ta, tb, count, m, n, k, 1.0, b, lda, b.strides[0], a, ldb, a.strides[0], 0.0,
                    result, ldc, result.strides[0])
    return result
