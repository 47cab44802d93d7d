"""Random numbers identical to PyTorch's CPU generator: ``manual_seed(0); randn(3)`` prints the same.

PyTorch's CPU generator is a 32-bit Mersenne Twister (mt19937) seeded with the classic
``init_genrand(seed)``; each distribution turns its raw 32-bit draws into numbers in a fixed
way (``aten/src/ATen/core/DistributionsHelper.h`` and ``TransformationHelper.h``):

* uniform float32: the low 24 bits of one draw, times 2⁻²⁴; float64: the low 53 bits of
  ``random64()`` (two draws, the first one high), times 2⁻⁵³;
* normal, fewer than 16 elements (or not float32/float64 contiguous): Box-Muller per element in
  double precision, the second sample of each pair cached in the generator for the next call;
* normal, 16 elements or more: fill with uniforms first, then Box-Muller in blocks of 16 pairing
  element ``j`` with ``j + 8``; when the size is not a multiple of 16 the last 16 are drawn again;
* randint: ``low + draw % (high - low)``; randperm: Fisher-Yates with ``draw % (n - i)``.

>>> g = Mt19937().manual_seed(0)
>>> rand((3,), np.float32, g).tolist()
[0.49625658988952637, 0.7682217955589294, 0.08847743272781372]
"""

import math
import struct

import numpy as np

from .kernels import fma

__all__ = ["Mt19937", "DEFAULT", "rand", "randn", "randint", "randperm", "bernoulli", "exponential", "multinomial"]

_DEFAULT_SEED = 67280421310721   # what PyTorch's default generator starts from
_N = 624                         # words of mt19937 state


class Mt19937:
    """PyTorch's CPU generator: its seed, mt19937 state and cached normal sample, and raw draws.

    ``gradviz.Generator`` (in :mod:`gradviz.random`) is the public face around one of these.
    """

    def __init__(self):
        self.manual_seed(_DEFAULT_SEED)

    def manual_seed(self, seed):
        """Restart the sequence from ``seed`` (only its low 32 bits reach mt19937, as in PyTorch)."""
        seed = int(seed)
        if seed < 0:
            seed += 1 << 64
        if not 0 <= seed < 1 << 64:
            raise RuntimeError("Overflow when unpacking long long")
        self._seed = seed
        self._mt = None            # made on the first draw, so `import gradviz` skips numpy.random
        self._next_normal = None   # Box-Muller's second sample, kept for the next call
        return self

    @property
    def _bits(self):
        """numpy's MT19937 in the state PyTorch's ``mt19937(seed)`` starts from."""
        if self._mt is None:
            self._mt = np.random.MT19937(0)
            self._mt.state = {"bit_generator": "MT19937",
                              "state": {"key": _init_genrand(self._seed & 0xFFFFFFFF), "pos": _N}}
        return self._mt

    def seed(self):
        s = int(np.random.SeedSequence().entropy) & 0xFFFFFFFFFFFFFFFF
        self.manual_seed(s)
        return s

    def initial_seed(self):
        return self._seed

    # -- raw draws -------------------------------------------------------------------------------

    def random(self, n):
        """``n`` raw 32-bit draws (as uint64)."""
        return self._bits.random_raw(n) if n else np.zeros(0, np.uint64)

    def random64(self, n):
        """``n`` 64-bit draws, each made of two 32-bit draws, the first one in the high half."""
        r = self.random(2 * n).reshape(n, 2)
        return (r[:, 0] << np.uint64(32)) | r[:, 1]

    # -- state -----------------------------------------------------------------------------------

    # PyTorch's CPUGeneratorImplState: seed, left, seeded, next, 624 words (each as uint64),
    # normal_x, normal_y (the cached double sample), normal_rho, normal_is_valid, then the
    # float cache; 5056 bytes in all.
    _LAYOUT = struct.Struct("<QiiQ624Qdddi4xf?3x")

    def get_state(self):
        """The state as PyTorch lays it out: 5056 bytes (a uint8 array)."""
        st = self._bits.state["state"]
        pos = int(st["pos"])
        left, nxt = (1, 0) if pos == _N and self._fresh() else (_N - pos + 1, pos)
        cached = self._next_normal
        blob = self._LAYOUT.pack(self._seed, left, 1, nxt, *st["key"].tolist(), 0.0,
                                 cached or 0.0, 0.0, cached is not None, 0.0, False)
        return np.frombuffer(blob, np.uint8).copy()

    def set_state(self, state):
        """Restore a state that :meth:`get_state` gave (an array of bytes)."""
        blob = bytes(np.asarray(state, np.uint8))
        if len(blob) != self._LAYOUT.size:
            raise RuntimeError("Expected either a THGeneratorState of size 5048 or a "
                               "CPUGeneratorImplState of size 5056 but found the input RNG state "
                               f"size to be {len(blob)}")
        seed, left, _, nxt, *rest = self._LAYOUT.unpack(blob)
        key, (_, cached, _, valid) = rest[:_N], rest[_N:_N + 4]
        self._seed = seed
        self._mt = None
        self._bits.state = {"bit_generator": "MT19937",
                            "state": {"key": np.array(key, np.uint32), "pos": _N if left == 1 else nxt}}
        self._next_normal = cached if valid else None
        return self

    def _fresh(self):
        return np.array_equal(self._bits.state["state"]["key"], _init_genrand(self._seed & 0xFFFFFFFF))


def _init_genrand(s):
    """mt19937's seeding: the first word is the seed, each next one a hash of the previous."""
    key = [s]
    for i in range(1, _N):
        key.append((1812433253 * (key[-1] ^ (key[-1] >> 30)) + i) & 0xFFFFFFFF)
    return np.array(key, np.uint32)


DEFAULT = Mt19937()     # the default generator's state: gradviz.default_generator wraps this one


def _gen(generator):
    """The mt19937 state to draw from: a ``gradviz.Generator``'s own, a state itself, or the default one."""
    return DEFAULT if generator is None else getattr(generator, "_rng", generator)


# --- uniform ------------------------------------------------------------------------------------

_DIGITS = {np.dtype(np.float16): 11, np.dtype(np.float32): 24, np.dtype(np.float64): 53}


def _uniform01(n, np_dtype, g):
    """``n`` uniforms in [0, 1): the low mantissa-many bits of a draw, scaled down."""
    digits = _DIGITS[np.dtype(np_dtype)]
    raw = g.random64(n) if digits == 53 else g.random(n)
    mask = np.uint64((1 << digits) - 1)
    x = (raw & mask).astype(np.float64) * 2.0 ** -digits   # exact: at most 53 bits
    return x if digits == 53 else x.astype(np.float32)     # half is computed in float


def rand(shape, np_dtype, generator=None, low=0.0, high=1.0):
    """Uniform samples in [low, high): ``x * (high - low) + low`` in the tensor's precision."""
    n = math.prod(shape)
    x = _uniform01(n, np_dtype, _gen(generator))
    if low != 0.0 or high != 1.0:
        acc = np.float64 if np.dtype(np_dtype) == np.float64 else np.float32
        lo, hi = acc(np.dtype(np_dtype).type(low)), acc(np.dtype(np_dtype).type(high))
        x = fma(x, hi - lo, lo, acc)
    return x.astype(np_dtype).reshape(shape)


# --- normal -------------------------------------------------------------------------------------

def _box_muller_16(block, np_dtype):
    """Turn rows of 16 uniforms into 16 normals: pairs (j, j + 8) for j < 8 (``normal_fill_16``)."""
    if np.dtype(np_dtype) == np.float32:
        return _box_muller_16_avx2(block)
    out = np.empty_like(block)
    for row, src in zip(out, block.tolist()):  # libm's log, cos, sin, as PyTorch's C++ calls them
        for j in range(8):
            radius = math.sqrt(-2 * math.log(1 - src[j]))
            theta = 2.0 * math.pi * src[j + 8]
            row[j], row[j + 8] = radius * math.cos(theta), radius * math.sin(theta)
    return out


# float32 Box-Muller runs through AVX2 code (``normal_fill_16_AVX2``) built on the Cephes
# polynomials of ``avx_mathfun.h``, compiled with fused multiply-adds; this mirrors it step by step
# in float32 (``_f`` rounds, ``fma`` rounds once), which reproduces PyTorch's bits.
_f = np.float32
_LOG_P = [_f(c) for c in (7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1,
                          1.4249322787E-1, -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1,
                          3.3333331174E-1)]


def _log_ps(x):
    """Cephes logf: split x = m·2^e with m in [√½, √2), then a degree-9 polynomial in m − 1."""
    bits = np.maximum(x, _f(1.17549435e-38)).view(np.int32)
    e = ((bits >> 23) - 0x7F).astype(_f) + _f(1)
    m = ((bits & ~0x7F800000) | 0x3F000000).view(_f)           # mantissa in [0.5, 1)
    small = m < _f(0.707106781186547524)
    e = e - small.astype(_f)
    x = (m - _f(1)) + np.where(small, m, _f(0))
    z = x * x
    y = np.full_like(x, _LOG_P[0])
    for p in _LOG_P[1:]:
        y = fma(y, x, p, _f)
    y = y * x
    y = fma(y, z, e * _f(-2.12194440e-4), _f)
    y = fma(z, _f(-0.5), y, _f)
    return fma(e, _f(0.693359375), x + y, _f)


def _sincos_ps(x):
    """Cephes sinf and cosf together: reduce by multiples of π/4, then two short polynomials."""
    negative = np.signbit(x)
    x = np.abs(x)
    j = ((x * _f(1.27323954473516)).astype(np.int32) + 1) & ~1
    y = j.astype(_f)
    for dp in (-0.78515625, -2.4187564849853515625e-4, -3.77489497744594108e-8):
        x = fma(y, _f(dp), x, _f)
    sin_negative = negative ^ ((j & 4) != 0)
    cos_negative = (~(j - 2) & 4) != 0
    use_sin_poly = (j & 2) == 0
    z = x * x
    yc = fma(fma(np.full_like(z, _f(2.443315711809948E-005)), z, _f(-1.388731625493765E-003), _f),
              z, _f(4.166664568298827E-002), _f)
    yc = fma(yc * z, z, -(z * _f(0.5)), _f) + _f(1)
    ys = fma(fma(np.full_like(z, _f(-1.9515295891E-4)), z, _f(8.3321608736E-3), _f),
              z, _f(-1.6666654611E-1), _f)
    ys = fma(ys * z, x, x, _f)
    sin, cos = np.where(use_sin_poly, ys, yc), np.where(use_sin_poly, yc, ys)
    return np.where(sin_negative, -sin, sin), np.where(cos_negative, -cos, cos)


def _box_muller_16_avx2(block):
    radius = np.sqrt(_f(-2) * _log_ps(_f(1) - block[:, :8]))
    sin, cos = _sincos_ps(_f(2 * math.pi) * block[:, 8:])
    return np.concatenate((radius * cos, radius * sin), axis=1)


def _normal_fill(n, np_dtype, g):
    data = _uniform01(n, np_dtype, g)
    full = n // 16 * 16
    data[:full] = _box_muller_16(data[:full].reshape(-1, 16), np_dtype).reshape(-1)
    if n % 16:  # the tail is drawn afresh, overwriting the end of the last full block
        tail = _uniform01(16, np_dtype, g).reshape(1, 16)
        data[n - 16:] = _box_muller_16(tail, np_dtype).reshape(-1)
    return data


def _normal_one(g):
    """One standard normal in double precision (``normal_distribution<double>``)."""
    if g._next_normal is not None:
        value, g._next_normal = g._next_normal, None
        return value
    u1, u2 = _uniform01(2, np.float64, g).tolist()
    r = math.sqrt(-2.0 * math.log1p(-u2))
    theta = 2.0 * math.pi * u1
    g._next_normal = r * math.sin(theta)
    return r * math.cos(theta)


def randn(shape, np_dtype, generator=None, mean=0.0, std=1.0):
    """Normal samples, by PyTorch's two algorithms (blocks of 16 from 16 elements on)."""
    g, n = _gen(generator), math.prod(shape)
    if n >= 16 and np.dtype(np_dtype) in (np.float32, np.float64):
        z = _normal_fill(n, np_dtype, g)
        if mean != 0.0 or std != 1.0:
            acc = np.dtype(np_dtype).type
            z = fma(z, acc(std), acc(mean), np_dtype)
        return z.astype(np_dtype).reshape(shape)
    values = [_normal_one(g) for _ in range(n)]
    if mean != 0.0 or std != 1.0:
        values = fma(np.array(values, np.float64), float(std), float(mean), np.float64)
    return np.array(values, np.float64).astype(np_dtype).reshape(shape)


# --- integers -----------------------------------------------------------------------------------

def randint(low, high, shape, generator=None):
    """Integers in [low, high): ``low + draw % (high - low)`` (64-bit draws for huge ranges)."""
    g, n, span = _gen(generator), math.prod(shape), int(high) - int(low)
    if span <= 0:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    raw = g.random64(n) if span >= 1 << 32 else g.random(n)
    return ((raw % np.uint64(span)).astype(np.int64) + int(low)).reshape(shape)


def random_full(shape, np_dtype, generator=None):
    """``t.random_()`` with no range: PyTorch's ``uniform_int_distribution`` over the dtype's whole
    non-negative range -- a 64-bit draw mod 2^63 for int64, mod 2^53 + 1 for float64, a 32-bit draw
    mod max + 1 for smaller integers (mod 2^digits + 1 for float32 and float16, mod 2 for bool)."""
    g, n, dt = _gen(generator), math.prod(shape), np.dtype(np_dtype)
    if dt == np.int64:
        raw, span = g.random64(n), 1 << 63
    elif dt == np.float64:
        raw, span = g.random64(n), (1 << 53) + 1
    elif dt.kind == "f":
        raw, span = g.random(n), (1 << _DIGITS[dt]) + 1
    elif dt == np.bool_:
        raw, span = g.random(n), 2
    else:
        raw, span = g.random(n), int(np.iinfo(dt).max) + 1
    return (raw % np.uint64(span)).astype(dt).reshape(shape)


def randperm(n, generator=None):
    """A random permutation of 0..n-1: Fisher-Yates, swapping ``i`` with ``i + draw % (n - i)``."""
    g, n = _gen(generator), int(n)
    if n < 0:
        raise RuntimeError(f"n must be non-negative, got{n}")
    perm = np.arange(n, dtype=np.int64)
    if n > 1:
        z = (g.random(n - 1) % (n - np.arange(n - 1, dtype=np.uint64))).tolist()
        p = perm.tolist()
        for i, k in enumerate(z):
            p[i], p[i + k] = p[i + k], p[i]
        perm = np.array(p, np.int64)
    return perm


# --- bernoulli ----------------------------------------------------------------------------------

def bernoulli(shape, p, np_dtype, generator=None):
    """1 with probability ``p``, else 0: one double uniform (53 bits) per element, 1 where it is
    below ``p`` -- what ``bernoulli_(p)`` draws on CPU, so dropout masks after ``manual_seed`` agree.
    With a probability per element (an array ``p``), the uniforms are drawn in ``p``'s own precision."""
    if isinstance(p, np.ndarray):
        u = _uniform01(p.size, p.dtype, _gen(generator)).reshape(p.shape)
        return (u < p).astype(np_dtype)
    u = _uniform01(math.prod(shape), np.float64, _gen(generator))
    return (u < p).astype(np_dtype).reshape(shape)


# --- exponential and multinomial ----------------------------------------------------------------

def exponential(shape, np_dtype, generator=None, lambd=1.0):
    """Exponential samples: −log1p(−u)/λ from double uniforms, with the C library's log1p."""
    u = _uniform01(math.prod(shape), np.float64, _gen(generator)).tolist()
    return np.array([-1.0 / lambd * math.log1p(-x) for x in u], np.float64).astype(np_dtype).reshape(shape)


def multinomial(probs, num_samples, replacement=False, generator=None):
    """Indices drawn from each row of ``probs`` (weights, not necessarily summing to 1), by PyTorch's
    two CPU algorithms: without replacement (or for one sample), the largest p / q for exponential
    q (the Gumbel trick; ``argmax`` or ``topk``); with replacement, a binary search of a double
    uniform in the row's running sum, normalised, in the weights' precision."""
    g = _gen(generator)
    rows = probs.reshape(-1, probs.shape[-1])
    if not replacement or num_samples == 1:
        q = rows / exponential(rows.shape, rows.dtype, g)
        out = np.argsort(-q, axis=-1, kind="stable")[:, :num_samples]
    else:
        out = np.empty((rows.shape[0], num_samples), np.int64)
        for i, row in enumerate(rows):
            cum = np.cumsum(row, dtype=row.dtype)       # one running sum, in order
            cum = cum / cum[-1]
            cum[-1] = 1
            out[i] = np.searchsorted(cum, _uniform01(num_samples, np.float64, g), side="left")
    return out.reshape(probs.shape[:-1] + (num_samples,))
