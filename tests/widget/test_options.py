"""Bad input to every public entry point is refused at the call, with a message naming the option.

One table per entry point: the call, the exception type, and words the message must contain
(the option's name and what it accepts), so a student reads what to change, not numpy's or
traitlets' error from deep inside.
"""

import re

import numpy as np
import pytest
import traitlets

import gradviz
import gradviz as torch
from gradviz.widget import AutogradWidget


@pytest.fixture
def lesson():
    x = torch.ones(2, requires_grad=True)
    return (5 * (x + 1) ** 2).sum(), x


@pytest.fixture
def o(lesson):
    return lesson[0]


# (options, exception type, words the message must contain)
COMMON = [
    ({"view": "sideways"}, ValueError, ["view=", "'dataflow', 'pytorch'", "'sideways'"]),
    ({"view": 3}, ValueError, ["view=", "'dataflow'"]),
    ({"names": [1, 2]}, TypeError, ["names=", "dict", "not a list"]),
    ({"names": {1: "x"}}, TypeError, ["names=", "the key 1"]),
    ({"names": {"x": 3}}, TypeError, ["names['x']", "tensor", "int"]),
    ({"rankdir": "up"}, ValueError, ["rankdir=", "'TB'", "'up'"]),
    ({"rankdir": 'TB"] node [shape=box'}, ValueError, ["rankdir="]),
    ({"recording": "rec"}, TypeError, ["recording=", "trace.record()"]),
]

DRAW = COMMON + [
    ({"max_nodes": 0}, ValueError, ["max_nodes=", "at least 1", "0"]),
    ({"max_nodes": 2.5}, TypeError, ["max_nodes=", "whole number"]),
    ({"timeout": -1}, ValueError, ["timeout=", "positive"]),
    ({"timeout": float("nan")}, ValueError, ["timeout=", "nan"]),
    ({"title": 5}, TypeError, ["title=", "string"]),
    ({"name": ["o"]}, TypeError, ["name=", "string", "list"]),
    ({"renderer": 1}, TypeError, ["renderer=", "string"]),
    ({"langauge": "ko"}, TypeError, ["unexpected keyword argument 'langauge'"]),
]

ANIMATE = COMMON + [
    ({"langauge": "ko"}, TypeError, ["animate()", "unexpected keyword argument 'langauge'", "Did you mean 'lang'?"]),
    ({"presentr": True}, TypeError, ["'presentr'", "Did you mean 'presenter'?"]),
    ({"colour": "red"}, TypeError, ["unexpected keyword argument 'colour'"]),
    ({"lang": "fr"}, ValueError, ["lang=", "'en', 'ko'", "'fr'"]),
    ({"speed": float("nan")}, ValueError, ["speed=", "positive", "nan"]),
    ({"speed": -1}, ValueError, ["speed=", "positive", "-1"]),
    ({"speed": 0}, ValueError, ["speed=", "positive"]),
    ({"speed": float("inf")}, ValueError, ["speed=", "finite"]),
    ({"speed": "fast"}, TypeError, ["speed=", "number", "'fast'"]),
    ({"presenter": "yes"}, TypeError, ["presenter=", "True or False"]),
    ({"backward": None}, TypeError, ["backward=", "True or False"]),
    ({"derivation": 5}, TypeError, ["derivation=", "list of LaTeX strings"]),
    ({"derivation": ["a", 2]}, TypeError, ["derivation=", "item 1", "int"]),
    ({"expected": [1, 2]}, TypeError, ["expected=", "dict"]),
    ({"expected": {"x": "5(x+1)"}}, TypeError, ["expected['x']", "function"]),
    ({"expected": {"nope": lambda x: x}}, ValueError, ["expected=", "'nope'", "not a leaf", "x"]),
    ({"expected": {"x": lambda x: np.ones(3)}}, ValueError, ["expected['x']", "shape (3,)", "x has shape (2,)"]),
    ({"expected": {"x": np.ones((2, 2))}}, ValueError, ["expected['x']", "shape (2, 2)"]),
    ({"frame": 10 ** 6}, ValueError, ["frame=", "steps", "1000000"]),
    ({"frame": -1}, ValueError, ["frame=", "-1"]),
    ({"frame": "last"}, TypeError, ["frame=", "whole number"]),
    ({"retain_graph": "yes"}, traitlets.TraitError, ["'retain_graph' trait", "bool"]),   # traits: traitlets says it
    ({"live": "no"}, traitlets.TraitError, ["'live' trait", "bool"]),
]


def _check(exc_info, words):
    text = str(exc_info.value)
    for w in words:
        assert w in text, (w, text)
    assert "Traceback" not in text


def _id(options):
    """A test id that is the same in every process (a lambda's repr holds its address)."""
    return re.sub(r" at 0x[0-9a-f]+", "", str(options))


@pytest.mark.parametrize("options, exc, words", DRAW, ids=[_id(o) for o, _, _ in DRAW])
def test_draw_refuses(lesson, options, exc, words):
    o, x = lesson
    with pytest.raises(exc) as e:
        gradviz.draw(o, **options)
    _check(e, words)


@pytest.mark.parametrize("options, exc, words", ANIMATE, ids=[_id(o) for o, _, _ in ANIMATE])
def test_animate_refuses(lesson, options, exc, words):
    o, x = lesson                                   # x named in this frame, for expected={"x": ...}
    with pytest.raises(exc) as e:
        gradviz.animate(o, **options)
    _check(e, words)


@pytest.mark.parametrize("options, exc, words", ANIMATE[:4], ids=[str(o) for o, _, _ in ANIMATE[:4]])
def test_the_widget_class_refuses_the_same(o, options, exc, words):
    with pytest.raises(exc) as e:
        AutogradWidget(o, **options)
    _check(e, [w.replace("animate()", "AutogradWidget()") for w in words])


ROOTS = [
    (3.0, ["takes a tensor", "the float 3.0"]),
    (np.ones(2), ["takes a tensor", "numpy.ndarray"]),
    ([1, 2], ["takes a tensor"]),
    (None, ["takes a tensor", "None"]),
]


@pytest.mark.parametrize("root, words", ROOTS, ids=[repr(r)[:12] for r, _ in ROOTS])
@pytest.mark.parametrize("entry", ["draw", "animate"])
def test_what_is_not_a_tensor(entry, root, words):
    with pytest.raises(TypeError) as e:
        getattr(gradviz, entry)(root)
    _check(e, [f"{entry}()"] + words)


@pytest.mark.torch
@pytest.mark.parametrize("entry", ["draw", "animate"])
def test_a_pytorch_tensor_is_drawn_from_the_real_engine(entry):
    real = pytest.importorskip("torch")
    x = real.ones(2, requires_grad=True)
    shown = getattr(gradviz, entry)((x * 2).sum())        # tests/widget/test_torch_widget.py has the rest
    assert shown is not None and x.grad is None


def test_draw_without_a_tensor():
    with pytest.raises(TypeError, match=r"draw\(\) takes the tensor\(s\)"):
        gradviz.draw()


def test_one_derivation_string_is_one_step(o):
    w = gradviz.animate(o, derivation="x^2+1")
    assert [s["latex"] for s in w.derivation["custom"]] == ["x^2+1"]


# --- the traits, after the widget is made -----------------------------------------------------------

TRAITS = [
    ("frame", 10 ** 6, ["AutogradWidget.frame", "from 0 to", "steps", "1000000"]),
    ("frame", -1, ["AutogradWidget.frame", "-1"]),
    ("frame", 1.5, ["'frame' trait", "int", "1.5"]),          # traitlets says it well
    ("speed", float("nan"), ["AutogradWidget.speed", "positive", "nan"]),
    ("speed", -2.0, ["AutogradWidget.speed", "-2.0"]),
    ("lang", "fr", ["lang", "'fr'"]),
]


@pytest.mark.parametrize("trait, value, words", TRAITS, ids=[f"{t}={v}" for t, v, _ in TRAITS])
def test_traits_refuse(o, trait, value, words):
    w = AutogradWidget(o)
    before = getattr(w, trait)
    with pytest.raises(traitlets.TraitError) as e:
        setattr(w, trait, value)
    _check(e, words)
    assert getattr(w, trait) == before
    w.caption()                                           # still readable


def test_the_last_frame_and_caption(o):
    w = AutogradWidget(o)
    w.frame = len(w.frames) - 1
    assert w.caption() == w.caption(len(w.frames) - 1)
    with pytest.raises(ValueError, match=r"caption\(\): i= must be from 0 to"):
        w.caption(len(w.frames))


# --- save_html ----------------------------------------------------------------------------------------

SAVE = [
    ({"lang": "fr"}, ValueError, ["save_html(): lang=", "'fr'"]),
    ({"frame": 999}, ValueError, ["save_html(): frame=", "999"]),
    ({"presenter": "big"}, TypeError, ["save_html(): presenter=", "True or False"]),
    ({"title": 3}, TypeError, ["save_html(): title=", "string"]),
    ({"langauge": "ko"}, TypeError, ["save_html()", "'langauge'", "Did you mean 'lang'?"]),
    ({"full_page": False}, TypeError, ["save_html()", "'full_page'"]),
]


@pytest.mark.parametrize("options, exc, words", SAVE, ids=[str(o) for o, _, _ in SAVE])
def test_save_html_refuses(o, tmp_path, options, exc, words):
    w = AutogradWidget(o)
    with pytest.raises(exc) as e:
        w.save_html(tmp_path / "figure.html", **options)
    _check(e, words)
    assert not (tmp_path / "figure.html").exists()


# --- a leaf as the root ----------------------------------------------------------------------------

def test_a_leaf_tells_one_story():
    x = torch.tensor(2.0, requires_grad=True)
    w = gradviz.animate(x)
    captions = [w.caption(i) for i in range(len(w.frames))]
    assert "no backward pass" not in " ".join(captions)
    assert w.frames[0]["msg"][0] == "cap_leaf" and "x is a leaf" in captions[0]
    assert [f["kind"] for f in w.frames[1:]] == ["seed", "acc", "done"]
    assert x.grad is None                                   # put back, as for any graph


def test_a_tensor_without_grad_says_so_once():
    c = torch.ones(2)
    w = gradviz.animate(c)
    assert [f["msg"][0] for f in w.frames] == ["cap_no_grad"]
