"""Collapse an ``nn.Module``'s ops into one step of the trace, carrying the gradients that crossed it.

``animate(loss, collapse=model)`` draws each layer of ``model`` that holds parameters (``model.0``,
a ``Linear``) as one node: its inputs are what entered it from outside and its own parameters, its
output is the layer's output, and in the backward pass it receives the gradient of that output and
sends, to each input, the total of what its ops sent there.  The parameters' ``AccumulateGrad``
events stay as they were: ``model.0.weight.grad`` is still filled in front of the class.

Which ops belong to a layer: with ``gradviz.watch()`` (real PyTorch) the layer's forward call was
seen, so exactly the ops between its inputs and its output.  Otherwise the ops that read one of its
parameters, with the reshapes around them (PyTorch's ``Linear`` on a vector is
unsqueeze → mm → squeeze → add): a layer without parameters (``ReLU``) stays as its ops.
"""

import numpy as np

from .model import Event, Input, Step, no_derivation_latex

__all__ = ["collapse", "layers", "fold_runs", "unfolded"]

SHAPE_OPS = {"view", "reshape_copy", "reshape_alias", "unsqueeze", "squeeze", "squeeze_dim", "squeeze_mm",
             "t", "transpose", "expand", "permute"}


def layers(modules, names):
    """``[(name, module)]``: each module given, or the submodules of it that hold parameters directly.

    ``names``: ``[(name, module)]`` the caller's variables, to call ``model[0]`` ``model.0``.
    """
    if not isinstance(modules, (list, tuple)):
        modules = [modules]
    for m in modules:
        if not callable(getattr(type(m), "named_parameters", None)) or isinstance(m, type):
            raise TypeError(f"animate(): collapse= takes an nn.Module (or a list of them), e.g. "
                            f"collapse=model, not {type(m).__name__} {m!r:.40}")
    known = {id(m): n for n, m in names}
    out = []
    for m in modules:
        base = known.get(id(m), type(m).__name__)
        subs = list(m.named_modules()) if hasattr(m, "named_modules") else [("", m)]
        own = [(p, s) for p, s in subs if _own_parameters(s)]
        for prefix, sub in own:
            name = known.get(id(sub)) or (f"{base}.{prefix}" if prefix else base)
            out.append((name, sub))
    return out


def _own_parameters(module):
    try:
        return [p for _, p in module.named_parameters(recurse=False)]
    except TypeError:  # a module-like object without recurse=
        return [p for _, p in module.named_parameters()] if not list(module.named_children()) else []


def _members(trace, module, seen_call):
    """The steps of ``module``: from its watched call, else from its parameters."""
    steps = trace.steps
    if seen_call is not None:
        out_fn, input_fns = seen_call
        end = next((s for s in steps if s.fn is not None and s.fn() is out_fn), None)
        if end is not None:
            members, stack = set(), [end]
            while stack:
                s = stack.pop()
                if id(s) in members or (s.fn is not None and s.fn() in input_fns):
                    continue
                members.add(id(s))
                stack.extend(i.src for i in s.inputs if i.kind == "op")
            return [s for s in steps if id(s) in members]
    params = {id(p) for p in _own_parameters(module)}
    members = {id(s) for s in steps
               if any(i.kind == "leaf" and i.src.tensor() is not None and id(i.src.tensor()) in params
                      for i in s.inputs)}
    if not members:
        return []
    consumers = {}
    for s in steps:
        for i in s.inputs:
            if i.kind == "op":
                consumers.setdefault(id(i.src), []).append(s)
    changed = True
    while changed:   # the reshapes around the ops that read a parameter
        changed = False
        for s in steps:
            if id(s) in members or s.key not in SHAPE_OPS:
                continue
            ops = [i.src for i in s.inputs if i.kind == "op"]
            feeds = consumers.get(id(s), [])
            after = ops and all(id(o) in members for o in ops) and len(consumers.get(id(ops[0]), [])) == 1
            before = feeds and all(id(c) in members for c in feeds) and \
                all(i.kind != "op" or id(i.src) in members or i.src.key in SHAPE_OPS for i in s.inputs)
            if after or (before and not ops):
                members.add(id(s))
                changed = True
    return [s for s in steps if id(s) in members]


def collapse(trace, modules, names=(), calls=None):
    """The trace with each layer of ``modules`` as one step (in place; returns the trace).

    ``calls``: ``{id(module): (output grad_fn, input grad_fns)}`` seen by ``gradviz.watch()``.
    """
    for name, module in layers(modules, names):
        members = _members(trace, module, (calls or {}).get(id(module)))
        if members:
            _fold(trace, name, module, members)
    return trace


def _fold(trace, name, module, members):
    inside = {id(s) for s in members}
    outputs = [s for s in members
               if any(i.kind == "op" and i.src is s for t in trace.steps if id(t) not in inside for i in t.inputs)
               or any(r is s.out for r in trace.roots)]
    if len(outputs) != 1:
        return                                     # a layer with two ways out is left as its ops
    end = outputs[0]
    found = {}
    for s in members:
        for i in s.inputs:
            if i.kind == "op" and id(i.src) in inside:
                continue
            key = id(i.src) if i.src is not None else ("const", id(s), len(found))
            found.setdefault(key, Input(i.kind, i.src, i.shape, i.dtype, i.data))
    params = {id(p) for p in _own_parameters(module)}
    is_param = {k: i.kind == "leaf" and i.src.tensor() is not None and id(i.src.tensor()) in params
                for k, i in found.items()}
    keys = sorted(found, key=lambda k: is_param[k])      # what came in first, then the layer's parameters
    inputs = [found[k] for k in keys]
    where = {k: n for n, k in enumerate(keys)}
    latex, dlatex = no_derivation_latex(name, sum(not is_param[k] for k in keys) or len(keys))
    step = Step(seq=end.seq, name=type(module).__name__, op=None, key=None, symbol=name, latex=latex, dlatex=dlatex,
                inputs=inputs, out=end.out, fn=end.fn, user=False)
    step.members = members                         # (frames: its gradients are totals over these)
    fold = (step, inside, where)
    trace.folds.append(fold)
    for run in trace.runs:
        fold_run(run, fold)
    keep = [s for s in trace.steps if id(s) not in inside]
    keep.insert(next((k for k, s in enumerate(keep) if s.seq > end.seq), len(keep)), step)
    for s in keep:                                 # later steps now read the layer's step
        for i in s.inputs:
            if i.kind == "op" and i.src is end:
                i.src = step
    trace.steps[:] = keep
    trace._made_by = {id(s.out): s for s in trace.steps}


def unfolded(steps):
    """``steps`` with each layer folded by :func:`collapse` as its own ops again, in forward order:
    what a forward pass runs (the layer's step stands for its last op's output)."""
    out = []
    for s in steps:
        out.extend(getattr(s, "members", None) or [s])
    return sorted(out, key=lambda s: s.seq)


def fold_runs(trace, runs):
    """Fold the events of new runs (the widget's backward() button) into the trace's layer steps."""
    for run in runs:
        for fold in trace.folds:
            fold_run(run, fold)


def fold_run(run, fold):
    """One event for the layer where its ops had one each: the gradient in, the totals sent out."""
    step, inside, where = fold
    mine = [e for e in run.events if e.node is not None and id(e.node) in inside]
    if not mine:
        return
    first = mine[0]
    grads = [None] * len(step.inputs)
    for e in mine:
        for i, g in zip(e.node.inputs, e.grads_out):
            if g is None or (i.kind == "op" and id(i.src) in inside):
                continue
            k = where.get(id(i.src)) if i.src is not None else None
            if k is not None:
                grads[k] = g if grads[k] is None else grads[k] + g
    end_event = next((e for e in mine if e.node.out is step.out), first)
    merged = Event(first.run, first.step, step.name, step.seq, node=step, grad_in=end_event.grad_in,
                   grads_out=tuple(None if g is None else np.asarray(g) for g in grads))
    at = next(k for k, e in enumerate(run.events) if e is first)
    gone = {id(e) for e in mine}
    run.events[:] = [e for e in run.events if id(e) not in gone]
    run.events.insert(at, merged)
    for k, e in enumerate(run.events):
        e.step = k
