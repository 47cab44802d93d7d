"""numpy's floating-point errors silenced while gradviz computes, as PyTorch makes nan and inf silently.

``np.errstate(all="ignore")`` works the quiet state out anew each time it is entered (about
0.7 µs, as long as a whole backward step of a small op); :func:`silence` works it out once for
each state it replaces and sets it directly, where numpy lets it be reached (numpy 2 keeps the
state in a context variable), and is ``np.errstate`` itself elsewhere.

>>> token = silence()
>>> float(np.float32(1e38) * np.float32(10))      # no RuntimeWarning
inf
>>> restore(token)
"""

import numpy as np

__all__ = ["silence", "restore"]

try:
    from numpy._core._ufunc_config import _extobj_contextvar
    from numpy._core.umath import _make_extobj
except ImportError:   # (another numpy: np.errstate as it is)
    _extobj_contextvar = None

_quieted = (None, None)   # (the state last silenced, its quiet twin): most passes meet the same one


def silence():
    """Silence numpy's floating-point errors until :func:`restore` is handed what this returns."""
    global _quieted
    if _extobj_contextvar is None:
        context = np.errstate(all="ignore")
        context.__enter__()
        return context
    current, (seen, quiet) = _extobj_contextvar.get(), _quieted
    if current is not seen and current is not quiet:   # (the user's np.seterr or an errstate block made
        # another one; an op run quietly inside a silenced backward pass finds the quiet one itself)
        quiet = _make_extobj(all="ignore")     # (its callback and buffer size kept)
        _quieted = (current, quiet)
    return _extobj_contextvar.set(quiet)


def restore(token):
    """Put back the error state :func:`silence` replaced."""
    if _extobj_contextvar is None:
        token.__exit__(None, None, None)
    else:
        _extobj_contextvar.reset(token)
