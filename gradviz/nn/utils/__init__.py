"""``torch.nn.utils``: clipping gradients (:mod:`gradviz.nn.utils.clip_grad`)."""

from . import clip_grad
from .clip_grad import (clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_,
                        get_total_norm)

__all__ = ["clip_grad", "clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_",
           "get_total_norm"]
