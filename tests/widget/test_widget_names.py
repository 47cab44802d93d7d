"""Names: the notebook's variables first; made-up letters never a name the notebook uses; draw() as animate()."""

import gradviz
from test_widget_formulas import NOTEBOOKS, notebook_widgets

LESSON6 = NOTEBOOKS / "06_neuron_and_mlp.ipynb"


def made_up(w):
    lesson = w._animation.lesson
    return {lesson.name(n): n for n in lesson.nodes if n.out.auto}


def lesson6_network():
    """Lesson 6 run as Run All runs it, up to its second animate(): the 2-4-1 network's loss."""
    ns = {"__name__": "__main__"}
    widgets = notebook_widgets(LESSON6, ns, stop=2)
    return widgets[1], ns


def test_made_up_names_are_not_the_notebooks_own():
    w, _ = lesson6_network()
    names = made_up(w)
    assert names, "the intermediates are named"
    # the lesson's forward() has h = tanh(X @ W1 + b1) and mse() has p and y: none of them is reused
    assert not set(names) & {"h", "p", "y", "X", "Y", "loss"}, sorted(names)


def test_draw_and_animate_name_intermediates_the_same_way():
    w, ns = lesson6_network()
    d = gradviz.draw(w._animation.root, namespace=ns)
    drawn = {n.fn_seq: n.label for n in d.graph.nodes if n.kind == "value"}
    for node in w._animation.lesson.nodes:
        assert drawn[node.seq] == w._animation.lesson.name(node)


# Lesson 6's practice cell as a program of its own, beside an unrelated ``b`` (a name the letters skip).
LESSON6_PRACTICE = """
import json
import gradviz as torch
import gradviz
from gradviz.widget.i18n import render
gradviz.manual_seed(0)
X, Y = torch.randn(4, 2), torch.randn(4, 1)
W1, b1 = torch.randn(2, 4, requires_grad=True), torch.zeros(4, requires_grad=True)
W2, b2 = torch.randn(4, 1, requires_grad=True), torch.zeros(1, requires_grad=True)
b = torch.tensor(1.0)
h = torch.tanh(X @ W1 + b1)
p = h @ W2 + b2
loss = ((p - Y) ** 2).mean()
w = gradviz.practice(loss, ask=["W2"], choices=4)
lesson = w._animation.lesson
print(json.dumps({"names": [[lesson.name(n), n.out.auto] for n in lesson.nodes],
                  "leaves": [lesson.name(t) for t in lesson.leaves],
                  "hints": [render("en", h) for h in w.practice["questions"][0]["hints"]]}))
"""


def _run_fresh(program, seed):
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path
    root = str(Path(gradviz.__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_made_up_names_are_the_same_in_every_run():
    """The same program names its intermediates with the same letters in two fresh interpreters
    (other hash seeds, other ids): nothing in the naming hangs on a counter, an id or a set's order."""
    one, two = _run_fresh(LESSON6_PRACTICE, "1"), _run_fresh(LESSON6_PRACTICE, "2")
    assert one == two
    made = [n for n, auto in one["names"] if auto]
    assert made == ["a", "c", "d", "f", "g"], one["names"]        # b is the program's own: skipped
    assert one["leaves"] == ["W1", "b1", "W2", "b2"]


def test_a_hint_names_an_unnamed_product_as_the_cell_writes_it():
    """Lesson 6's practice hint for W2.grad: the product h @ W2 has no name in the cell (the widget
    made one up for the picture), so the hint writes it as the cell does, not as a letter."""
    got = _run_fresh(LESSON6_PRACTICE, "3")
    assert got["hints"][0] == ("h @ W2: each row of h (one example) sends back its own share and PyTorch adds "
                               "them up, W2.grad = hᵀ · (the gradient arriving at h @ W2)")
    assert got["hints"][1].startswith("the gradient arriving at h @ W2 is [[")
