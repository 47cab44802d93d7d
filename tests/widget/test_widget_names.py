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
