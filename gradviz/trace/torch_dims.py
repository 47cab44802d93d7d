"""The dims PyTorch's nodes keep, read back as gradviz's own ops keep them.

A node keeps a dim as the user wrote it, an int64 read through an unsigned getter: ``x.softmax(-1)``'s
``_saved_dim`` is 18446744073709551615 (2**64 - 1).  gradviz's ops work along the dim wrapped into
range and remember how it was written (:class:`gradviz._types.Wrapped`), so a step read from
PyTorch's graph is given the same: both engines' steps read alike, and the op table's forward
replays along the right dim.

>>> signed(18446744073709551615), signed((0, 18446744073709551614))
(-1, (0, -2))
"""

from .._indexing import _kept_slice
from .._types import WorkedOut, wrapped

__all__ = ["signed", "wrap_dims"]


def signed(dim):
    """A dim as PyTorch keeps it (an unsigned int64: -1 shows as 2**64 - 1) back to a Python int, or a tuple of them."""
    if isinstance(dim, (tuple, list)):
        return tuple(signed(d) for d in dim)
    return dim - 2 ** 64 if isinstance(dim, int) and dim >= 2 ** 63 else dim


def wrap_dims(op, params, shape):
    """The dims (a select's index, a slice's bounds) of a step read from PyTorch's node, which keeps
    them as written (-1 as 2**64 - 1), wrapped into range as gradviz's own ops keep them, remembering
    how they were written (:class:`gradviz._types.Wrapped`): the steps of both engines read alike,
    and the op table's forward replays along the right dim."""
    if op.inputs == "reduce_dim" and isinstance(op.params.get("dim"), tuple) and "dim" in params:
        written = signed(params["dim"])            # sum(dim=...): every dim for None or (), none of a 0-d input's
        if written in (None, ()) or not shape:     # (as gradviz's _reduced_dims says)
            params["dim"] = WorkedOut(range(len(shape)) if shape else (),
                                        written if written in (None, ()) else tuple(wrapped(d, 1) for d in written))
            return
    ndim = max(len(shape) + (op.key in ("unsqueeze", "unsqueeze_", "stack")), 1)
    for key in ("dim", "d0", "d1", "dims"):
        value = signed(params.get(key))
        if isinstance(value, int) and not isinstance(value, bool):
            params[key] = wrapped(value, ndim)
        elif isinstance(value, tuple) and all(isinstance(d, int) for d in value):
            params[key] = tuple(wrapped(d, ndim) for d in value)
    dim = params.get("dim")
    if op.key == "select" and isinstance(params.get("index"), int) and len(shape) > dim:
        params["index"] = wrapped(signed(params["index"]), shape[dim])
    elif op.key == "slice" and isinstance(params.get("s"), slice) and len(shape) > dim:
        s = params["s"]
        params["s"] = _kept_slice(slice(signed(s.start), signed(s.stop), signed(s.step)), shape[dim])
