"""Grad modes: whether the ops record a graph (``no_grad``, ``enable_grad``, ``set_grad_enabled``,
``inference_mode``), as ``torch.autograd.grad_mode`` has them, and the widget's own observing passes.

>>> import gradviz as torch
>>> x = torch.ones(2, requires_grad=True)
>>> with torch.no_grad():
...     y = x * 2
>>> y.requires_grad, torch.is_grad_enabled()
(False, True)
"""

import functools

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
           "is_inference_mode_enabled", "set_detect_anomaly", "observing", "is_observing"]


# --- grad mode ----------------------------------------------------------------------------------

class _GradMode:
    enabled = True
    inference = False


def is_grad_enabled():
    """True unless inside ``no_grad()``."""
    return _GradMode.enabled


class _GradModeContext:
    """Both a context manager and a decorator, like ``torch.no_grad``."""

    mode = True

    def __enter__(self):
        self.prev = _GradMode.enabled
        _GradMode.enabled = self.mode

    def __exit__(self, *exc):
        _GradMode.enabled = self.prev

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            prev, _GradMode.enabled = _GradMode.enabled, self.mode
            try:
                return fn(*args, **kwargs)
            finally:
                _GradMode.enabled = prev
        return wrapper


class no_grad(_GradModeContext):
    """Operations inside record no graph (used for weight updates and evaluation)."""
    __module__ = "gradviz.autograd.grad_mode"   # where PyTorch's class lives: type() prints it
    mode = False


class enable_grad(_GradModeContext):
    """Re-enable graph recording inside a ``no_grad`` block."""
    __module__ = "gradviz.autograd.grad_mode"
    mode = True


class inference_mode(_GradModeContext):
    """Like ``no_grad`` (gradviz keeps no separate inference tensors)."""
    __module__ = "gradviz.autograd.grad_mode"

    def __init__(self, mode=True):
        self.mode = not mode

    def __enter__(self):
        super().__enter__()
        self.prev_inference, _GradMode.inference = _GradMode.inference, not self.mode

    def __exit__(self, *exc):
        super().__exit__(*exc)
        _GradMode.inference = self.prev_inference


def is_inference_mode_enabled():
    return _GradMode.inference


class set_grad_enabled(_GradModeContext):
    """``set_grad_enabled(False)``: as a call, a context manager or a decorator."""
    __module__ = "gradviz.autograd.grad_mode"

    def __init__(self, mode):
        self.mode, self.prev = bool(mode), _GradMode.enabled
        _GradMode.enabled = self.mode

    def __enter__(self):
        pass


# --- the picture's own passes ------------------------------------------------------------------

class _Observing:
    on = False


class observing:
    """``with observing():`` -- a backward pass the widget runs to show it, which must leave the
    user's program as it was: no user hook runs (tensor hooks, and every hook kind the engine
    offers: each asks :func:`is_observing` first), no ``.grad`` is written (a leaf's or a retained
    one: the recorder is told the sum it would hold), and a custom ``Function.backward`` reuses the
    result of the user's own pass with the same gradient rather than running again (see
    :mod:`gradviz.autograd`)."""

    def __enter__(self):
        self.prev, _Observing.on = _Observing.on, True
        return self

    def __exit__(self, *exc):
        _Observing.on = self.prev


def is_observing():
    """True inside :class:`observing`: user code (hooks, ``.grad`` writes) must not run."""
    return _Observing.on


def set_detect_anomaly(mode, check_nan=True):
    """Accepted for compatibility; gradviz's messages already name the failing node."""
    return None
