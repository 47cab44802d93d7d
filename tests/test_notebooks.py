"""The lesson notebooks: valid, committed clean, slide-ready, and each runs top to bottom printing what it teaches.

Every lesson is executed once per session with nbclient in a fresh kernel started in notebooks/,
as a student opening it in JupyterLab would; the printed values are then read from the executed
notebook. tests/test_binder.py runs the same checks on notebooks executed in a Binder-like
environment.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from gradviz.quiz import check_answer

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
LESSONS = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
SLIDE_TYPES = {"slide", "subslide", "fragment", "skip", "notes", "-"}
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def lesson_ids():
    return [p.stem for p in LESSONS]


def lesson_params():
    """The lessons for parametrize: the one written for real PyTorch is marked ``torch`` (skipped without it)."""
    return [pytest.param(p, marks=[pytest.mark.torch] if p.stem in REAL_TORCH else [], id=p.stem) for p in LESSONS]


# --- reading an executed notebook ---------------------------------------------------------------

def output_text(cell):
    """What a student sees under a code cell, as text: prints, reprs, and errors as 'Name: message'."""
    parts = []
    previous = None
    for out in cell.get("outputs", []):
        kind = out["output_type"]
        if kind == "stream" and previous == ("stream", out["name"]):
            parts[-1] += out["text"]            # one print may arrive as several chunks ("a", "\n")
        elif kind == "stream":
            parts.append(out["text"])
        elif kind == "error":
            parts.append(f"{out['ename']}: {out['evalue']}")
        elif "text/plain" in out.get("data", {}):
            parts.append(out["data"]["text/plain"])
        previous = (kind, out.get("name"))
    return "\n".join(p.rstrip("\n") for p in parts)


def outputs_of(nb, source):
    """The output text of every code cell whose source is exactly ``source`` (in order)."""
    found = [output_text(c) for c in nb.cells if c.cell_type == "code" and c.source.strip() == source.strip()]
    assert found, f"no code cell with source:\n{source}"
    return found


def output_of(nb, source, occurrence=0):
    return outputs_of(nb, source)[occurrence]


def errors(nb):
    """(cell source, 'Name: message') for every cell that raised."""
    return [(c.source, f"{o['ename']}: {o['evalue']}") for c in nb.cells if c.cell_type == "code"
            for o in c.get("outputs", []) if o["output_type"] == "error"]


def widget_states(nb):
    return nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})


def widget_outputs(nb):
    """The widget views shown by the cells that call gradviz.animate, with the source of each."""
    return [(c.source, o["data"][WIDGET_VIEW]) for c in nb.cells if c.cell_type == "code" and "gradviz.animate(" in c.source
            for o in c.get("outputs", []) if WIDGET_VIEW in o.get("data", {})]


# --- what each lesson must print ------------------------------------------------------------------

def _lesson_01(nb):
    assert output_of(nb, "o.backward()\nx.grad") == "tensor([10., 10.])"
    assert output_of(nb, "o = (1/2) * torch.sum(y)\no") == "tensor(20., grad_fn=<MulBackward0>)"
    assert "requires_grad=True" in output_of(nb, "a = Variable(torch.full((2, 3), 3.), requires_grad=True)\na")
    assert output_of(nb, "a * b") == "tensor([[9., 9., 9.],\n        [9., 9., 9.]], grad_fn=<MulBackward0>)"
    assert [e for _, e in errors(nb)] == [
        "RuntimeError: Only Tensors of floating point and complex dtype can require gradients",
        "RuntimeError: a leaf Variable that requires grad is being used in an in-place operation."]


def _lesson_02(nb):
    assert output_of(nb, "out.backward()\nprint(x.grad)") == "tensor([[4.5000, 4.5000],\n        [4.5000, 4.5000]])"
    assert output_of(nb, "z = y * y * 3\nout = z.mean()\n\nprint(z, out)").endswith(
        "tensor(27., grad_fn=<MeanBackward0>)")
    assert re.fullmatch(r"<AddBackward0 object at 0x[0-9a-f]+>\nNone True",
                        output_of(nb, "print(y.grad_fn)\nprint(x.grad_fn, x.is_leaf)"))
    assert "AccumulateGrad" in output_of(nb, "y.grad_fn.next_functions")
    assert errors(nb) == []


def _lesson_03(nb):
    assert output_of(nb, "a.requires_grad") == "True"
    assert output_of(nb, "no_gradient = torch.ones(2, 2)\nno_gradient.requires_grad") == "False"
    assert output_of(nb, "o.backward()\nx.grad") == "tensor([10., 10.])"
    assert output_of(nb, "torch.allclose(x.grad, by_hand)") == "True"
    numeric = float(re.fullmatch(r"tensor\(([\d.]+)\)", output_of(nb, _NUMERIC)).group(1))
    assert abs(numeric - 10) < 0.01
    assert output_of(nb, "print(x.requires_grad)\nprint(y.requires_grad)\nprint(o.requires_grad)") == "True\nTrue\nTrue"
    assert errors(nb) == []


_NUMERIC = """def o_of(x):
    return (1/2) * torch.sum(5 * (x + 1) ** 2)

h = 1e-3
with torch.no_grad():
    e0 = torch.tensor([1., 0.])
    numeric = (o_of(x + h * e0) - o_of(x - h * e0)) / (2 * h)
numeric"""


def _lesson_04(nb):
    assert output_of(nb, "x.grad  # 계산한 그라디언트는 이렇게 확인한다") == "tensor([10., 10.])"
    assert output_of(nb, "o.backward(torch.tensor(1.))\nprint(x.grad)") == "tensor([20., 20.])"
    assert output_of(nb, "x.grad.zero_()\nx.grad") == "tensor([0., 0.])"
    messages = [e for _, e in errors(nb)]
    assert len(messages) == 2
    assert messages[0].startswith("RuntimeError: Mismatch in shape: grad_output[0] has a shape of")
    assert messages[1].startswith("RuntimeError: Trying to backward through the graph a second time")
    # a Korean lesson: Korean prose, and the widget speaks Korean too
    prose = " ".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert len(re.findall(r"[\uac00-\ud7a3]", prose)) > 300
    langs = {s["state"].get("lang") for s in widget_states(nb).values() if "frames" in s["state"]}
    assert langs == {"ko"}


def _lesson_05(nb):
    assert output_of(nb, "x = Variable(torch.ones(1, 1), requires_grad=True)\nprint(x)\nprint(x.data)") == \
        "tensor([[1.]], requires_grad=True)\ntensor([[1.]])"
    assert output_of(nb, "z = y * y * 3\nprint(z)") == "tensor([[75.]], grad_fn=<MulBackward0>)"
    assert output_of(nb, "if x.grad is not None:\n    x.grad.data.zero_()\nz.backward(retain_graph=True)\n"
                         "print(x.grad)") == "tensor([[60.]])"
    assert output_of(nb, "z.backward()\nprint(x.grad)") == "tensor([[120.]])"
    assert output_of(nb, "z.backward(torch.ones(2, 2), retain_graph=True)\nprint(x.grad)") == \
        "tensor([[60., 60.],\n        [60., 60.]])"
    assert output_of(nb, "x.grad.data.zero_()\nz.backward(torch.Tensor([[0, 1], [1, 0]]), retain_graph=True)\n"
                         "print(x.grad)") == "tensor([[ 0., 60.],\n        [60.,  0.]])"
    assert output_of(nb, "z.backward(torch.Tensor([[0, 0], [1, 1]]), retain_graph=True)\nprint(x.grad)") == \
        "tensor([[ 0.,  0.],\n        [60., 60.]])"
    messages = [e for _, e in errors(nb)]
    assert messages[0].startswith("RuntimeError: Trying to backward through the graph a second time")
    assert messages[1] == "RuntimeError: grad can be implicitly created only for scalar outputs"
    assert "has a shape of gradviz.Size([2]) and output[0] has a shape of gradviz.Size([2, 2])" in messages[2]
    assert "gradviz.Size([2, 1])" in messages[3]
    assert len(messages) == 4


def _lesson_06(nb):
    neuron = "out.backward()\nprint(w.grad)\nprint(b.grad)"
    assert output_of(nb, neuron) == "tensor([1.0000, 0.0000])\ntensor(0.5000)"
    loop = next(c for c in nb.cells if c.cell_type == "code" and "for step in range" in c.source)
    losses = [float(v) for v in re.findall(r"^step +\d+ +loss ([\d.]+)$", output_text(loop), re.M)]
    assert len(losses) >= 5, output_text(loop)
    assert losses[0] > 0.2 and losses[-1] < 0.01, losses          # it learned
    assert all(b <= a for a, b in zip(losses, losses[1:])), losses  # and the loss only went down
    predictions = [float(v) for v in re.findall(r"\[\s*(-?[\d.e+-]+)\]", output_of(nb, "with torch.no_grad():\n"
                                                                                 "    print(forward(X))"))]
    assert len(predictions) == 4
    assert [round(p) for p in predictions] == [0, 1, 1, 0], predictions
    frozen = next(c for c in nb.cells if c.cell_type == "code" and "h.detach()" in c.source)
    assert output_text(frozen) == "None None\ngradviz.Size([4, 1]) gradviz.Size([1])"   # only the last layer learns
    drawing = next(c for c in nb.cells if c.cell_type == "code" and c.source == "gradviz.draw(loss)")
    svg = "".join(o["data"].get("image/svg+xml", "") for o in drawing.outputs if "data" in o)
    assert 'class="edge gv-edge gv-cut"' in svg and "cut by detach()" in svg
    model = next(c for c in nb.cells if c.cell_type == "code" and c.source.endswith("\nmodel"))
    assert output_text(model).startswith("Sequential(\n  (0): Linear(in_features=2, out_features=4, bias=True)")
    with_nn = next(c for c in nb.cells if c.cell_type == "code" and "optimizer.step()" in c.source)
    assert output_text(with_nn) == ("step   0   loss 0.2924\nstep 100   loss 0.1746\nstep 200   loss 0.0089\n"
                                    "step 300   loss 0.0003\ntensor([[0.],\n        [1.],\n        [1.],\n        [0.]])")
    asking = next(c for c in nb.cells if c.cell_type == "code" and "gradviz.practice(" in c.source)
    (view,) = [o for o in asking.outputs if WIDGET_VIEW in o.get("data", {})]
    (q,) = widget_states(nb)[view["data"][WIDGET_VIEW]["model_id"]]["state"]["practice"]["questions"]
    assert (q["kind"], q["name"], q["shape"], len(q["choices"])) == ("grad", "W2", [4, 1], 4)   # one weight, a batch
    assert {"transpose", "no_batch_sum"} <= {k for k, _ in q["mistakes"]}
    drawn = next(c for c in nb.cells if c.cell_type == "code" and c.source == "gradviz.draw(loss_fn(model(X), Y))")
    svg = "".join(o["data"].get("image/svg+xml", "") for o in drawn.outputs if "data" in o)
    assert "AddmmBackward0" in svg and "TBackward0" in svg and "model.0.weight" in svg
    assert errors(nb) == []


def _lesson_07(nb):
    assert output_of(nb, "x = torch.ones(2, requires_grad=True)\ny = 5 * (x + 1) ** 2\no = (1/2) * torch.sum(y)\no") \
        == "tensor(20., grad_fn=<MulBackward0>)"
    assert output_of(nb, "o.backward()\nx.grad") == "tensor([10., 10.])"     # animate() left .grad alone
    saved = next(c for c in nb.cells if c.cell_type == "code" and "_saved_self" in c.source)
    assert output_text(saved) == "PowBackward0 1\ntensor([2., 2.], grad_fn=<AddBackward0>)"
    loop = next(c for c in nb.cells if c.cell_type == "code" and "optim.Adam" in c.source)
    losses = [float(v) for v in re.findall(r"^step +\d+ +loss ([\d.]+)$", output_text(loop), re.M)]
    assert len(losses) == 5 and losses[0] > 0.5 and losses[-1] < 0.01, losses
    assert output_text(loop).endswith("tensor([0, 1, 1, 0])")
    states = [widget_states(nb)[view["model_id"]]["state"] for _, view in widget_outputs(nb)]
    assert len(states) == 4
    layers = [n["label"] for n in states[1]["graph"]["nodes"] if n["kind"] == "op"]
    assert layers[0] == "model.0" and "model.2" in layers            # collapse=model: one node per layer
    unwatched, watched = ([n["label"] for n in s["graph"]["nodes"] if n["kind"] == "const"] for s in states[2:])
    assert unwatched == ["?"] and watched == ["2"]                  # watch() saw the constant
    assert errors(nb) == []


CHECKS = {
    "01_variables_and_gradients": _lesson_01,
    "02_autograd_tutorial": _lesson_02,
    "03_tensors_with_gradients": _lesson_03,
    "04_variables_and_gradients_ko": _lesson_04,
    "05_backward_with_gradient": _lesson_05,
    "06_neuron_and_mlp": _lesson_06,
    "07_your_own_pytorch_code": _lesson_07,
}
REAL_TORCH = {"07_your_own_pytorch_code"}      # written for `import torch`: it needs PyTorch installed
TORCH_MISSING = "Lesson 7 needs real PyTorch, which is not installed here"


def check_lesson(name, nb):
    """Everything an executed lesson must show: its key values, errors only where they are taught,
    and a widget wherever it calls gradviz.animate."""
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        raised = any(o["output_type"] == "error" for o in cell.get("outputs", []))
        expected = "raises-exception" in cell.metadata.get("tags", [])
        assert raised == expected, f"{name}: {'unexpected error in' if raised else 'no error from'}:\n{cell.source}"
        if "gradviz.animate(" in cell.source or "gradviz.practice(" in cell.source:
            views = [o for o in cell.outputs if WIDGET_VIEW in o.get("data", {})]
            assert len(views) == 1, f"{name}: no widget from:\n{cell.source}"
            state = widget_states(nb)[views[0]["data"][WIDGET_VIEW]["model_id"]]["state"]
            assert state["frames"] and state["svg"].lstrip().startswith("<svg") and not state["error"]
            if "gradviz.practice(" in cell.source:      # it asks, and every question has its answer
                questions = state["practice"]["questions"]
                assert questions and state["answers"] == [], f"{name}: no question from:\n{cell.source}"
                for q in questions:
                    assert check_answer(q["answer"], q["expected"], q["dtype"])["ok"] is True, q
    CHECKS[name](nb)


# --- the tests ------------------------------------------------------------------------------------

_executed = {}


def executed(path):
    """The lesson run top to bottom in a fresh kernel started in notebooks/ (once per session)."""
    if path not in _executed:
        import nbclient
        nb = nbformat.read(path, as_version=4)
        nbclient.NotebookClient(nb, timeout=180, kernel_name="python3", store_widget_state=True,
                                resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
        _executed[path] = nb
    return _executed[path]


def test_one_lesson_per_seed_plus_the_network():
    assert [p.stem for p in LESSONS] == list(CHECKS)
    assert [int(p.name[:2]) for p in LESSONS] == list(range(1, len(LESSONS) + 1))


@pytest.mark.parametrize("path", LESSONS, ids=lesson_ids())
def test_valid_and_committed_clean(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert nb.metadata.kernelspec.name == "python3"
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, f"output committed:\n{cell.source}"
        assert cell.metadata.get("slideshow", {}).get("slide_type") in SLIDE_TYPES, cell.source[:60]
    assert nb.cells[0].metadata.slideshow.slide_type == "slide"
    assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith("# ")


@pytest.mark.parametrize("path", LESSONS, ids=lesson_ids())
def test_uses_gradviz_as_torch_and_animates(path):
    nb = nbformat.read(path, as_version=4)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert "gradviz.animate(" in code
    if path.stem in REAL_TORCH:       # the one lesson on real PyTorch says so first, and stops without it
        assert "import gradviz as torch" not in code and "import torch" in nb.cells[1].source
        assert TORCH_MISSING in nb.cells[1].source
        return
    assert "import gradviz as torch" in code
    assert "import torch" not in code.replace("import gradviz as torch", "")


def test_lesson_7_without_torch_stops_at_once_saying_how():
    """Without PyTorch (the stand-in of tests/without_torch, on any machine), lesson 7's first cell
    stops with one clear message: how to install the CPU build (Binder has it already)."""
    nb = nbformat.read(NOTEBOOKS / "07_your_own_pytorch_code.ipynb", as_version=4)
    first = next(c for c in nb.cells if c.cell_type == "code")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "tests" / "without_torch"), str(ROOT)])
    r = subprocess.run([sys.executable, "-c", first.source], cwd=NOTEBOOKS, env=env, capture_output=True,
                       text=True, timeout=120)
    last = r.stderr.strip().splitlines()[-1]
    assert r.returncode == 1 and last.startswith(f"ModuleNotFoundError: {TORCH_MISSING} (on Binder it is)")
    assert "%pip install torch --index-url https://download.pytorch.org/whl/cpu" in last
    assert "restart the kernel" in last and "lessons 1-6" in last


@pytest.mark.parametrize("path", LESSONS, ids=lesson_ids())
def test_asks_the_student_to_predict(path):
    """Each lesson has a practice cell where it asks the student to think (issue 22)."""
    nb = nbformat.read(path, as_version=4)
    cells = [c.source for c in nb.cells if c.cell_type == "code" and "gradviz.practice(" in c.source]
    assert len(cells) == 1, path.stem


def test_lesson_1_asks_x_grad_before_revealing_it():
    nb = executed(NOTEBOOKS / "01_variables_and_gradients.ipynb")
    sources = [c.source for c in nb.cells]
    asked = next(i for i, s in enumerate(sources) if "gradviz.practice(" in s)
    assert asked < next(i for i, s in enumerate(sources) if s.startswith("### By hand"))
    (out,) = [o for o in nb.cells[asked].outputs if WIDGET_VIEW in o.get("data", {})]
    state = widget_states(nb)[out["data"][WIDGET_VIEW]["model_id"]]["state"]
    (q,) = state["practice"]["questions"]
    assert (q["kind"], q["name"], q["expected"]) == ("grad", "x", [10.0, 10.0])
    seed = next(k for k, f in enumerate(state["frames"]) if f["kind"] == "seed")
    assert q["at"] == seed                     # asked before the backward pass starts


@pytest.mark.parametrize("path", LESSONS, ids=lesson_ids())
def test_runs_top_to_bottom_and_prints_what_it_teaches(path):
    if path.stem in REAL_TORCH:
        pytest.importorskip("torch", reason=f"{path.stem} is written for real PyTorch, which is not installed")
    check_lesson(path.stem, executed(path))


def test_animate_leaves_the_lessons_backward_alone():
    # the widget records its own backward pass: x.grad afterwards must still be the lesson's value
    nb = executed(NOTEBOOKS / "01_variables_and_gradients.ipynb")
    sources = [c.source for c in nb.cells if c.cell_type == "code"]
    assert sources.index("gradviz.animate(o)") < sources.index("o.backward()\nx.grad")
    assert output_of(nb, "o.backward()\nx.grad") == "tensor([10., 10.])"
