"""The ops added beside the op table's first tiers -- topk, clamp_min/clamp_max by numbers, and what
PyTorch writes out of other ops (normalize, softmin, cosine_similarity, diff, tile, take_along_dim,
movedim, meshgrid), and dims PyTorch keeps as given (-1) -- in the hand derivation: no error, no node
written as a function call, every line the engine's ``.grad``, in both engines (the torch ones skip
without torch); and after Run All the buttons end with ✓ (under real PyTorch after running the ops
again: the replays of gradviz/trace/torch_engine.py)."""

import pytest

from gradviz.widget import AutogradWidget
from test_derivation_maths import ENGINES, after_run_all, engine_grads, lib_of, read_the_maths

PROGRAMS = {
    "topk": lambda lib, a: a.topk(2).values,
    "clamp_min": lambda lib, a: a.clamp_min(0.1),
    "clamp_max": lambda lib, a: a.clamp_max(0.3),
    "normalize": lambda lib, a: lib.nn.functional.normalize(a, dim=0),
    "softmin": lambda lib, a: lib.nn.functional.softmin(a, dim=0),
    "cosine_similarity": lambda lib, a: lib.nn.functional.cosine_similarity(a, a * a + 1, dim=0).reshape(1),
    "diff": lambda lib, a: a.diff(),
    "tile": lambda lib, a: a.tile(2),
    "take_along_dim": lambda lib, a: a.take_along_dim(lib.tensor([2, 0])),
    "movedim": lambda lib, a: a.view(1, 3).movedim(0, 1).reshape(3),
    "meshgrid": lambda lib, a: lib.meshgrid(a, a[:2], indexing="ij")[1].sum(1),
    "repeat": lambda lib, a: a.repeat(2),
    # PyTorch keeps a dim given as -1 as it was given (it shows as 2**64 - 1): read as the last dim here
    "softmax_last": lambda lib, a: a.softmax(-1),
    "narrow_last": lambda lib, a: a.narrow(-1, 1, 2),
    "sum_last": lambda lib, a: a.view(1, 3).sum(-1),
}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_the_derivation_reads_as_the_engines_grad(engine, name):
    lib = lib_of(engine)
    a = lib.tensor([-1.5, 0.25, 2.0], requires_grad=True)
    d = PROGRAMS[name](lib, a)
    w = lib.tensor([1.0, -2.0, 0.5, 1.5, -0.5, 2.0][:d.shape[0]])
    s = (d * w).sum()
    names = {"a": a, "d": d, "w": w, "s": s}
    grads = engine_grads(s, names, None)
    widget = AutogradWidget(s, names=names)
    read_the_maths(widget, grads)
    # (PyTorch's TopkBackward0 keeps the indices but not whether they were the largest or the
    # smallest: the torch engine cannot run topk again, and its press ends on the note saying so)
    after_run_all(lib, widget, s, None, names, words="op" if engine == "torch" and name == "topk" else False)

