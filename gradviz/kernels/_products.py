r"""Arithmetic rounded step by step as PyTorch's CPU kernels round it, so results agree to the bit.

Floating-point results depend on the order of the roundings, not only on the formula.  This module
repeats, on whole numpy arrays (no loop over elements), the steps PyTorch 2.13's CPU kernels take
on an x86-64 machine with AVX-512 or AVX2 (the vector width, :data:`LANES` floats or LANES/2
doubles, is the machine's), so gradviz prints PyTorch's digits:

* ``fma`` -- ``a·b + c`` with one rounding, as the processor's fused multiply-add (``_numerics``);
* :func:`sigmoid` -- ``1 / (1 + e^{-x})``, float32 and float64: SLEEF's vectorised exp
  (:mod:`gradviz._sleef`) on pairs of whole vectors, the C library's on the leftovers (:mod:`gradviz._libm`);
* :func:`softmax`, :func:`log_softmax` and their backward passes, float32 and float64 -- SLEEF's exp
  and log, the vector-lane sums and the fused steps of PyTorch's kernels, along the last dimension
  or (another kernel) across the inner dimensions;
* :func:`mm` (``addmm``, :func:`mv`, :func:`dot`, :func:`bmm`) -- float32 matrix products in the order
  PyTorch's CPU BLAS adds the products up, which depends on the shapes and layouts: plain loops
  (one product after the other), the vectorised kernel (one fused multiply-add after the other,
  for outputs of at least 4 rows and 12 columns), the matrix-vector and dot kernels (several
  running sums folded in pairs), and ``x @ W.t()``'s row kernel (sums cut at 16-byte boundaries);
  ``addmm``'s bias first or last as the loops do.  The shape classes measured, and the few still
  open, are listed in ``tests/test_vecmath.py``;
* not here: ``exp``, ``log``, ``sin``, ``cos``, ``tanh``, ``sqrt``... of a tensor.  PyTorch runs these
  through Intel MKL's vector maths library (``vmsExp``... with ``VML_HA``, for any tensor layout and
  CPU capability), whose algorithms are not public: :mod:`gradviz._mkl` calls the same library.

float64 matrix products and other dtypes are left to numpy.  Where PyTorch's kernels cut the work by
thread (softmax across the inner dimensions, float32 softmax's gradient, sigmoid over 32,768
elements), the last bits depend on the thread count: gradviz takes PyTorch's default (one per
physical core) until :func:`set_num_threads`, as ``torch.set_num_threads``.  This module sits in
the bottom layer and imports only ``_numerics``, ``_sleef`` and ``_libm``.
"""

import glob
import math
import os

import numpy as np

from . import _libm, _sleef
from ._numerics import _LOW29, _MID_LOW, fma32 as fma, fma64

__all__ = ["get_num_threads", "set_num_threads", "fma", "sigmoid", "softmax", "log_softmax",
           "softmax_backward", "log_softmax_backward",
           "mm", "mv", "dot", "bmm"]

_f = np.float32
_d = np.float64


def _vector_floats():
    """How many float32 lanes a vector of PyTorch's CPU kernels holds on this machine: 16 where ATen
    runs its AVX-512 build (the CPU has AVX512F, VL, BW and DQ), else 8 (its AVX2 build).  The sums
    of softmax and the cut of sigmoid's vector loop depend on it; ``ATEN_CPU_CAPABILITY`` overrides
    the choice, in PyTorch and here."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as has
    except ImportError:   # numpy 1.x
        from numpy.core._multiarray_umath import __cpu_features__ as has
    wanted = os.environ.get("ATEN_CPU_CAPABILITY", "").lower()
    avx512 = all(has.get(f, False) for f in ("AVX512F", "AVX512VL", "AVX512BW", "AVX512DQ"))
    return 16 if avx512 and wanted in ("", "avx512") else 8


LANES = _vector_floats()
_FOLDS = tuple(2 ** k for k in reversed(range(LANES.bit_length() - 1)))   # 16 lanes: ⊕8, ⊕4, ⊕2, ⊕1
_EXACT = (np.dtype(_f), np.dtype(_d))   # the dtypes whose kernels are followed step by step


def _default_threads():
    """PyTorch's default thread count for its CPU kernels: ``MKL_NUM_THREADS`` or ``OMP_NUM_THREADS``
    when set, else the machine's physical cores (hyper-threads and the process's CPU limits are not
    counted, as PyTorch's cpuinfo does not count them), else its CPUs."""
    for name in ("MKL_NUM_THREADS", "OMP_NUM_THREADS"):
        value = os.environ.get(name, "")
        if value.isdigit() and int(value) > 0:
            return int(value)
    cpus = os.cpu_count() or 1
    cores = set()
    for topology in glob.glob("/sys/devices/system/cpu/cpu[0-9]*/topology"):
        try:
            with open(f"{topology}/physical_package_id") as package, open(f"{topology}/core_id") as core:
                cores.add((package.read().strip(), core.read().strip()))
        except OSError:
            continue
    return len(cores) if 0 < len(cores) < cpus else cpus


_threads = []   # the count in use, once asked for or set (reading the CPU topology waits till then)


def get_num_threads():
    """How many threads gradviz takes PyTorch's CPU kernels to share work between, as
    ``torch.get_num_threads()`` (PyTorch's default, until :func:`set_num_threads`)."""
    if not _threads:
        _threads.append(_default_threads())
    return _threads[0]


def set_num_threads(n):
    """Take ``n`` threads from now on, as ``torch.set_num_threads(n)`` does: where PyTorch's kernels
    cut the work by thread (softmax across an inner dimension, softmax's gradient, BatchNorm's batch
    sums), the last bits of their results depend on it, and gradviz's follow."""
    if type(n) is not int:   # noqa: E721 -- bool and floats are refused too, as in PyTorch
        raise RuntimeError(f"set_num_threads expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _threads[:] = [n]


_GRAIN = 32768   # at::internal::GRAIN_SIZE: elementwise kernels split only longer tensors between threads


def _shares(total, grain=0):
    """The ranges ``parallel_for(0, total, grain, ...)`` gives the threads: as many chunks of equal
    length (the last shorter) as threads, fewer if ``grain`` asks for more items per thread, one
    range when there is nothing to share.  Returns each index's range start and end."""
    threads = get_num_threads()
    if grain:
        threads = min(threads, -(-total // grain))
    size = -(-total // threads) if total > max(grain, 1) and threads > 1 else max(total, 1)
    start = np.arange(total) // size * size
    return start, np.minimum(total, start + size)


def _vector(dtype):
    """How many numbers of ``dtype`` one vector of PyTorch's kernels holds: LANES floats, half as
    many doubles."""
    return LANES if dtype == _f else LANES // 2


def _fma(a, b, c):
    """``a·b + c`` rounded once in the dtype of ``a`` (float32 or float64)."""
    return fma(a, b, c) if a.dtype == _f else fma64(a, b, c)


def sigmoid(a):
    r"""σ(x) = 1 / (1 + e^{−x}), rounded after each of the three steps as PyTorch's kernel does.

    The kernel runs pairs of whole vectors (2 × :data:`LANES` floats, or 2 × LANES/2 doubles)
    through SLEEF's exp and finishes the elements left over with the C library's ``expf``/``exp``;
    both are repeated here, by position in the flattened (C-ordered) tensor, in each thread's range
    when more than 32,768 elements are shared between threads.
    """
    a = np.asarray(a)
    if a.dtype not in _EXACT:
        with np.errstate(all="ignore"):
            return 1 / (1 + np.exp(-a))
    flat = a.reshape(-1)
    step = 2 * _vector(a.dtype)
    zero, one = a.dtype.type(0), a.dtype.type(1)
    if flat.size <= _GRAIN or get_num_threads() == 1:
        cut = flat.size - flat.size % step
        e = np.concatenate((_sleef.exp(zero - flat[:cut]), _libm.exp(-flat[cut:])))
    else:   # each thread's range cut the same way
        start, end = _shares(flat.size, _GRAIN)
        vec = np.arange(flat.size) - start < (end - start) // step * step
        e = np.empty_like(flat)
        e[vec], e[~vec] = _sleef.exp(zero - flat[vec]), _libm.exp(-flat[~vec])
    with np.errstate(all="ignore"):
        return (one / (one + e)).reshape(a.shape)


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
    elif n == 1 and k > 4 and not _column_major(a) and (m > 1 or _column_major(b)):
        out = _matrix_vector(a, b[:, 0])[:, None]
    elif m >= 4 and n >= 12 and k:
        out = _fma_chain(a, b)
    elif k >= 4 and n > 1 and _column_major(b) and not _column_major(a):
        out = _rows_times_columns(a, b)
    else:
        first = bias is not None and _bias_first(a, b)
        start = np.broadcast_to(np.asarray(bias, _f), (n,)) if first else _f(0)
        out = _running_sum(a, b, start)
        if n % 4 and n > 4 and not _column_major(b):
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
    by_rows_a, by_rows_b = not _column_major(a), not _column_major(b)
    if by_rows_a:
        return by_rows_b and b.shape[1] > 1
    return by_rows_b or b.shape[1] == 1


def _column_major(x):
    """A 2-D array laid out by columns (a transposed view, such as ``W.t()`` in ``nn.Linear``).
    A value the engine did not save (no ``strides``) counts as laid out by rows."""
    strides = getattr(x, "strides", None)
    return strides is not None and len(strides) == 2 and strides[0] < strides[1]


def mv(a, v):
    """``a @ v`` (matrix times vector) for float32, summed as PyTorch's BLAS sums (see :func:`mm`)."""
    a, v = np.asarray(a), np.asarray(v)
    if a.dtype != _f or v.dtype != _f:
        return np.matmul(a, v)
    if a.shape[1] > 4 and not _column_major(a):
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


# --- softmax and log_softmax -------------------------------------------------------------------

def _lanes_sum(x):
    r"""Sum each row of ``x`` (rows, n) as ATen's ``vec::reduce_all`` does, a vector
    (:func:`_vector`: 16 or 8 floats, 8 or 4 doubles) at a time.

    Rows shorter than a vector are added left to right.  Longer rows: lane i adds elements i, i+L,
    i+2L... (the leftover part vector only into its own lanes), then the lanes are added up
    (:func:`_fold`).
    """
    rows, n = x.shape
    lanes = _vector(x.dtype)
    if n < lanes:
        return np.add.accumulate(x, axis=1)[:, -1] if n else np.zeros(rows, x.dtype)
    full = n // lanes * lanes
    acc = np.add.accumulate(x[:, :full].reshape(rows, -1, lanes), axis=1)[:, -1]
    if full < n:
        acc[:, :n - full] += x[:, full:]
    return _fold(acc)


def _fold(acc):
    """The lanes of each row of ``acc`` added up as ``vec::reduce_all`` does: floats in halves
    (:math:`v_i ← v_i + v_{i⊕L/2}`, ..., then ⊕1, by shuffles), doubles one after the other
    (ATen has no shuffle version for them)."""
    if acc.dtype != _f:
        return np.add.accumulate(acc, axis=1)[:, -1]
    for step in _FOLDS:
        acc = acc + acc[:, np.arange(LANES) ^ step]
    return acc[:, 0]


def _across(shape, dim):
    """Is ``dim`` not the last dimension (PyTorch's other kernel, even when only dimensions of one
    element follow)?"""
    return dim != len(shape) - 1


def _by_rows(f, dim, *arrays):
    """Apply ``f`` to 2-D rows along ``dim`` (moved last) of same-shaped arrays; axes put back."""
    moved = [np.moveaxis(a, dim, -1) for a in arrays]
    shape = moved[0].shape
    out = f(*(np.ascontiguousarray(a).reshape(-1, shape[-1]) for a in moved))
    return np.moveaxis(out.reshape(shape), -1, dim)


def _exp_columns(x, dim, split=False):
    """e^x as the kernels along a dimension that is not the last compute it: they run across the
    inner dimensions (the columns), SLEEF's exp on whole vectors of columns and the C library's
    on the columns left over.  ``split``: softmax's kernel, whose threads each take a range of
    (outer, column) positions, and run vectors only inside their range (:func:`_vectorised`)."""
    inner = math.prod(x.shape[dim + 1:])
    flat = x.reshape(-1, x.shape[dim], inner)
    if split:
        vec = _vectorised(flat.shape[0], inner, _vector(x.dtype))[:, None, :]
    else:
        vec = np.arange(inner) < inner - inner % _vector(x.dtype)
    e = np.empty_like(flat)
    vec = np.broadcast_to(vec, flat.shape)
    e[vec], e[~vec] = _sleef.exp(flat[vec]), _libm.exp(flat[~vec])
    return e.reshape(x.shape)


def _vectorised(outer, inner, step):
    """(outer, inner) booleans: which positions softmax's kernel across the inner dimensions runs in
    vectors.  Each thread walks its range of the outer × inner positions, a vector at a time while
    one fits both in the row and in its range, then one by one to the end of the row (or range)."""
    p = np.arange(outer * inner)
    start, end = _shares(outer * inner)
    row = p // inner * inner
    first = np.maximum(row, start)
    return ((p - first) < (np.minimum(row + inner, end) - first) // step * step).reshape(outer, inner)


def _down(x, dim):
    """Σ along ``dim`` from its first element down, one rounding per addition (kept as a dim of 1),
    as the kernels across the inner dimensions add."""
    return np.add.accumulate(x, axis=dim).take([-1], axis=dim)


def _fma_down(g, y, dim):
    """Σ_j g_j·y_j along ``dim`` from 0, one fused multiply-add per step (kept as a dim of 1)."""
    g, y = np.moveaxis(g, dim, 0), np.moveaxis(y, dim, 0)
    acc = np.zeros(g.shape[1:], g.dtype)
    for gj, yj in zip(g, y):
        acc = _fma(gj, yj, acc)
    return np.expand_dims(acc, dim)


def softmax(a, dim):
    r"""softmax(x)_i = e^{x_i − max} · (1 / Σ_j e^{x_j − max}): PyTorch's kernel, with
    SLEEF's exp, the vector-lane sum and one reciprocal multiplied in.

    Along a dimension that is not the last, PyTorch vectorises across the inner dimensions instead
    (:func:`_exp_columns`, cut by thread), sums down ``dim`` and divides each value by the sum.
    """
    a = np.asarray(a)
    if a.dtype not in _EXACT:
        e = np.exp(a - np.max(a, axis=dim, keepdims=True))
        return e / np.sum(e, axis=dim, keepdims=True)
    dim %= a.ndim
    if _across(a.shape, dim):
        with np.errstate(all="ignore"):
            e = _exp_columns(a - a.max(axis=dim, keepdims=True), dim, split=True)
            return e / _down(e, dim)

    def rows(x):
        e = _sleef.exp(x - x.max(axis=1, keepdims=True))
        return e * (x.dtype.type(1) / _lanes_sum(e))[:, None]
    return _by_rows(rows, dim, a)


def log_softmax(a, dim):
    r"""log softmax(x)_i = (x_i − max) − ln Σ_j e^{x_j − max}: two subtractions, SLEEF's exp and log
    (the sum by vector lanes, or down ``dim`` when that is not the last, as :func:`softmax`)."""
    a = np.asarray(a)
    if a.dtype not in _EXACT:
        shifted = a - np.max(a, axis=dim, keepdims=True)
        return shifted - np.log(np.sum(np.exp(shifted), axis=dim, keepdims=True))
    dim %= a.ndim
    if _across(a.shape, dim):
        with np.errstate(all="ignore"):
            shifted = a - a.max(axis=dim, keepdims=True)
            return shifted - _sleef.log(_down(_exp_columns(shifted, dim), dim))

    def rows(x):
        m = x.max(axis=1, keepdims=True)
        return (x - m) - _sleef.log(_lanes_sum(_sleef.exp(x - m)))[:, None]
    return _by_rows(rows, dim, a)


def _lanes_dot(g, y):
    """Σ_j g_j·y_j per row, as PyTorch's softmax backward adds it up (``map2_reduce_all``):
    rounded products in whole vectors, then the leftover part vector, its products fused into the
    sums where the compiler contracted them (floats, when the kernel runs on one thread or for one
    row; not in its multi-thread copy, nor for doubles: measured), then the lanes added up as in
    :func:`_lanes_sum`; rows shorter than a vector left to right."""
    rows, n = g.shape
    lanes = _vector(g.dtype)
    if n < lanes:
        return _lanes_sum(g * y)
    full = n // lanes * lanes
    acc = np.add.accumulate((g[:, :full] * y[:, :full]).reshape(rows, -1, lanes), axis=1)[:, -1]
    if full < n:
        if g.dtype == _f and (rows == 1 or get_num_threads() == 1):
            acc[:, :n - full] = fma(g[:, full:], y[:, full:], acc[:, :n - full])
        else:
            acc[:, :n - full] += g[:, full:] * y[:, full:]
    return _fold(acc)


def softmax_backward(g, y, dim):
    r"""∂softmax applied to g: :math:`(g_i − Σ_j g_j y_j)\,y_i`, the sum as PyTorch adds it."""
    g, y = np.asarray(g), np.asarray(y)
    if y.dtype not in _EXACT or g.dtype != y.dtype:
        return y * (g - np.sum(g * y, axis=dim, keepdims=True))
    dim %= y.ndim
    if _across(y.shape, dim):
        return (g - _fma_down(g, y, dim)) * y
    return _by_rows(lambda g2, y2: (g2 - _lanes_dot(g2, y2)[:, None]) * y2, dim, g, y)


def log_softmax_backward(g, y, dim):
    r"""∂log_softmax applied to g: :math:`g_i − e^{y_i} Σ_j g_j`, one fused step, SLEEF's exp."""
    g, y = np.asarray(g), np.asarray(y)
    if y.dtype not in _EXACT or g.dtype != y.dtype:
        return g - np.exp(y) * np.sum(g, axis=dim, keepdims=True)
    dim %= y.ndim
    if _across(y.shape, dim):
        return _fma(-_exp_columns(y, dim), np.broadcast_to(_down(g, dim), y.shape), g)
    return _by_rows(lambda g2, y2: _fma(-_sleef.exp(y2), _lanes_sum(g2)[:, None], g2), dim, g, y)
