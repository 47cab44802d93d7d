"""PyTorch-identical printing of tensors (a port of ``torch/_tensor_str.py``)."""

import contextlib
import math

import numpy as np

from . import _dtype
from ._dtype import get_default_dtype, int64

__all__ = ["set_printoptions", "get_printoptions", "printoptions", "tensor_repr", "format_array"]


class _PrintOptions:
    """What every tensor prints with (PyTorch's ``PRINT_OPTS``); its attributes, in this order, are
    ``get_printoptions()``.  (A plain class: ``dataclasses`` costs a millisecond of ``import gradviz``.)"""

    def __init__(self):
        self.precision, self.threshold, self.edgeitems, self.linewidth, self.sci_mode = 4, 1000, 3, 80, None


PRINT_OPTS = _PrintOptions()
_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80), "full": (4, math.inf, 3, 80)}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """Set how tensors print, exactly like ``torch.set_printoptions``."""
    if profile is not None:
        (PRINT_OPTS.precision, PRINT_OPTS.threshold,
         PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth) = _PROFILES[profile]
    for key, value in (("precision", precision), ("threshold", threshold),
                       ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is not None:
            setattr(PRINT_OPTS, key, value)
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions():
    return dict(vars(PRINT_OPTS))


@contextlib.contextmanager
def printoptions(**kwargs):
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


class _Formatter:
    """Chooses one width and one style (integer-valued, fixed or scientific) for all elements."""

    def __init__(self, values, floating):
        self.floating = floating
        self.int_mode, self.sci_mode, self.max_width = True, False, 1
        flat = values.reshape(-1)
        p = PRINT_OPTS.precision
        if not floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(str(v)))
            return
        nz = flat[np.isfinite(flat) & (flat != 0)].astype(np.float64)
        if nz.size == 0:
            return
        absv = np.abs(nz)
        lo, hi = absv.min(), absv.max()
        self.int_mode = bool(np.all(nz == np.ceil(nz)))
        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = bool(hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4)
        else:
            self.sci_mode = PRINT_OPTS.sci_mode
        vals = nz.tolist()
        if self.sci_mode:
            self.max_width = max(len(f"{v:.{p}e}") for v in vals)
        elif self.int_mode:
            self.max_width = max(len(f"{v:.0f}") + 1 for v in vals)
        else:
            self.max_width = max(len(f"{v:.{p}f}") for v in vals)
        self.max_width = max(self.max_width, 1)

    def format(self, value):
        p = PRINT_OPTS.precision
        if self.floating:
            if self.sci_mode:
                ret = f"{value:{self.max_width}.{p}e}"
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{value:.{p}f}"
        else:
            ret = str(value)
        return (self.max_width - len(ret)) * " " + ret


def _summarized(a):
    e = PRINT_OPTS.edgeitems
    if a.ndim == 0:
        return a
    if a.ndim == 1:
        return np.concatenate((a[:e], a[-e:])) if a.shape[0] > 2 * e else a
    if not e:
        return np.empty([0] * a.ndim, a.dtype)
    rows = list(range(e)) + list(range(a.shape[0] - e, a.shape[0])) if a.shape[0] > 2 * e \
        else range(a.shape[0])
    return np.stack([_summarized(a[i]) for i in rows])


def _vector_str(a, indent, summarize, fmt):
    element_length = fmt.max_width + 2
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / element_length))
    e = PRINT_OPTS.edgeitems
    if summarize and not e:
        data = ["..."]
    elif summarize and a.shape[0] > 2 * e:
        data = [fmt.format(v) for v in a[:e].tolist()] + [" ..."] + \
               [fmt.format(v) for v in a[-e:].tolist()]
    else:
        data = [fmt.format(v) for v in a.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _nd_str(a, indent, summarize, fmt):
    if a.ndim == 0:
        return fmt.format(a.item())
    if a.ndim == 1:
        return _vector_str(a, indent, summarize, fmt)
    e = PRINT_OPTS.edgeitems
    if summarize and a.shape[0] > 2 * e:
        slices = [_nd_str(a[i], indent + 1, summarize, fmt) for i in range(e)] + ["..."] + \
                 [_nd_str(a[i], indent + 1, summarize, fmt) for i in range(a.shape[0] - e, a.shape[0])]
    else:
        slices = [_nd_str(a[i], indent + 1, summarize, fmt) for i in range(a.shape[0])]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def format_array(a, indent=0):
    """The bracketed body of a tensor's repr: ``[[1., 2.],\\n [3., 4.]]``."""
    if a.size == 0:
        return "[]"
    summarize = a.size > PRINT_OPTS.threshold
    floating = a.dtype.kind == "f"
    if a.dtype == np.bool_:
        a = a.astype(object)  # prints True/False like torch
    fmt = _Formatter(_summarized(a) if summarize else a, floating)
    return _nd_str(a, indent, summarize, fmt)


def _add_suffixes(text, suffixes, indent):
    out = [text]
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        # measured as PyTorch's "dtype=torch.float64", so lines break where PyTorch breaks them
        width = len(suffix.replace("gradviz.", "torch."))
        if last_line_len + width + 2 > PRINT_OPTS.linewidth:
            out.append(",\n" + " " * indent + suffix)
            last_line_len = indent + width
        else:
            out.append(", " + suffix)
            last_line_len += width + 2
    out.append(")")
    return "".join(out)


def tensor_repr(t, prefix="tensor("):
    """``tensor([1., 2.], requires_grad=True)`` -- what ``repr(t)`` shows in PyTorch 2.x."""
    a, indent, suffixes = t._data, len(prefix), []
    default = t.dtype in (get_default_dtype(), int64, _dtype.bool)
    if a.size == 0:
        if a.ndim != 1:
            suffixes.append("size=" + str(tuple(a.shape)))
        if t.dtype is not get_default_dtype():
            suffixes.append("dtype=" + repr(t.dtype))
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append("size=" + str(tuple(a.shape)))
        if not default:
            suffixes.append("dtype=" + repr(t.dtype))
        body = format_array(a, indent)
    try:
        name = None if t.grad_fn is None else type(t.grad_fn).__name__
    except RuntimeError:     # a piece of split/unbind whose base was written since: PyTorch prints on
        name = "Invalid"
    if name is not None:
        suffixes.append(f"grad_fn=<{name}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)
