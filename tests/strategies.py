"""Hypothesis strategies: shapes, broadcastable pairs, and inputs for every entry of the op table.

``op_case(op)`` draws ``(arrays, params)`` for one :class:`gradviz.ops.Op`: float64 arrays of
shapes the op accepts, values inside ``op.domain`` (and away from kinks and ties, where a
finite difference would be meaningless), and parameters based on ``op.params``.  Which shapes an
op takes is its table entry's ``inputs`` (``"unary"``, ``"binary"``, ``"reduce_dim"``...): one
branch of :func:`op_case` per kind.  ``dag_recipes()`` draws a random expression graph as data and
``build_dag(lib, recipe)`` builds it in gradviz or in torch.
"""

import math

import numpy as np
from hypothesis import assume, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from gradviz._rules import _median_index
from gradviz.ops import OPS

__all__ = ["SETTINGS", "shapes", "arrays", "broadcastable", "op_case", "KIND_OF", "dag_recipes", "build_dag", "graphs"]

# Modest, so the whole project's suite stays well under its time budget.
SETTINGS = settings(max_examples=25, deadline=None, derandomize=True)

# Where an op's derivative jumps: inputs are kept away from these.
KINKS = {"leaky_relu": (0,), "leaky_relu_": (0,), "elu": (0,), "elu_": (0,), "celu": (0,), "celu_": (0,),
         "hardsigmoid": (-3, 3), "leaky_relu_backward": (0,), "hardtanh_backward": (-1, 1)}

# Which shapes and parameters each op takes: the ``inputs`` of its table entry.
KIND_OF = {key: op.inputs for key, op in OPS.items()}


def shapes(min_dims=0, max_dims=3, min_side=1, max_side=4):
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side)


def arrays(shape, lo=-3.0, hi=3.0, distinct=False):
    """float64 arrays in [lo, hi] without subnormals; ``distinct`` keeps every pair of values well apart (no ties)."""
    if not distinct:
        # no subnormals: a finite difference there measures underflow, not the derivative (prod of
        # [0.5, 5e-324] is 0 in PyTorch too, so its gradient g * prod / x is 0, not 0.5)
        elements = st.floats(lo, hi, allow_nan=False, allow_infinity=False, allow_subnormal=False)
        return hnp.arrays(np.float64, shape, elements=elements)
    n = int(np.prod(shape))
    grid = np.linspace(lo, hi, max(n, 1) * 4)  # steps of at least (hi - lo) / 4n >> eps
    return st.permutations(list(range(len(grid)))).map(
        lambda order: grid[np.array(order[:n], dtype=int)].reshape(shape))


@st.composite
def broadcastable(draw, lo=-3.0, hi=3.0, max_dims=3):
    """Two arrays whose shapes broadcast together (including size-1 and missing axes)."""
    shape_a, shape_b = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=max_dims,
                                                               max_side=3)).input_shapes
    return draw(arrays(shape_a, lo, hi)), draw(arrays(shape_b, lo, hi))


def _away_from(values, points, gap=1e-2):
    return all(np.all(np.abs(values - p) > gap) for p in points if p is not None)


@st.composite
def op_case(draw, op):
    """``(arrays, params)`` for ``op``: inputs inside its domain, parameters it accepts."""
    lo, hi = op.domain
    kind = KIND_OF[op.key]
    params = dict(op.params)
    if kind == "unary":
        a = draw(arrays(draw(shapes()), lo, hi))
        if op.key == "clamp":  # keep away from the kinks at lo and hi
            a = np.where(np.abs(np.abs(a) - 1.0) < 0.05, a * 0.5, a)
            params = {"lo": draw(st.sampled_from([-1.0, None])), "hi": 1.0}
        if op.key in ("clamp_min", "clamp_max"):  # keep away from the kink at the bound (±0.5)
            a = np.where(np.abs(np.abs(a) - 0.5) < 0.05, a * 0.5, a)
        if op.key == "pow":
            params = {"n": draw(st.sampled_from([0, 1, 2, 3, -1, 0.5, 2.5]))}
        if op.key in KINKS:      # the activations' kinks (a finite difference across one measures neither side)
            for k in KINKS[op.key]:
                a = np.where(np.abs(a - k) < 0.05, a + 0.1, a)
        if op.key in ("leaky_relu", "leaky_relu_"):
            params = {"negative_slope": draw(st.sampled_from([0.01, 0.2, 1.5]))}
        if op.key in ("elu", "elu_"):      # elu, and selu's constants
            params = draw(st.sampled_from([{"alpha": 1.0, "scale": 1, "input_scale": 1}, {"alpha": 0.5, "scale": 1, "input_scale": 1},
                                           {"alpha": 1.6732632423543772, "scale": 1.0507009873554805, "input_scale": 1}]))
        if op.key in ("celu", "celu_"):
            params = {"alpha": draw(st.sampled_from([1.0, 0.5, 2.0]))}
        if op.key == "softplus":
            params = draw(st.sampled_from([{"beta": 1, "threshold": 20}, {"beta": 2.0, "threshold": 2.0}]))
            a = np.where(np.abs(a * params["beta"] - params["threshold"]) < 0.05, a - 0.1, a)
        if op.key == "hardtanh":
            params = draw(st.sampled_from([{"min_val": -1.0, "max_val": 1.0}, {"min_val": 0, "max_val": 6}]))
            for k in params.values():
                a = np.where(np.abs(a - k) < 0.05, a + 0.1, a)
        return [a], params
    if kind == "binary":
        if op.key == "lerp":      # both of the kernel's branches: from the start (|w| < 0.5) and from the end
            params = {"weight": draw(st.sampled_from([0.3, 0.7, -0.2, 1.5]))}
        if op.key in ("add", "sub"):
            params = {"alpha": draw(st.sampled_from([1, 2.5, -1]))}
        a, b = draw(broadcastable(lo, hi))
        if op.key in ("clamp_min_tensor", "clamp_max_tensor"):  # x on odd eighths, the bound on quarters: no ties
            a, b = np.asarray(np.round(a * 4) / 4 + 0.125), np.asarray(np.round(b * 4) / 4)
        if op.key in KINKS:      # (an activation's gradient: its input b away from the kinks)
            for k in KINKS[op.key]:
                b = np.where(np.abs(b - k) < 0.05, b + 0.1, b)
        if op.key in ("maximum", "minimum"):  # on a grid: exact ties (half each) or far apart
            a, b = np.asarray(np.round(a * 4) / 4), np.asarray(np.round(b * 4) / 4)
        return [a, b], params
    if kind == "reduce_all":
        return [draw(arrays(draw(shapes()), lo, hi, distinct=op.key in ("amax", "amin", "median")))], params
    if kind == "reduce_dim":
        shape = draw(shapes(min_dims=1))
        a = draw(arrays(shape, lo, hi, distinct=op.key in ("max_dim", "min_dim", "median_dim", "amax_dims",
                                                            "amin_dims")))
        dim = draw(st.integers(0, len(shape) - 1))
        keepdim = draw(st.booleans())
        if op.key in ("sum_dim", "mean_dim", "amax_dims", "amin_dims"):
            dims = draw(st.sets(st.integers(0, len(shape) - 1), min_size=1))
            return [a], {"dim": tuple(sorted(dims)), "keepdim": keepdim}
        index = {"max_dim": lambda: np.argmax(a, axis=dim, keepdims=True),          # what the op keeps
                 "min_dim": lambda: np.argmin(a, axis=dim, keepdims=True),
                 "median_dim": lambda: _median_index(a, dim)}.get(op.key)
        return [a], {"dim": dim, "keepdim": keepdim, **({"index": index()} if index else {})}
    if kind == "norm":
        shape = draw(shapes(min_dims=1))
        a = draw(arrays(shape, lo, hi, distinct=True))          # no ties for p = inf
        a = a * np.where(draw(arrays(shape, -1, 1)) < 0, -1, 1)  # both signs, none near 0
        params = {"ord": draw(st.sampled_from([2, 1, 3, 1.5, 0.5, np.inf, -np.inf])), "dim": None, "keepdim": False}
        if draw(st.booleans()):
            params.update(dim=(draw(st.integers(0, len(shape) - 1)),), keepdim=draw(st.booleans()))
        return [a], params
    if kind == "masked_fill":
        a = draw(arrays(draw(shapes()), lo, hi))
        mask_shape = tuple(draw(st.sampled_from([1, n])) for n in a.shape[draw(st.integers(0, a.ndim)):])
        mask = draw(hnp.arrays(np.bool_, mask_shape))  # broadcasts to a's shape, never beyond
        if op.key == "masked_select":
            return [a], {"mask": mask}
        return [a], {"mask": mask, "value": draw(st.sampled_from([0.0, -1.5]))}
    if kind == "flip":
        shape = draw(shapes(min_dims=1))
        dims = tuple(sorted(draw(st.sets(st.integers(0, len(shape) - 1), min_size=1))))
        return [draw(arrays(shape, lo, hi))], {"dims": dims}
    if kind == "tri":
        return [draw(arrays(draw(shapes(min_dims=2, max_dims=2)), lo, hi))], {"diagonal": draw(st.integers(-2, 2))}
    if kind == "gather":
        shape = draw(shapes(min_dims=1))
        dim = draw(st.integers(0, len(shape) - 1))
        a = draw(arrays(shape, lo, hi))
        if op.key == "index_select":
            index = np.array(draw(st.lists(st.integers(0, shape[dim] - 1), min_size=1, max_size=4)))
        else:
            index_shape = tuple(draw(st.integers(1, 4)) if d == dim else n for d, n in enumerate(shape))
            index = draw(hnp.arrays(np.int64, index_shape, elements=st.integers(0, shape[dim] - 1)))
        return [a], {"dim": dim, "index": index}
    if kind == "sort":
        shape = draw(shapes(min_dims=1))
        return [draw(arrays(shape, lo, hi, distinct=True))], {"dim": draw(st.integers(0, len(shape) - 1)),
                                                              "descending": draw(st.booleans())}
    if kind == "topk":   # distinct values: the gradient's way back is then unique
        shape = draw(shapes(min_dims=1))
        dim = draw(st.integers(0, len(shape) - 1))
        a = draw(arrays(shape, lo, hi, distinct=True))
        k = draw(st.integers(0, shape[dim]))
        largest = draw(st.booleans())
        order = np.argsort(-a if largest else a, axis=dim)
        return [a], {"dim": dim, "index": np.take(order, np.arange(k), axis=dim)}
    if kind == "steps":  # away from the jumps (integers and halves), where they are flat
        a = draw(arrays(draw(shapes()), lo, hi))
        return [np.where(np.abs(a * 2 - np.round(a * 2)) < 0.05, a + 0.1, a)], params
    if kind == "diag":
        offset = draw(st.integers(-2, 2))
        if op.key == "diagonal":
            shape = draw(shapes(min_dims=2, max_dims=2))
            offset = max(min(offset, shape[1] - 1), 1 - shape[0])
        else:
            shape = draw(shapes(min_dims=1, max_dims=1))
        return [draw(arrays(shape, lo, hi))], {"offset": offset}
    if kind == "softmax":
        shape = draw(shapes(min_dims=1))
        return [draw(arrays(shape, lo, hi))], {"dim": draw(st.integers(-len(shape), len(shape) - 1))}
    if kind == "repeat":
        shape = draw(shapes(max_dims=2, max_side=3))
        sizes = tuple(draw(st.integers(1, 3)) for _ in range(len(shape) + draw(st.integers(0, 1))))
        return [draw(arrays(shape, lo, hi))], {"sizes": sizes}
    if kind == "moments":
        shape = draw(shapes(min_dims=1))
        a = draw(arrays(shape, lo, hi, distinct=True))  # never all equal: σ > 0
        params = {"correction": draw(st.sampled_from([0, 1]))}
        dims = draw(st.none() | st.sets(st.integers(0, len(shape) - 1), min_size=1))
        n = a.size if dims is None else int(np.prod([shape[d] for d in dims]))
        assume(n >= 2)  # σ of a single value is 0, where the derivative does not exist
        if dims is not None:
            params.update(dim=tuple(sorted(dims)), keepdim=draw(st.booleans()))
        return [a], params
    if kind == "matmul":
        m, k, n, b = (draw(st.integers(1, 4)) for _ in range(4))
        if op.key == "addmm":  # the bias: a row (as nn.Linear passes it), a column, or a full matrix
            bias = draw(st.sampled_from([(n,), (1, n), (m, 1), (m, n), ()]))
            return [draw(arrays(s, lo, hi)) for s in (bias, (m, k), (k, n))], params
        shape_a, shape_b = {"mm": ((m, k), (k, n)), "mv": ((m, k), (k,)), "dot": ((k,), (k,)),
                            "bmm": ((b, m, k), (b, k, n))}[op.key]
        return [draw(arrays(shape_a, lo, hi)), draw(arrays(shape_b, lo, hi))], params
    if kind in ("linalg_square", "linalg_solve"):   # a well-conditioned matrix: the identity times 3, plus noise
        n = draw(st.integers(1, 4))
        a = draw(arrays((n, n), -1.0, 1.0)) + 3 * np.eye(n)
        if kind == "linalg_square":
            return [a], params
        return [a, draw(arrays(draw(st.sampled_from([(n,), (n, draw(st.integers(1, 3)))])), lo, hi))], params
    if kind == "loss":  # same shapes: nn.functional broadcasts the two before the op sees them
        shape = draw(shapes())
        reduction = draw(st.sampled_from(["mean", "sum", "none"]))
        return [draw(arrays(shape, lo, hi)), draw(arrays(shape, lo, hi))], {"reduction": reduction}
    if kind == "loss_backward":  # mse_loss's gradient: the upstream gradient (one number unless 'none'), a, b
        shape = draw(shapes())
        reduction = draw(st.sampled_from(["mean", "sum", "none"]))
        g = draw(arrays(shape if reduction == "none" else (), lo, hi))
        return [g, draw(arrays(shape, lo, hi)), draw(arrays(shape, lo, hi))], {"reduction": reduction}
    if kind == "nll":  # scores of rows (or one row), a class per row, sometimes weights and an ignored class
        n, c = draw(st.integers(1, 4)), draw(st.integers(2, 4))
        one_row = draw(st.booleans()) and op.key != "nll_loss2d"
        pixels = (draw(st.integers(1, 3)), draw(st.integers(1, 3))) if op.key == "nll_loss2d" else ()
        target = np.array(draw(st.lists(st.integers(0, c - 1), min_size=n * math.prod(pixels),
                                        max_size=n * math.prod(pixels)))).reshape((n,) + pixels)
        params = {"target": target[0] if one_row else target,
                  "reduction": draw(st.sampled_from(["mean", "sum", "none"]))}
        if draw(st.booleans()):
            params["weight"] = draw(arrays((c,), 0.5, 2.0))
        if draw(st.booleans()) and not one_row:
            params["ignore_index"] = int(target.flat[0])
            assume(params["reduction"] != "mean" or (target != target.flat[0]).any())
        return [draw(arrays((c,) if one_row else (n, c) + pixels, lo, hi))], params
    if kind == "bce":  # probabilities (or scores) and targets in [0, 1], optional weights
        shape = draw(shapes(min_dims=1))
        params = {"reduction": draw(st.sampled_from(["mean", "sum", "none"]))}
        if draw(st.booleans()):
            params["weight"] = draw(arrays(shape, 0.5, 2.0))
        if op.key == "binary_cross_entropy_with_logits" and draw(st.booleans()):
            params["pos_weight"] = draw(arrays(shape, 0.5, 3.0))
        return [draw(arrays(shape, lo, hi)), draw(arrays(shape, 0.05, 0.95))], params   # away from 0 and 1: differences
    if kind == "embedding":  # a table and the rows looked up (some twice), maybe a padding row
        rows, dim = draw(st.integers(1, 4)), draw(st.integers(1, 3))
        indices = np.array(draw(st.lists(st.integers(0, rows - 1), min_size=1, max_size=5)))
        params = {"indices": indices.reshape(draw(st.sampled_from([(-1,), (1, -1), ()]))) if indices.size == 1
                  else indices}
        unused = sorted(set(range(rows)) - set(indices.tolist()))
        if unused and draw(st.booleans()):   # a padding row that is looked up gets no gradient by design,
            params["padding_idx"] = draw(st.sampled_from(unused))   # which differences cannot see
        return [draw(arrays((rows, dim), lo, hi))], params
    if kind == "batch_norm":  # (N, C) or (N, C, L), the batch's statistics or running ones
        shape = draw(st.sampled_from([(3, 2), (4, 1), (2, 3, 2), (5, 2)]))
        x = draw(arrays(shape, lo, hi, distinct=True))
        params = {"training": draw(st.booleans()), "eps": 1e-5}
        if not params["training"]:
            params.update(running_mean=draw(arrays((shape[1],), -1.0, 1.0)),
                          running_var=draw(arrays((shape[1],), 0.5, 2.0)))
        return [x, draw(arrays((shape[1],), 0.5, 2.0)), draw(arrays((shape[1],), lo, hi))], params
    if kind == "layer_norm":  # rows over the last one or two dimensions; weight and bias given or not
        shape = draw(st.sampled_from([(3, 2), (2, 4), (2, 3, 2), (1, 5), (2, 2, 3)]))
        normalized = shape[-draw(st.integers(1, min(2, len(shape) - 1))):]
        x = draw(arrays(shape, lo, hi, distinct=True))     # never a row of equal values: σ > 0
        params = {"normalized_shape": normalized, "eps": 1e-5, "has_weight": draw(st.booleans()),
                  "has_bias": draw(st.booleans())}
        return [x, draw(arrays(normalized, 0.5, 2.0)), draw(arrays(normalized, lo, hi))], params
    if kind == "rounded":  # a / b away from whole numbers, where //, % and fmod jump
        shape = draw(shapes())
        b = draw(arrays(shape, 1.0, 2.0))
        whole = np.array(draw(st.lists(st.integers(-2, 2), min_size=b.size, max_size=b.size))).reshape(shape)
        a = np.array(b * (whole + draw(arrays(shape, 0.1, 0.9))), np.float64)   # 0-d stays an array
        params = {"rounding_mode": draw(st.sampled_from(["floor", "trunc"]))} if op.key == "div_rounding" else {}
        return [a, b], params
    if kind == "bernoulli":  # probabilities, and a draw of the same shape
        shape = draw(shapes())
        sample = np.array(draw(st.lists(st.sampled_from([0.0, 1.0]), min_size=math.prod(shape),
                                        max_size=math.prod(shape)))).reshape(shape)
        return [draw(arrays(shape, 0.05, 0.95))], {"sample": sample}
    if kind == "reshape":
        shape = draw(shapes())
        a = draw(arrays(shape, lo, hi))
        size = int(np.prod(shape))
        target = draw(st.sampled_from([(-1,), (size,), (1, size), (size, 1), (1, -1)]))
        return [a], {"shape": target}
    if kind == "expand":
        shape = draw(shapes(max_side=3))
        target = tuple(draw(st.integers(1, 3)) if n == 1 else n for n in shape)
        target = (draw(st.integers(1, 3)),) * draw(st.integers(0, 1)) + target
        return [draw(arrays(shape, lo, hi))], {"shape": target}
    if kind == "permute":
        shape = draw(shapes())
        dims = tuple(draw(st.permutations(list(range(len(shape))))))
        return [draw(arrays(shape, lo, hi))], {"dims": dims}
    if kind == "transpose":
        shape = draw(shapes(min_dims=2, max_dims=2)) if op.key in ("t", "t_") else draw(shapes(min_dims=1))
        d0 = draw(st.integers(0, len(shape) - 1))
        d1 = draw(st.integers(0, len(shape) - 1))
        return [draw(arrays(shape, lo, hi))], {"d0": 0, "d1": 1} if op.key in ("t", "t_") else {"d0": d0, "d1": d1}
    if kind == "unsqueeze":
        shape = draw(shapes())
        return [draw(arrays(shape, lo, hi))], {"dim": draw(st.integers(0, len(shape)))}
    if kind == "squeeze":
        shape = list(draw(shapes(min_dims=1)))
        d = draw(st.integers(0, len(shape) - 1))
        shape[d] = 1
        a = draw(arrays(tuple(shape), lo, hi))
        if op.key in ("squeeze_dims", "squeeze_dims_"):     # a tuple of dims, one of which may have another size (it stays)
            return [a], {"dim": tuple(sorted({d, draw(st.integers(0, len(shape) - 1))}))}
        return [a], ({} if op.key in ("squeeze", "squeeze_") else {"dim": d})
    if kind == "select":
        shape = draw(shapes(min_dims=1))
        dim = draw(st.integers(0, len(shape) - 1))
        return [draw(arrays(shape, lo, hi))], {"dim": dim, "index": draw(st.integers(0, shape[dim] - 1))}
    if kind == "slice":
        shape = draw(shapes(min_dims=1))
        dim = draw(st.integers(0, len(shape) - 1))
        start = draw(st.integers(0, shape[dim] - 1))
        stop = draw(st.integers(start + 1, shape[dim]))
        step = draw(st.integers(1, 2))
        return [draw(arrays(shape, lo, hi))], {"dim": dim, "s": slice(start, stop, step)}
    if kind == "softmax_backward":  # softmax's or log_softmax's gradient: an upstream gradient and the output
        (a,), params = draw(op_case(OPS["softmax"]))
        y = OPS[op.key.removesuffix("_backward")].forward(a, **params)
        return [draw(arrays(a.shape, lo, hi)), y], params
    if kind == "nll_backward":  # nll_loss's gradient: the upstream gradient (nll_loss's output's shape)
        (a,), params = draw(op_case(OPS["nll_loss"]))
        out = np.shape(OPS["nll_loss"].forward(a, **params))
        return [draw(arrays(out, lo, hi)), a], params
    if kind in ("select_backward", "slice_backward"):  # a select's or slice's gradient, put back in place
        (a,), params = draw(op_case(OPS[kind.removesuffix("_backward")]))
        piece = OPS[kind.removesuffix("_backward")].forward(a, **params)
        return [draw(arrays(piece.shape, lo, hi))], {"shape": a.shape, **params}
    if kind == "split":  # split into pieces of the given sizes (some empty), or unbind
        shape = draw(shapes(min_dims=1))
        dim = draw(st.integers(0, len(shape) - 1))
        params = {"dim": dim}
        if op.key != "unbind":
            n = shape[dim]
            cuts = [0] + sorted(draw(st.lists(st.integers(0, n), max_size=3))) + [n]
            params["sizes"] = tuple(b - a for a, b in zip(cuts, cuts[1:]))
        return [draw(arrays(shape, lo, hi))], params
    if kind == "index":
        shape = draw(shapes(min_dims=1))
        idx = draw(st.lists(st.integers(0, shape[0] - 1), min_size=1, max_size=5))  # repeats add up
        return [draw(arrays(shape, lo, hi))], {"key": (np.array(idx),)}
    if kind == "join":
        shape = list(draw(shapes(min_dims=1)))
        n = draw(st.integers(1, 3))
        if op.key == "cat":
            dim = draw(st.integers(0, len(shape) - 1))
            sizes = [draw(st.integers(1, 3)) for _ in range(n)]
            shapes_ = [tuple(shape[:dim] + [s] + shape[dim + 1:]) for s in sizes]
        else:
            dim = draw(st.integers(0, len(shape)))
            shapes_ = [tuple(shape)] * n
        return [draw(arrays(s, lo, hi)) for s in shapes_], {"dim": dim}
    if kind == "fill_value":   # a tensor and a 0-d value to fill it with
        return [draw(arrays(draw(shapes()), lo, hi)), draw(arrays((), lo, hi))], params
    if kind == "copy":         # a tensor and a source that broadcasts into its shape
        shape = draw(shapes())
        source = tuple(draw(st.sampled_from([1, n])) for n in shape[draw(st.integers(0, len(shape))):])
        return [draw(arrays(shape, lo, hi)), draw(arrays(source, lo, hi))], params
    if kind == "ternary":    # addcmul, addcdiv, lerp with a tensor weight: three tensors that broadcast
        a, b = draw(broadcastable(lo, hi))
        c = draw(arrays(draw(st.sampled_from([a.shape, b.shape, ()])), lo, hi))
        if op.key == "clamp_tensor":  # x on odd eighths, min on quarters, max a sixteenth off: no two equal (kinks)
            a, b, c = (np.asarray(np.round(x * 4) / 4 + d) for x, d in ((a, 0.125), (b, 0.0), (c, 0.0625)))
        if op.key == "addcdiv":   # a divisor away from 0
            c = np.where(np.abs(c) < 0.5, np.copysign(1.0, c) + c, c)
        if "value" in params:
            params = {"value": draw(st.sampled_from([1, 2.0, -0.5]))}
        return [a, b, c], params
    if kind == "where":
        a, b = draw(broadcastable(lo, hi))
        out_shape = np.broadcast_shapes(a.shape, b.shape)
        cond = draw(hnp.arrays(np.bool_, out_shape))
        return [a, b], {"cond": cond}
    if kind == "index_put":
        shape = draw(shapes(min_dims=1))
        i = draw(st.integers(0, shape[0] - 1))
        return [draw(arrays(shape, lo, hi)), draw(arrays(shape[1:], lo, hi))], {"key": (i,)}
    if kind == "as_strided":   # any sizes and strides (0: elements read twice) inside the tensor
        shape = draw(shapes(min_dims=1))
        n = int(np.prod(shape))
        size = tuple(draw(st.lists(st.integers(1, 3), max_size=3)))
        stride = tuple(draw(st.integers(0, 3)) for _ in size)
        reach = sum((k - 1) * s for k, s in zip(size, stride))
        assume(reach < n)
        return [draw(arrays(shape, lo, hi))], {"size": size, "stride": stride,
                                                "storage_offset": draw(st.integers(0, n - 1 - reach))}
    if kind == "copy_slices":  # an in-place op on a row, a column or a corner of a matrix
        rows, cols = draw(st.integers(1, 4)), draw(st.integers(1, 4))
        i, j = draw(st.integers(0, rows - 1)), draw(st.integers(0, cols - 1))
        size, stride, offset = draw(st.sampled_from([((cols,), (1,), i * cols), ((rows,), (cols,), j),
                                                     ((rows - i, cols - j), (cols, 1), i * cols + j)]))
        inner = OPS[draw(st.sampled_from(["mul", "add", "exp", "copy", "zero", "tanh"]))]
        others = [draw(arrays(size, lo, hi)) for _ in inner.vjps[1:]]
        return [draw(arrays((rows, cols), lo, hi))] + others, {"inner": inner, "inner_params": {}, "size": size,
                                                                "stride": stride, "storage_offset": offset}
    raise AssertionError(f"no strategy for op kind {kind!r}")


# --- random expression graphs, built in any engine from one recipe ---------------------------------

DAG_UNARY = ["exp", "tanh", "sin", "sigmoid", "square", "neg"]
DAG_BINARY = {"add": lambda a, b: a + b, "mul": lambda a, b: a * b, "sub": lambda a, b: a - b,
              "div": lambda a, b: a / b}


@st.composite
def dag_recipes(draw, broadcast=True):
    """A random expression DAG as plain data (so gradviz and torch can build the same one): ``n``
    elements per leaf, ``k`` leaves that require grad (plus, with ``broadcast``, maybe a 0-d one), a
    data tensor, literals, intermediates reused, and which intermediates also feed the root."""
    n, k = draw(st.sampled_from([1, 2, 3])), draw(st.integers(1, 3))
    seed, scalar = draw(st.integers(0, 2 ** 16)), broadcast and draw(st.booleans())
    steps, pool = [], k + 1 + scalar
    for _ in range(draw(st.integers(1, 7))):
        if draw(st.booleans()):
            steps.append(("unary", draw(st.integers(0, pool - 1)), draw(st.sampled_from(DAG_UNARY))))
        else:
            b = draw(st.one_of(st.integers(0, pool - 1), st.sampled_from([2.0, 0.5])))
            steps.append(("binary", draw(st.integers(0, pool - 1)), draw(st.sampled_from(sorted(DAG_BINARY))), b))
        pool += 1
    fan = [draw(st.booleans()) for _ in range(pool)]
    return n, k, scalar, seed, steps, fan


def build_dag(lib, recipe, constants=True):
    """``(root, names)``: the recipe's graph in ``lib`` (gradviz or torch). Without ``constants``, an
    intermediate that does not require grad is added to a leaf (PyTorch records nothing of a tensor
    made without grad, so a comparison with real torch keeps such tensors out)."""
    n, k, scalar, seed, steps, fan = recipe
    rng = np.random.default_rng(seed)
    names = {f"p{i}": lib.tensor(rng.uniform(0.5, 1.5, n).astype(np.float32).tolist(), requires_grad=True)
             for i in range(k)}
    if scalar:                                          # broadcast against the others
        names["s"] = lib.tensor(float(np.float32(rng.uniform(0.5, 1.5))), requires_grad=True)
    names["d"] = lib.tensor(rng.uniform(0.5, 1.5, n).astype(np.float32).tolist())
    pool = list(names.values())
    for s in steps:
        a = pool[s[1]]
        if s[0] == "unary":
            v = -a if s[2] == "neg" else getattr(a, s[2])()
        else:
            b = s[3] if isinstance(s[3], float) else pool[s[3]]
            if s[2] == "div" and not isinstance(b, float):
                b = b * b + 1.0                         # keep away from 0
            v = DAG_BINARY[s[2]](a, b)
        if not constants and not v.requires_grad:
            v = v + pool[0]
        pool.append(v)
    out = pool[-1]
    for v, more in zip(pool[len(names):-1], fan):
        if more:
            out = out + v                               # more fan-out, more paths
    return (out.sum() if out.ndim else out * 1.0), names


def graphs():
    """``(root, names)``: a :func:`dag_recipes` graph built in gradviz."""
    import gradviz
    return dag_recipes().map(lambda recipe: build_dag(gradviz, recipe))
