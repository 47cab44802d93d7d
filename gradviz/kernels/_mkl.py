r"""Intel MKL: the vector maths and the BLAS PyTorch's CPU kernels call for ``exp``, ``log``... and ``a @ b``.

PyTorch 2.13's x86-64 build hands these elementwise functions of float32 and float64 tensors, whatever
their size or layout, to the MKL 2024.2 it carries inside (``aten/src/ATen/cpu/vml.h``)::

    vmsExp(n, x, y, VML_HA | VML_FTZDAZ_OFF | VML_ERRMODE_IGNORE)      // float32; vmdExp for float64

MKL's algorithms are not public, so the one way to print PyTorch's last digit is to call the same
library.  The ``exact`` extra (part of ``course`` and ``test``; ``pip install -e ".[exact]"`` in the clone) installs the
wheel ``mkl==2024.2.0``; this module finds its ``libmkl_rt`` through ctypes the first time a function
is asked for, sets it to PyTorch's threading (GNU OpenMP) and thread count, and checks its version.
Without it (another platform, another MKL), :func:`vml` returns None and the op table computes the
function in double and rounds once: within 1 ulp of MKL, equal on 93-99.9% of float32 inputs
(``tests/kernels/test_vecmath.py`` measures both).

>>> import numpy as np
>>> y = vml("Exp", np.array([0.0, 1.0], np.float32))
>>> y is None or y.tolist() == [1.0, 2.7182817459106445]
True
"""

import ctypes
import functools
import os
import site
import sys

import numpy as np

from ._threads import FOLLOWERS, get_num_threads

__all__ = ["VERSION", "FUNCTIONS", "COL_MAJOR", "NO_TRANS", "TRANS", "library", "vml", "pointer", "lender", "routine",
           "gemm", "gemv", "dot", "axpy", "axpy_rows", "fma_into", "gemm_batch", "batch_caller"]

VERSION = "2024.2"          # the MKL inside PyTorch 2.13's x86-64 wheels (torch.__config__.show())
FUNCTIONS = ("Exp", "Ln", "Sin", "Cos", "Tan", "Tanh", "Sqrt", "Atan", "Asin", "Acos", "Erf", "Log2", "Log10", "Log1p")
_MODE = 0x2 | 0x00140000 | 0x100     # VML_HA | VML_FTZDAZ_OFF | VML_ERRMODE_IGNORE
_MODE_ARG = ctypes.c_int64(_MODE)    # (MKL's 64-bit mode argument, built once)
_PREFIX = {np.dtype(np.float32): "vms", np.dtype(np.float64): "vmd"}
_MAX_N = 2 ** 31 - 1        # MKL_INT is 32 bits in the LP64 interface


def _candidates():
    names = ("libmkl_rt.so.2", "libmkl_rt.so") if sys.platform.startswith("linux") else ()
    roots = dict.fromkeys([sys.prefix, sys.base_prefix, site.getuserbase()])
    return [os.path.join(root, "lib", name) for root in roots for name in names]   # (no pathlib: it is slow to import)


_GNU, _SEQUENTIAL = 3, 1     # MKL_THREADING_GNU, MKL_THREADING_SEQUENTIAL


def _threading_layer():
    """GNU OpenMP, the threading PyTorch's own MKL is built with, when ``libgomp`` is found; else one thread.

    With the same threading and thread count, MKL splits a product's work as PyTorch's does, so its
    bits are PyTorch's at every ``set_num_threads``.  It also matters to a ``torch`` imported later:
    PyTorch's MKL symbols then resolve to this MKL (they are exported), and with the sequential layer
    torch would report, and take, one thread."""
    try:
        ctypes.CDLL("libgomp.so.1", mode=ctypes.RTLD_GLOBAL)
    except OSError:
        return _SEQUENTIAL
    return _GNU


@functools.cache
def library():
    """The loaded ``libmkl_rt`` of MKL :data:`VERSION`, or None when it is not installed."""
    for path in _candidates():
        if not os.path.exists(path):
            continue
        try:
            lib = ctypes.CDLL(path)
            lib.MKL_Set_Interface_Layer(0)      # LP64: 32-bit MKL_INT (before any other call)
            lib.MKL_Set_Threading_Layer(_threading_layer())
            lib.MKL_Set_Num_Threads(get_num_threads())
            text = ctypes.create_string_buffer(256)
            lib.MKL_Get_Version_String(text, len(text))
        except (OSError, AttributeError):
            continue
        if f"Version {VERSION}" in text.value.decode(errors="replace"):
            FOLLOWERS.append(lib.MKL_Set_Num_Threads)
            return lib
    return None


def _function(name, dtype):
    """MKL's vector function ``name`` for ``dtype`` as a function object of its own, called without
    ``argtypes`` (ctypes converting declared arguments costs more than MKL on a lesson's 512 floats):
    the size as a C int (MKL_INT, LP64), the addresses as :func:`_at` gives them, the mode as
    :data:`_MODE_ARG`; None for another dtype or without MKL.  Looked up once."""
    key, lib = (name, dtype), library()
    if lib is None:
        return None
    if key not in _FUNCTIONS:
        prefix = _PREFIX.get(dtype)
        fn = _FUNCTIONS[key] = None if prefix is None else lib[prefix + name]
        if fn is not None:
            fn.restype = None
    return _FUNCTIONS[key]


_FUNCTIONS = {}    # (name, dtype) -> MKL's function, or None for a dtype it has none for


def vml(name, a, out=None):
    """MKL's ``name`` (one of :data:`FUNCTIONS`) of a float32 or float64 array, as PyTorch computes
    it; None when MKL is missing or the array is of another dtype (the caller falls back).
    ``out``: a contiguous array of ``a``'s shape and dtype to write into (``a`` itself: in place).
    An array laid by rows goes straight to MKL, as it is; MKL raises no numpy error, so no
    ``np.errstate`` is needed around it."""
    if type(a) is not np.ndarray:
        a = np.asarray(a)
    fn = _FUNCTIONS.get((name, a.dtype), _UNSEEN)
    if fn is _UNSEEN:
        fn = _function(name, a.dtype)
    if fn is None or a.size > _MAX_N or library() is None:   # (MKL may be gone since: a test takes it away)
        return None
    x = a if a.flags.c_contiguous else np.ascontiguousarray(a)
    if out is None or not (out.flags.c_contiguous and out.flags.writeable and out.shape == x.shape
                           and out.dtype == x.dtype):
        out = np.empty(x.shape, x.dtype)
    if x.size:     # (arrays laid by rows and writable lend their buffers: the quickest address)
        fn(x.size, _lend_rows(x) if x.flags.writeable else _at(x), _lend_rows(out), _MODE_ARG)
    return out if x is a else out.reshape(a.shape)


_UNSEEN = object()


# --- BLAS: the entry points PyTorch's cpublas reaches (gemm, gemv, dot), through MKL's CBLAS layer ---
# (column-major CBLAS calls forward to the same kernels as the Fortran sgemm_/sgemv_ PyTorch calls.)
# A product of lesson size costs less in MKL than in ctypes, so the calls below are made the cheapest
# way ctypes has: through function objects of their own with no ``argtypes`` (ctypes converting 14
# declared arguments costs more than the 64x64 sgemm itself, about 1.3 µs of 2), the integers passed
# as C ints (what CBLAS takes in the LP64 interface; the callers keep them below 2^31), the scalars
# and addresses as ctypes objects.

_BLAS = {np.dtype(np.float32): ("s", ctypes.c_float), np.dtype(np.float64): ("d", ctypes.c_double)}
COL_MAJOR, NO_TRANS, TRANS = 102, 111, 112       # CBLAS's CblasColMajor, CblasNoTrans, CblasTrans
_ROW_MAJOR, _UPPER = 101, 121                      # CblasRowMajor, CblasUpper


_address, _char_view, _void_p, _byref = ctypes.addressof, ctypes.c_char.from_buffer, ctypes.c_void_p, ctypes.byref


def pointer(a):
    """The address of ``a``'s first element.  A writable array laid out by rows (or by columns, seen
    through its transpose) lends ctypes its buffer, the quickest way to it from Python (about 0.25 µs,
    a quarter of numpy's ``__array_interface__``, which every other array goes through)."""
    flags = a.flags
    if flags.writeable and a.size:
        if flags.c_contiguous:
            return _address(_char_view(a))
        if flags.f_contiguous:
            return _address(_char_view(a.T))
    return a.__array_interface__["data"][0]


def _at(a):
    """``a``'s first element as a ctypes argument (a pointer to it), ``a`` not empty: as :func:`pointer`,
    without the round trip through a Python int where the array lends its buffer.  (The flags are
    read first: a failed ``from_buffer`` would cost an exception, about 1 µs.)"""
    flags = a.flags
    if flags.c_contiguous:
        if flags.writeable:
            return _byref(_char_view(a))
    elif flags.f_contiguous and flags.writeable:
        return _byref(_char_view(a.T))
    return _void_p(a.__array_interface__["data"][0])


# The planned products (:mod:`._products`) choose, once per layout, how MKL is handed each array's
# first element: a lender.  numpy's array object holds that address right after the object's header
# (``PyArray_DATA``, the first field of its C struct), so in CPython ``c_void_p.from_address(id(a) +
# header)`` is a ctypes argument holding it, whatever the layout, read without the buffer protocol:
# about 0.1 µs (:func:`_data_pointer`).  That is checked once, below, against
# ``__array_interface__``; where it does not hold, a writable array laid by rows lends its buffer as
# a ctypes array of no length (``(c_char * 0).from_buffer``, about 0.2 µs), which ctypes passes as
# its address; one laid by columns lends its transpose's (the same address); any other (or a
# read-only one, where ``from_buffer`` raises TypeError and the caller takes the long way) its
# ``__array_interface__`` address, about 1 µs.
_lend_buffer = (ctypes.c_char * 0).from_buffer
_pointer_at = _void_p.from_address
_HEADER = object.__basicsize__     # (PyObject_HEAD: the reference count and the type)


def _data_pointer(a):
    """``a``'s first element's address as a ctypes argument.  It does not keep ``a`` alive: the
    caller holds ``a`` (a name, not a temporary) until MKL has returned."""
    return _pointer_at(id(a) + _HEADER)


def _lend_columns(a):
    return _lend_buffer(a.T)


def _lend_any(a):
    return _void_p(a.__array_interface__["data"][0])


def _reads_the_struct():
    """Does :func:`_data_pointer` give numpy's data pointer here (CPython, numpy's struct as documented)?"""
    if sys.implementation.name != "cpython":
        return False
    base = np.arange(24.0).reshape(4, 6)
    read_only = base[1:, ::2]
    read_only.flags.writeable = False
    return all(_data_pointer(x).value == x.__array_interface__["data"][0] for x in (base, base.T, base[1:, 3:], read_only))


_READS_THE_STRUCT = _reads_the_struct()
_lend_rows = _data_pointer if _READS_THE_STRUCT else _lend_buffer    # (an array laid by rows, writable)


def lender(a):
    """The cheapest function handing MKL the first element of an array laid out as ``a`` is
    (``lender(a)(a)``: a ctypes argument); one that lends a buffer raises TypeError on a read-only
    array (which :func:`_data_pointer` never does)."""
    if _READS_THE_STRUCT:
        return _data_pointer
    flags = a.flags
    return _lend_buffer if flags.c_contiguous else _lend_columns if flags.f_contiguous else _lend_any


def routine(kind, dtype):
    """MKL's CBLAS routine ``kind`` ("gemm", "gemv", "dot", "axpy", "axpy_batch", "sbmv", "gemm_batch")
    for ``dtype``, its scalar type, and that type's 1 and 0: ``(routine, scalar type, 1, 0)``, the routine a function
    object of its own (``lib[name]``, not the attribute ``lib.name`` ctypes shares) with no
    ``argtypes``: integers are passed as C ints (MKL_INT in the LP64 interface), scalars as the
    scalar type, addresses as :func:`lender` gives them.  (For callers that plan their calls.)"""
    entry = _ROUTINES.get((kind, dtype))
    if entry is None:
        letter, scalar = _BLAS[np.dtype(dtype)]
        fn = library()[f"cblas_{letter}{kind}"]
        fn.restype = scalar if kind == "dot" else None
        entry = _ROUTINES[kind, dtype] = fn, scalar, scalar(1), scalar(0)
    return entry


_ROUTINES = {}   # (kind, dtype) -> (routine, scalar type, 1, 0), looked up once


def gemm(dtype, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc):
    """``c ← alpha·op(a)·op(b) + beta·c`` by MKL's gemm (column-major, as BLAS): ``a``, ``b`` are
    arrays whose first element is the matrix's (quickest laid out by rows), ``c`` one laid out by
    rows that the caller allocated (so it lends its buffer); ``transa``/``transb`` say whether op
    transposes; the sizes (at least 1) and leading dimensions are Python ints below 2^31."""
    fn, scalar, one, zero = _ROUTINES.get(("gemm", dtype)) or routine("gemm", dtype)
    fa, fb = a.flags, b.flags     # (_at written out for the usual operands, laid by rows and writable)
    # (beta 0, of either sign, means c is not read: BLAS's rule, so one 0 stands for both)
    fn(COL_MAJOR, TRANS if transa else NO_TRANS, TRANS if transb else NO_TRANS, m, n, k,
       one if alpha == 1 else scalar(alpha), _byref(_char_view(a)) if fa.c_contiguous and fa.writeable else _at(a),
       lda, _byref(_char_view(b)) if fb.c_contiguous and fb.writeable else _at(b), ldb,
       zero if beta == 0 else one if beta == 1 else scalar(beta), _byref(_char_view(c)), ldc)


def gemv(dtype, trans, m, n, alpha, a, lda, x, incx, beta, y, incy):
    """``y ← alpha·op(a)·x + beta·y`` by MKL's gemv (arrays and sizes as in :func:`gemm`)."""
    fn, scalar, _, _ = routine("gemv", dtype)
    fn(COL_MAJOR, TRANS if trans else NO_TRANS, m, n, scalar(alpha), _at(a), lda, _at(x), incx, scalar(beta),
       _at(y), incy)


def dot(dtype, n, x, incx, y, incy):
    """``Σ x_i·y_i`` by MKL's ``cblas_sdot``/``cblas_ddot`` (arrays and sizes as in :func:`gemm`)."""
    return routine("dot", dtype)[0](n, _at(x), incx, _at(y), incy)


def axpy(alpha, x, y):
    """``y ← alpha·x + y`` in place by MKL's ``cblas_saxpy``/``daxpy``: each element one fused
    multiply-add, ``fma(x, alpha, y)`` rounded once, as PyTorch's ``add(alpha=)`` kernel computes it
    (``tests/kernels/test_vecmath.py`` checks the two agree bit for bit, special values included).
    True when done; False, ``y`` untouched, where MKL is missing or the arrays do not fit: another
    dtype, other shapes or layouts, not contiguous, or ``alpha`` 0 (BLAS returns at once, where
    the kernel adds 0·x, which is nan for x = ∞ and turns -0 into +0)."""
    dtype = y.dtype
    if not alpha or x.dtype != dtype or x.shape != y.shape:
        return False
    if library() is None:
        return False
    entry = _ROUTINES.get(("axpy", dtype))     # (found once a first call has looked it up)
    if entry is None:
        if dtype not in _BLAS:
            return False
        entry = routine("axpy", dtype)
    fx, fy = x.flags, y.flags
    if not fy.writeable or y.size > _MAX_N or not (
            fx.c_contiguous and fy.c_contiguous or x.strides == y.strides and fx.f_contiguous):
        return False
    if y.size:   # (y writable and laid out in one block: it lends its buffer, by rows or through its transpose)
        entry[0](y.size, entry[1](alpha), _at(x), 1, _byref(_char_view(y if fy.c_contiguous else y.T)), 1)
    return True


def axpy_rows(alpha, x, y):
    """``y[r] ← alpha[r]·x[r] + y[r]`` for each row r of two C-contiguous (rows, n) arrays, in place,
    in one call of MKL's ``cblas_saxpy_batch``/``daxpy_batch`` (a group of one row per number of
    ``alpha``): each element one fused multiply-add, as :func:`axpy`.  True when done; False, ``y``
    untouched, where :func:`axpy` would refuse.  Rows whose ``alpha`` is 0 are left as they were
    (BLAS's rule): the caller redoes them if 0·x must count."""
    dtype = y.dtype
    if x.dtype != dtype or x.shape != y.shape or y.ndim != 2 or dtype not in _BLAS or not y.flags.writeable \
            or not (x.flags.c_contiguous and y.flags.c_contiguous) or y.size > _MAX_N or library() is None:
        return False
    rows, n = y.shape
    if not y.size:
        return True
    alpha = np.ascontiguousarray(alpha, dtype)
    sizes, ones = np.full(rows, n, np.int32), np.ones(rows, np.int32)     # MKL_INT: 32 bits (LP64)
    step = np.arange(rows, dtype=np.uint64) * np.uint64(n * y.itemsize)
    xs, ys = pointer(x) + step, pointer(y) + step                         # each row's first element
    fn = routine("axpy_batch", dtype)[0]
    fn(*(_void_p(a.ctypes.data) for a in (sizes, alpha, xs, ones, ys, ones)), ctypes.c_int(rows),
       _void_p(ones.ctypes.data))
    return True


def fma_into(a, x, y):
    """``y ← a·x + y`` elementwise, in place, each element one fused multiply-add rounded once, by
    MKL's ``cblas_ssbmv``/``dsbmv`` with a band of width 0: ``y ← α·A·x + β·y`` where the symmetric
    band matrix A is the diagonal ``a`` and α = β = 1 (α·x is then exact), which MKL computes as
    ``fma(a, x, y)``, and then adds a +0: an exact -0 comes out +0, and so does a negative result
    too small for the dtype (the caller puts back the zeros: :func:`gradviz.kernels._numerics.fma32`;
    ``tests/kernels/test_vecmath.py`` checks the rest against the C library's ``fma``, bit for bit).
    Three arrays of one dtype (float32 or float64) and shape laid by rows, ``y`` writable.  True when
    done; False, ``y`` untouched, where MKL is missing or the arrays do not fit."""
    dtype = y.dtype
    if not (a.dtype == x.dtype == dtype and a.shape == x.shape == y.shape) or dtype not in _BLAS \
            or not (a.flags.c_contiguous and x.flags.c_contiguous and y.flags.c_contiguous and y.flags.writeable) \
            or y.size > _MAX_N or library() is None:
        return False
    fn, _, one, _ = _ROUTINES.get(("sbmv", dtype)) or routine("sbmv", dtype)
    if y.size:    # (row-major, upper: the band's one column is the diagonal, lda = 1)
        fn(_ROW_MAJOR, _UPPER, y.size, 0, one, _at(a), 1, _at(x), 1, one, _byref(_char_view(y)), 1)
    return True


def gemm_batch(dtype, transa, transb, count, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b, beta, c, ldc,
               stride_c):
    """``count`` products ``c_i ← alpha·op(a_i)·op(b_i) + beta·c_i`` in one call of MKL's
    ``cblas_sgemm_batch`` (one group, the matrices ``stride_*`` bytes apart from each array's first
    element), as PyTorch's ``mkl_gemm_batched`` calls it."""
    batch_caller(dtype, transa, transb, count, m, n, k, alpha, lda, stride_a, ldb, stride_b, beta, ldc, stride_c)(a, b, c)


def batch_caller(dtype, transa, transb, count, m, n, k, alpha, lda, stride_a, ldb, stride_b, beta, ldc, stride_c):
    """:func:`gemm_batch` with all but the arrays given, as a function ``run(a, b, c)``: the arguments
    MKL takes by reference are made once, and so are the offsets of the matrices from each array's
    first element (a call adds that address to them: the array of pointers MKL reads)."""
    fn, scalar, _, _ = routine("gemm_batch", np.dtype(dtype))
    i, ref = ctypes.c_int, ctypes.byref
    head = (i(COL_MAJOR), ref(i(TRANS if transa else NO_TRANS)), ref(i(TRANS if transb else NO_TRANS)), ref(i(m)),
            ref(i(n)), ref(i(k)), ref(scalar(alpha)))
    lda, ldb, beta, ldc, groups, sizes = ref(i(lda)), ref(i(ldb)), ref(scalar(beta)), ref(i(ldc)), i(1), ref(i(count))
    offsets_a, offsets_b, offsets_c = (np.arange(count, dtype=np.uint64) * np.uint64(stride)
                                       for stride in (stride_a, stride_b, stride_c))

    def run(a, b, c):
        # (arrays of pointers made here: each lends its buffer, which keeps it alive through the call)
        fn(*head, _lend_buffer(offsets_a + pointer(a)), lda, _lend_buffer(offsets_b + pointer(b)),
           ldb, beta, _lend_buffer(offsets_c + pointer(c)), ldc, groups, sizes)
    return run
