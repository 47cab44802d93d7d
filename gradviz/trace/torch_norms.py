"""What PyTorch's NativeLayerNormBackward0 does not save as such, worked out from what it does save.

The node keeps the input, ``normalized_shape``, the weight and the bias (None when not given) and
the rows' mean and 1/√(var + eps) (``result1``, ``result2``), but not eps: the op table's entry needs
it, and whether a weight and a bias were given (its kernel takes another loop without them).
"""

import numpy as np

__all__ = ["layer_norm_params"]


def layer_norm_params(x, normalized_shape, rstd, has_weight, has_bias):
    """``has_weight``, ``has_bias`` and ``eps`` for the op table's ``native_layer_norm``: eps is
    1/rstd² − var, the rows' own variance, rounded to two significant digits (1e-05, 0.001...);
    where eps is lost in var's rounding, or a value is freed, it is left out (its default, 1e-5,
    changes no digit there either).

    >>> x = np.array([[1.0, 2.0, 4.0]])
    >>> layer_norm_params(x, (3,), 1 / np.sqrt(x.var() + 1e-3), True, False)
    {'has_weight': True, 'has_bias': False, 'eps': 0.001}
    """
    params = {"has_weight": has_weight, "has_bias": has_bias}
    if x is None or rstd is None or not len(normalized_shape):
        return params
    rows = np.asarray(x, np.float64).reshape(-1, int(np.prod(normalized_shape)))
    var = rows.var(axis=1)
    with np.errstate(all="ignore"):
        eps = np.median(1 / np.asarray(rstd, np.float64).reshape(-1) ** 2 - var)
    if np.isfinite(eps) and eps > 1e-4 * np.median(var + eps):
        params["eps"] = float(f"{eps:.1e}")
    return params
