"""Views: what PyTorch remembers of a tensor that shares another's storage, and when it refuses.

A view (x[0], x.t(), x.view(-1)...) shares its base's storage and version counter, and keeps
``_view = [how it was made, the version its grad_fn describes]``.  Writing into the base or into
any view of it moves the counter on; the next time the view's grad_fn is asked for, PyTorch
no longer trusts the ops that made it and describes the view by sizes and strides on top of
the base's new history (AsStridedBackward0, recorded by
:func:`gradviz.autograd.engine.current_grad_fn`; an in-place op on a view gives its base a
CopySlices node, :func:`gradviz.autograd.engine.record_copy_slices`).  A view made in no_grad()
mode, or by an op with several outputs (split, unbind), may not be rebased: PyTorch refuses, in
these words (:func:`view_error`).
"""

from .grad_mode import _GradMode
from .node import _short_name

__all__ = ["made_view", "view_meta", "requires_grad", "view_error"]


def made_view(view, t, how):
    """``view`` shares ``t``'s storage: its version counter, its base, and how it was made."""
    view._vbox, view._base, view._view = t._vbox, t._base if t._base is not None else t, [how, t._vbox[0]]


def view_meta(t):
    """How a new view of ``t`` is made, as PyTorch's CreationMeta (propagated from ``t``'s own)."""
    made = "inference" if _GradMode.inference else "default" if _GradMode.enabled else "no_grad"
    before = t._view[0] if t._view is not None else "default"
    return before if made == "default" or before == "inference" else made


def requires_grad(t):
    """``t.requires_grad``: its own flag, or for a view its base's."""
    return t._requires_grad or (t._view is not None and t._base._requires_grad)


def view_error(t, indirect=False):
    """PyTorch's refusal to rebase a view made in no_grad() mode or by a multi-output op."""
    how, fn = t._view[0], t._grad_fn
    modified = "its base or another view of its base has been" if indirect else "is being"
    name = "" if fn is None else f"Output {t.__dict__.get('_output_nr', 0)} of {_short_name(fn)}"
    if how in ("no_grad", "inference") or fn is None:
        prefix = f"{name} is a view of a view which was created in" if fn is not None else "A view was created in"
        msg = (f"{prefix} inference mode and {modified} modified inplace in normal mode." if how == "inference" else
               f"{prefix} no_grad mode and {modified} modified inplace with grad mode enabled.")
    else:
        msg = f"{name} is a view and {modified} modified inplace."
    if how == "multi":
        msg += (" This view is the output of a function that returns multiple views. Such functions do not allow "
                "the output views to be modified inplace. You should replace the inplace operation by an "
                "out-of-place one.")
    elif how == "no_grad":
        msg += (" Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your "
                "code by moving both the view and the inplace either both inside the no_grad block (if you "
                "don't want the inplace to be tracked) or both outside (if you want the inplace to be tracked).")
    elif how == "inference":
        msg += (" Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your "
                "code by moving both the view and the inplace either both inside the inference_mode block "
                "(if you don't want the inplace to be tracked) or both outside (if you want the inplace "
                "to be tracked).")
    return msg
