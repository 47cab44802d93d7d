r"""How large an array the re-derived SLEEF functions compute bit for bit, and what runs above it.

SLEEF's vectorised ``expf``/``logf``/``log1pf``/``powf`` (:mod:`gradviz.kernels._sleef`,
:mod:`gradviz.kernels._powf`) cannot be called from Python: PyTorch links them into its own library
and they take their arguments in vector registers.  gradviz re-derives them in numpy, to the bit,
but each takes some 30 passes over the array: 50 ms for a million floats where PyTorch takes half a
millisecond.  The project's rule is *exact by calling what PyTorch calls, never by an emulation
100x slower*; so the emulation runs up to :func:`get_exact_limit` elements per call (every lesson,
every test's exactness check and ``benchmarks/core.py``'s exactness rows are far below it), and
above it the same kernels run with a fast function in its place:

* MKL's vector ``vsExp``/``vsLn``/``vsLog1p`` (``exact`` extra), else the function in double
  rounded once -- each within 1 ulp of SLEEF's result, which is itself within 1 ulp of exact;
* every other step of the kernel (the max, the vector-lane sums, the reciprocal, the fused
  multiply-adds) is PyTorch's, so a result differs from PyTorch's only through that last bit
  of an ``exp`` or ``log`` (``docs/performance.md`` gives the bounds measured on each kernel).

``set_exact_limit(None)``, or the environment variable ``GRADVIZ_EXACT_LIMIT=none`` before the
import, computes PyTorch's bits at every size (slowly); ``set_exact_limit(n)`` moves the limit.

>>> get_exact_limit()
262144
>>> exact(10), exact(10 ** 6)
(True, False)
"""

import os

__all__ = ["DEFAULT_LIMIT", "ENV_VAR", "get_exact_limit", "set_exact_limit", "exact"]

DEFAULT_LIMIT = 2 ** 18     # elements in one call: 512x512, 256 images of 32x32
ENV_VAR = "GRADVIZ_EXACT_LIMIT"


def _parse(text):
    """The limit ``$GRADVIZ_EXACT_LIMIT`` names: a count of elements, or none/all (no limit)."""
    text = text.strip().lower()
    if text in ("none", "all", "inf", "exact"):
        return None
    try:
        value = int(text.replace("_", ""))
    except ValueError:
        raise ValueError(f"{ENV_VAR}={text!r}: expected a number of elements or 'none'") from None
    if value < 0:
        raise ValueError(f"{ENV_VAR}={text!r}: expected a number of elements >= 0 or 'none'")
    return value


_limit = [_parse(os.environ[ENV_VAR]) if os.environ.get(ENV_VAR) else DEFAULT_LIMIT]


def get_exact_limit():
    """The largest number of elements the SLEEF-family kernels compute bit for bit (None: all)."""
    return _limit[0]


def set_exact_limit(limit):
    """Compute SLEEF's bits up to ``limit`` elements per call (None: at every size, slowly); return
    the previous limit, so that a block can put it back."""
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise ValueError(f"set_exact_limit expects a number of elements >= 0 or None, got {limit!r}")
    previous, _limit[0] = _limit[0], limit
    return previous


def exact(size):
    """Is an array of ``size`` elements computed bit for bit?"""
    limit = _limit[0]
    return limit is None or size <= limit
