"""Differential fuzzing against PyTorch: seeded random expression graphs, built step by step in
gradviz and in torch, compared value by value, node by node and error by error.

A graph starts from a few leaves (some requiring grad, some not; broadcastable shapes) and grows
by random steps over the op table's methods: elementwise functions, arithmetic with broadcasting
and with Python numbers, reductions along dims, views (reshape, transpose, indexing, expand...),
matrix products, joins, ``where`` and in-place writes (into views too, and some views and
writes made inside ``no_grad()``).  A tensor may be used by several steps (a DAG).  The root is
summed, averaged or sent ``backward(gradient=...)``.  For each graph:

* every step raises in both libraries (the same exception type) or in neither;
* every tensor has the same shape, dtype, values (float32 tolerance), strides (but for dims of
  size 1) and ``grad_fn`` name -- and every unary op, ``clone`` and ``to`` also runs on inputs
  laid out otherwise (transposed, sliced, expanded...), then is viewed, reshaped or added to;
* the graph reachable through ``next_functions`` from the root has the same structure;
* ``backward()`` raises alike, or fills the same leaves with the same gradients.

``tests/test_fuzz_torch.py`` runs a few hundred graphs; ``benchmarks/fuzz.py`` runs thousands.

One thing is never generated, because torch itself has no defined answer: ``median(dim)`` of a
tensor with an expanded dim (stride 0, size > 1).  torch 2.13's CPU kernel then returns numbers
read from uninitialised memory (``torch.tensor([1., 2.]).expand(4, 2).median(0)`` gives
``[4.6e-41, -2.5e-17]`` in one run and ``[1., 2.]`` in another), so such a step takes the median
of all elements instead (which torch computes correctly).  Found as seed 1442.
"""

import numpy as np

UNARY = ("exp log sqrt abs sin cos tanh sigmoid relu neg reciprocal log1p expm1 rsqrt tan atan asin acos "
         "sinh cosh log2 log10 erf square floor ceil round trunc sign").split()
BINARY = ("add sub mul div maximum minimum pow").split()
SCALAR = ("x + c", "c + x", "x - c", "c - x", "x * c", "c * x", "x / c", "c / x", "x ** 2", "x ** 0.5", "2 ** x",
          "x ** -1", "x ** 3")
REDUCE = ("sum", "mean", "prod", "max", "min", "amax", "amin", "median", "var", "std", "norm", "logsumexp",
          "softmax", "log_softmax", "cumsum")
VIEWS = ("reshape", "view", "flatten", "t", "transpose", "permute", "unsqueeze", "squeeze", "expand", "flip",
         "index0", "slice", "newaxis", "narrow", "select", "split", "unbind", "repeat", "contiguous", "clone",
         "detach", "mT", "T")
INPLACE = ("add_", "mul_", "sub_", "div_", "exp_", "tanh_", "sigmoid_", "relu_", "clamp_", "neg_", "setitem",
           "zero_")
OTHER = ("matmul", "cat", "stack", "where", "clamp")


def _shape(rng, max_dims=3):
    return tuple(int(n) for n in rng.integers(1, 4, size=int(rng.integers(0, max_dims + 1))))


def _broadcast_partner(rng, shape):
    """A shape that broadcasts with ``shape``: some sides set to 1, some leading dims dropped or added."""
    out = [1 if rng.random() < 0.3 else n for n in shape]
    if out and rng.random() < 0.3:
        out = out[int(rng.integers(0, len(out) + 1)):]
    if rng.random() < 0.15:
        out = [int(rng.integers(1, 3))] + out
    return tuple(out)


class Graph:
    """One random graph: the recipe (plain data, the same for both libraries) and what torch made of it."""

    def __init__(self, seed, steps=None):
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.recipe = []
        self.steps = int(self.rng.integers(3, 12)) if steps is None else steps
        # choices added later draw from a stream of their own, so every older seed keeps its graph
        self.extra = np.random.default_rng((seed, 1))


def generate(seed, torch):
    """A recipe for one graph, grown by running it in torch (to know each tensor's shape)."""
    g = Graph(seed)
    rng = g.rng
    pool = []
    for _ in range(int(rng.integers(1, 4))):
        base = pool[0].shape if pool and rng.random() < 0.6 else _shape(rng)
        shape = _broadcast_partner(rng, tuple(base)) if pool else tuple(base)
        _add_leaf(g, pool, torch, shape)
    for _ in range(g.steps):
        step = _random_step(g, pool, torch)
        if step is None:
            continue
        g.recipe.append(step)
        pool.append(run_step(torch, pool, step)[0])
    live = [i for i, t in enumerate(pool) if t is not None and isinstance(t, torch.Tensor)]
    root = live[-1] if live else 0
    how = ("sum", "mean", "gradient", "direct")[int(rng.integers(0, 4))]
    g.root = (root, how, int(rng.integers(0, 2 ** 31)))
    _layout_steps(g, pool, torch)     # (after the root is chosen: every older seed keeps its graph)
    return g


LAYOUTS = ("T", "permute", "slice", "slice_T", "expand", "flip_T")
FOLLOW = (None, None, "view", "reshape", "contiguous", "add")


def _layout_steps(g, pool, torch):
    """A few elementwise ops on a tensor laid out otherwise (transposed, permuted, sliced,
    expanded): PyTorch's result keeps its input's layout, so a ``view`` of it fails or not as
    torch's does, and ``reshape`` copies or not.  Drawn from ``g.extra``."""
    ops = UNARY + ["clone", "double", "float"]
    for _ in range(int(g.extra.integers(1, 4))):
        i = _pick(g.extra, pool, torch, lambda t: t.ndim >= 2)
        if i is None:
            return
        step = ("layout", str(g.extra.choice(ops)), i, str(g.extra.choice(LAYOUTS)),
                FOLLOW[int(g.extra.integers(0, len(FOLLOW)))])
        g.recipe.append(step)
        pool.append(run_step(torch, pool, step)[0])


def _laid_out(x, how):
    if how == "T":
        return x.mT
    if how == "permute":
        return x.permute(*reversed(range(x.ndim)))
    if how == "slice":
        return x[..., ::2]
    if how == "slice_T":
        return x[..., ::2].mT
    if how == "expand":
        return x[..., :1].expand(*x.shape)
    return x.flip(-1).mT


def _add_leaf(g, pool, torch, shape):
    rng = g.rng
    data = rng.standard_normal(shape).astype(np.float32)
    if rng.random() < 0.3:
        data = np.abs(data) + np.float32(0.5)       # inside log's and sqrt's domain
    dtype = "float64" if rng.random() < 0.1 else "float32"
    step = ("leaf", data, bool(rng.random() < 0.7), dtype)
    g.recipe.append(step)
    pool.append(run_step(torch, pool, step)[0])


def _pick(rng, pool, torch, pred=lambda t: True):
    idx = [i for i, t in enumerate(pool) if isinstance(t, torch.Tensor) and t.dtype.is_floating_point and pred(t)]
    return int(idx[int(rng.integers(0, len(idx)))]) if idx else None


def _random_step(g, pool, torch):
    rng = g.rng
    kind = rng.choice(["unary", "binary", "scalar", "reduce", "view", "inplace", "other", "leaf"],
                      p=[0.17, 0.17, 0.12, 0.15, 0.2, 0.08, 0.09, 0.02])
    i = _pick(rng, pool, torch)
    if i is None or kind == "leaf":
        _add_leaf(g, pool, torch, _shape(rng))
        return None
    x = pool[i]
    nd = x.ndim
    dim = int(rng.integers(-max(nd, 1), max(nd, 1)))
    if kind == "unary":
        return ("unary", str(rng.choice(UNARY)), i)
    if kind == "scalar":
        return ("scalar", str(rng.choice(SCALAR)), i, float(rng.choice([2.0, -1.5, 0.5, 3])))
    if kind == "binary":
        j = _pick(rng, pool, torch, lambda t: _broadcasts(t.shape, x.shape)) if rng.random() < 0.6 else None
        if j is None:
            _add_leaf(g, pool, torch, _broadcast_partner(rng, tuple(x.shape)))
            j = len(pool) - 1
        return ("binary", str(rng.choice(BINARY)), i, j)
    if kind == "reduce":
        name = str(rng.choice(REDUCE))
        step = ("reduce", name, i, dim if rng.random() < 0.75 else None, bool(rng.random() < 0.3))
        if name == "median" and any(st == 0 and n > 1 for st, n in zip(x.stride(), x.shape)):
            step = step[:3] + (None,) + step[4:]    # see the module's docstring: torch's values are undefined
        return step
    if kind == "view":
        name = str(rng.choice(VIEWS))
        other = int(rng.integers(-max(nd, 1), max(nd, 1)))
        perm = [int(v) for v in rng.permutation(nd)]
        return ("view", name, i, dim, other, perm, int(rng.integers(1, 3)), bool(g.extra.random() < 0.1))
    if kind == "inplace":
        j = _pick(rng, pool, torch, lambda t: _broadcasts(t.shape, x.shape) and
                  np.broadcast_shapes(tuple(t.shape), tuple(x.shape)) == tuple(x.shape))
        return ("inplace", str(rng.choice(INPLACE)), i, j, bool(rng.random() < 0.7), bool(g.extra.random() < 0.1))
    name = str(rng.choice(OTHER))
    if name == "matmul":
        n = int(rng.integers(1, 4))
        shape = tuple(x.shape[:-2]) + ((x.shape[-1], n) if nd >= 2 else (x.shape[-1], n) if nd == 1 else (n,))
        if rng.random() < 0.3 and nd >= 1:
            shape = (x.shape[-1],)                               # a vector on the right
        if rng.random() < 0.2 and nd >= 1:
            shape = (int(rng.integers(1, 3)),) + shape           # a batch on the right only
        if rng.random() < 0.1:
            shape = (shape[0] + 1,) + shape[1:]                  # sizes that do not fit
        _add_leaf(g, pool, torch, shape)
        return ("other", "matmul", i, len(pool) - 1)
    if name in ("cat", "stack"):
        j = _pick(rng, pool, torch, lambda t: t.shape == x.shape)
        return ("other", name, i, i if j is None else j, dim)
    if name == "where":
        j = _pick(rng, pool, torch, lambda t: _broadcasts(t.shape, x.shape))
        return ("other", "where", i, i if j is None else j, float(rng.choice([0.0, 0.5])))
    return ("other", "clamp", i, float(rng.choice([-0.5, -1.0])), float(rng.choice([0.5, 1.0, 2.0])))


def _broadcasts(a, b):
    try:
        np.broadcast_shapes(tuple(a), tuple(b))
        return True
    except ValueError:
        return False


def run_step(L, pool, step):
    """Run one step of the recipe in library ``L``: (tensor or None, exception type name or None)."""
    try:
        return _run(L, pool, step), None
    except Exception as e:  # noqa: BLE001 -- the point is to compare them
        return None, type(e).__name__


def _run(L, pool, step):
    """One step; a view or an in-place step whose last flag is set runs inside ``no_grad()``."""
    if step[0] in ("view", "inplace") and step[-1] is True:
        with L.no_grad():
            return _run_step(L, pool, step)
    return _run_step(L, pool, step)


def _run_step(L, pool, step):
    kind = step[0]
    if kind == "leaf":
        _, data, rg, dtype = step
        return L.tensor(data, dtype=getattr(L, dtype), requires_grad=rg)
    x = pool[step[2]]
    if x is None:
        raise LookupError("input failed")
    if kind == "unary":
        return getattr(x, step[1])()
    if kind == "layout":
        _, name, _, how, follow = step
        y = getattr(_laid_out(x, how), name)()
        if follow in ("view", "reshape"):
            return getattr(y, follow)(-1)
        if follow == "add":               # a binary op with one input in each layout
            return y + _laid_out(x, how).contiguous()
        return y.contiguous() if follow == "contiguous" else y
    if kind == "scalar":
        c = step[3]
        return eval(step[1], {"x": x, "c": c})   # noqa: S307 -- the fixed expressions above
    if kind == "binary":
        y = pool[step[3]]
        if y is None:
            raise LookupError("input failed")
        return getattr(x, step[1])(y)
    if kind == "reduce":
        _, name, _, dim, keepdim = step
        if name in ("softmax", "log_softmax", "cumsum"):
            return getattr(x, name)(0 if dim is None else dim)
        if name == "logsumexp":
            return x.logsumexp(0 if dim is None else dim, keepdim=keepdim)
        if name == "norm":
            return x.norm() if dim is None else x.norm(dim=dim, keepdim=keepdim)
        if dim is None:
            return getattr(x, name)()
        out = getattr(x, name)(dim, keepdim=keepdim)
        return out.values if name in ("max", "min", "median") else out
    if kind == "view":
        _, name, _, dim, other, perm, k, _ = step
        if name == "reshape":
            return x.reshape(-1) if k == 1 else x.reshape(*reversed(x.shape))
        if name == "view":
            return x.view(-1) if k == 1 else x.view(*reversed(x.shape))
        if name == "flatten":
            return x.flatten()
        if name == "t":
            return x.t()
        if name == "transpose":
            return x.transpose(dim, other)
        if name == "permute":
            return x.permute(*perm)
        if name == "unsqueeze":
            return x.unsqueeze(other if k == 1 else -1)
        if name == "squeeze":
            return x.squeeze() if k == 1 else x.squeeze(dim)
        if name == "expand":
            return x.expand(k + 1, *x.shape)
        if name == "flip":
            return x.flip(dim)
        if name == "index0":
            return x[0]
        if name == "slice":
            return x[..., 1:] if k == 1 else x[:, ::2]
        if name == "newaxis":
            return x[None, ..., None]
        if name == "narrow":
            return x.narrow(dim, 0, 1)
        if name == "select":
            return x.select(dim, -1)
        if name == "split":
            return x.split(1, dim)[-1]
        if name == "unbind":
            return x.unbind(dim)[0]
        if name == "repeat":
            return x.repeat(*([k] * max(x.ndim, 1)))
        if name == "mT":
            return x.mT
        if name == "T":
            return x.T if x.ndim == 2 else x.permute(*reversed(range(x.ndim)))
        return getattr(x, name)()
    if kind == "inplace":
        _, name, _, j, clone_first, _ = step
        y = pool[j] if j is not None else None
        t = x * 1 if clone_first else x
        if name in ("add_", "mul_", "sub_", "div_"):
            getattr(t, name)(y if y is not None else 2.0)
        elif name == "clamp_":
            t.clamp_(-0.5, 0.5)
        elif name == "setitem":
            if y is not None and y.ndim >= 1 and t.ndim >= 1:
                t[0] = y[0] if y.shape == t.shape else 1.5
            else:
                t[...] = 1.5
        elif name == "zero_":
            t.zero_()
        else:
            getattr(t, name)()
        return t
    name = step[1]
    if name == "matmul":
        y = pool[step[3]]
        return x @ y
    if name in ("cat", "stack"):
        y = pool[step[3]]
        return getattr(L, name)([x, y], step[4])
    if name == "where":
        y = pool[step[3]]
        return L.where(x > step[4], x, y)
    return x.clamp(step[3], step[4])


# --- comparing --------------------------------------------------------------------------------------

def _walk(fn):
    """The graph below ``fn`` as plain data: node names in visit order, each with its inputs' indices."""
    order, index, stack, out = [], {}, [fn], []
    while stack:
        f = stack.pop()
        if f is None or id(f) in index:
            continue
        index[id(f)] = len(order)
        order.append(f)
        stack.extend(reversed([n for n, _ in f.next_functions]))
    for f in order:
        out.append((_name(f), tuple(None if n is None else index[id(n)] for n, _ in f.next_functions)))
    return out


def _grad_fn_name(t):
    """The node's name; reading it may raise (a split's piece whose base was written in place)."""
    try:
        return None if t.grad_fn is None else _name(t.grad_fn)
    except RuntimeError as e:
        return f"{type(e).__name__} on reading grad_fn"


def _name(fn):
    return fn.name().replace("torch::autograd::", "")


def _layout(t):
    """A tensor's strides where they matter (a dim of size 1 may have any stride: PyTorch's and
    numpy's differ there, and no view or reshape depends on it; an empty tensor has no layout)."""
    if t.numel() == 0:
        return ()
    return tuple(st if n != 1 else None for st, n in zip(t.stride(), t.shape))


def _array(t):
    return np.asarray(t.detach().numpy(), np.float64) if t.dtype.is_floating_point else np.asarray(t.detach().numpy())


def _same_values(a, b):
    a, b = _array(a), _array(b)
    return a.shape == b.shape and np.allclose(a, b, rtol=2e-4, atol=2e-5, equal_nan=True)


def compare(g, gradviz, torch):
    """Run the recipe in both libraries; the list of differences (empty: they agree)."""
    problems = []
    pools = {"gradviz": [], "torch": []}
    for n, step in enumerate(g.recipe):
        results = {}
        for name, L in (("gradviz", gradviz), ("torch", torch)):
            results[name] = run_step(L, pools[name], step)
            pools[name].append(results[name][0])
        (gv, ge), (tv, te) = results["gradviz"], results["torch"]
        if ge != te:
            problems.append(f"step {n} {step[:2]}: gradviz {ge or 'ok'}, torch {te or 'ok'}")
            return problems
    for n, (a, b) in enumerate(zip(pools["gradviz"], pools["torch"])):
        if a is None or b is None:
            continue
        if tuple(a.shape) != tuple(b.shape) or str(a.dtype).split(".")[-1] != str(b.dtype).split(".")[-1]:
            problems.append(f"tensor {n} {g.recipe[n][:2]}: shape/dtype {tuple(a.shape)} {a.dtype} vs "
                            f"{tuple(b.shape)} {b.dtype}")
            continue
        if not _same_values(a, b):
            problems.append(f"tensor {n} {g.recipe[n][:2]}: values differ")
        elif _layout(a) != _layout(b):
            problems.append(f"tensor {n} {g.recipe[n][:2]}: strides {tuple(a.stride())} vs {tuple(b.stride())}")
        ga, gb = _grad_fn_name(a), _grad_fn_name(b)
        if ga != gb or a.requires_grad != b.requires_grad:
            problems.append(f"tensor {n} {g.recipe[n][:2]}: grad_fn {ga} vs {gb}")
    if problems:
        return problems
    root, how, seed = g.root
    a, b = pools["gradviz"][root], pools["torch"][root]
    if a is None:
        return problems
    if _grad_fn_name(a) is not None and "reading" not in _grad_fn_name(a) and _walk(a.grad_fn) != _walk(b.grad_fn):
        problems.append(f"graph below tensor {root}: {_walk(a.grad_fn)} vs {_walk(b.grad_fn)}")
        return problems
    errors = {}
    for name, L, t in (("gradviz", gradviz, a), ("torch", torch, b)):
        try:
            if how == "sum":
                t.sum().backward()
            elif how == "mean":
                t.float().mean().backward() if t.dtype.is_floating_point else t.sum().backward()
            elif how == "gradient":
                grad = np.random.default_rng(seed).standard_normal(tuple(t.shape)).astype(np.float32)
                t.backward(L.tensor(grad, dtype=t.dtype))
            else:
                t.backward()
            errors[name] = None
        except Exception as e:  # noqa: BLE001
            errors[name] = type(e).__name__
    if errors["gradviz"] != errors["torch"]:
        problems.append(f"backward ({how}): gradviz {errors['gradviz'] or 'ok'}, torch {errors['torch'] or 'ok'}")
        return problems
    for n, (a, b) in enumerate(zip(pools["gradviz"], pools["torch"])):
        if g.recipe[n][0] != "leaf" or a is None:
            continue
        if (a.grad is None) != (b.grad is None):
            problems.append(f"leaf {n}: grad {a.grad is not None} vs {b.grad is not None}")
        elif a.grad is not None and not _same_values(a.grad, b.grad):
            problems.append(f"leaf {n}: grads differ {a.grad.tolist()} vs {b.grad.tolist()}")
    return problems


def fuzz(seeds, gradviz, torch):
    """{seed: problems} for every graph that disagreed, and the number of graphs run."""
    bad = {}
    for seed in seeds:
        g = generate(seed, torch)
        problems = compare(g, gradviz, torch)
        if problems:
            bad[seed] = problems
    return bad
