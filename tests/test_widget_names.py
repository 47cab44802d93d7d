"""Names: the notebook's variables first; made-up letters never a name the notebook uses; draw() as animate()."""

import textwrap

import gradviz
from gradviz.widget import AutogradWidget
from test_formula import notebook_widgets, NOTEBOOKS

LESSON6 = textwrap.dedent("""
    import gradviz, gradviz as torch
    X = torch.tensor([[0., 0.], [0., 1.], [1., 0.], [1., 1.]])
    Y = torch.tensor([[0.], [1.], [1.], [0.]])
    torch.manual_seed(0)
    W1 = torch.randn(2, 4, requires_grad=True)
    b1 = torch.zeros(4, requires_grad=True)
    W2 = torch.randn(4, 1, requires_grad=True)
    b2 = torch.zeros(1, requires_grad=True)

    def forward(X):
        h = torch.tanh(X @ W1 + b1)
        return h @ W2 + b2

    def mse(p, y):
        return ((p - y) ** 2).mean()

    loss = mse(forward(X), Y)
    w = gradviz.widget.AutogradWidget(loss)
""")


def made_up(w):
    lesson = w._lesson
    return {lesson.name(n): n for n in lesson.nodes if n.out.auto}


def test_made_up_names_are_not_the_notebooks_own():
    ns = {"__name__": "__main__"}
    exec(LESSON6, ns)
    w = ns["w"]
    names = made_up(w)
    assert names, "the intermediates are named"
    assert not set(names) & {"h", "p", "y", "X", "Y", "w", "forward", "mse", "loss"}, sorted(names)
    # the lesson's h is tanh(X W1 + b1): the widget's tanh output is not called anything the lesson is not
    tanh = next(n for n in w._lesson.nodes if n.name == "TanhBackward0")
    assert w._lesson.name(tanh) != "h" or not tanh.out.auto


def test_draw_and_animate_name_intermediates_the_same_way():
    ns = {"__name__": "__main__"}
    exec(LESSON6 + "d = gradviz.draw(loss)\n", ns)
    w, d = ns["w"], ns["d"]
    drawn = {n.fn_seq: n.label for n in d.graph.nodes if n.kind == "value"}
    for node in w._lesson.nodes:
        assert drawn[node.seq] == w._lesson.name(node)


def test_every_notebook_widget_avoids_the_notebooks_names():
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        for w in notebook_widgets(path):
            assert "h" not in made_up(w) or "06" not in path.stem, path.stem
