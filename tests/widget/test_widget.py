"""AutogradWidget: what it syncs (seen through a recording comm), its live buttons, its errors.

The recording comm stands in for the kernel's: every message the widget would send to the front
end is kept, so the tests assert exactly what was synced, as ipywidgets' own tests do.
"""

import json
import subprocess
import sys
import warnings

import comm
import numpy as np
import pytest

import gradviz
import gradviz as torch
from gradviz.widget import AutogradWidget, animate
from gradviz.widget.standalone import SYNCED
from widget_lessons import LESSONS

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


class RecordingComm:
    """A comm that keeps what is sent (``opened``, ``sent``) and lets a test play the front end."""

    kernel = "a kernel"

    def __init__(self, **args):
        self.comm_id = f"comm-{id(self):x}"
        self.opened = args
        self.sent = []
        self.handlers = []
        self.closed = False

    def send(self, data=None, metadata=None, buffers=None):
        self.sent.append(json.loads(json.dumps(data)))     # what would go over the wire

    def on_msg(self, callback):
        self.handlers.append(callback)

    def close(self, *args, **kwargs):
        self.closed = True

    # the front end speaking
    def from_front_end(self, data):
        for handler in self.handlers:
            handler({"content": {"comm_id": self.comm_id, "data": data}, "buffers": []})

    def updates(self):
        return [m["state"] for m in self.sent if m.get("method") == "update"]


@pytest.fixture
def comms(monkeypatch):
    made = []

    def create_comm(**args):
        c = RecordingComm(**args)
        made.append(c)
        return c

    monkeypatch.setattr(comm, "create_comm", create_comm)
    return made


@pytest.fixture
def seed(comms):
    root, names, _ = LESSONS["seed"]()
    w = AutogradWidget(root, names=names)
    return w, comms[-1], names


# --- what is synced --------------------------------------------------------------------------------

def test_everything_goes_out_in_the_open_message(seed):
    w, c, _ = seed
    state = c.opened["data"]["state"]
    for name in SYNCED:
        assert name in state, name
        assert state[name] == json.loads(json.dumps(getattr(w, name))), name
    assert state["svg"].startswith("<svg") and 'id="gv-n0"' in state["svg"]
    assert len(state["frames"]) == 19 and state["frame"] == 0
    assert state["live"] is True and state["lang"] == "en"
    assert state["_esm"].lstrip().startswith("// gradviz teaching widget")
    assert ".gv-widget" in state["_css"]
    assert c.sent == []                      # nothing more to say until something changes


def test_every_trait_has_help():
    for name in SYNCED:
        assert AutogradWidget.class_traits()[name].help, name


def test_the_front_end_moving_the_frame(seed):
    w, c, _ = seed
    c.from_front_end({"method": "update", "state": {"frame": 7, "playing": True}})
    assert w.frame == 7 and w.playing is True
    assert c.updates() == []                 # an echo of what the front end said is not sent back


def test_lang_sends_the_korean_words(seed):
    w, c, _ = seed
    w.lang = "ko"
    sent = {}
    for u in c.updates():
        sent.update(u)
    assert sent["lang"] == "ko"
    assert sent["strings"]["play"] == "재생"
    assert w.caption(0).startswith("o의 계산 그래프")
    with pytest.raises(Exception):
        w.lang = "fr"


def test_backward_button_appends_the_real_steps(seed):
    w, c, names = seed
    n = len(w.frames)
    c.from_front_end({"method": "custom", "content": {"type": "backward", "retain_graph": True}})
    assert names["x"].grad.tolist() == [10.0, 10.0]       # the real tensor: None -> 10
    kinds = [f["kind"] for f in w.frames[n:]]
    assert kinds == ["sync", "seed"] + ["node"] * 5 + ["acc", "done"]
    assert "it wrote no .grad" in w.caption(n)
    (last,) = [u for u in c.updates() if "frames" in u]
    assert len(last["frames"]) == len(w.frames) and last["frame"] == n and last["playing"] is True

    c.from_front_end({"method": "custom", "content": {"type": "backward", "retain_graph": False}})
    assert names["x"].grad.tolist() == [20.0, 20.0]
    acc = [i for i, f in enumerate(w.frames) if f["kind"] == "acc"][-1]
    assert w.caption(acc) == ("AccumulateGrad adds [10., 10.] into x.grad: [10., 10.] + [10., 10.] = [20., 20.] "
                              "(gradients accumulate!)")
    # what this call added is what the chain rule says; the .grad holds two calls' worth
    assert w.frames[acc]["set"]["check:x"]["ok"] is True
    assert w.frames[acc]["set"]["check:x"]["added"] == "[10., 10.]"
    assert w.frames[acc]["set"]["check:x"]["total_times"] == 2

    c.from_front_end({"method": "custom", "content": {"type": "zero"}})
    assert names["x"].grad.tolist() == [0.0, 0.0]
    assert w.caption(len(w.frames) - 1) == "x.grad.zero_(): [20., 20.] → [0., 0.]"


def test_a_freed_graph_is_a_message_not_a_traceback(seed, capsys):
    w, c, names = seed
    w.forward_again = False                      # (on, the widget would run the forward pass again)
    c.from_front_end({"method": "custom", "content": {"type": "backward", "retain_graph": False}})
    c.from_front_end({"method": "custom", "content": {"type": "backward", "retain_graph": False}})
    last = w.frames[-1]
    assert last["kind"] == "error"
    assert last["error"].startswith("Trying to backward through the graph a second time")
    assert "Trying to backward through the graph a second time" in w.caption(len(w.frames) - 1)
    assert w.frames[w.frame]["kind"] == "seed" and w.playing       # it plays from the seed to the error
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err
    assert names["x"].grad.tolist() == [10.0, 10.0]



def test_the_button_says_what_its_toggles_were_when_pressed(seed):
    """The toggles' own updates may still be held back by ipywidgets (one sync at a time, the last
    frame's first) when the press arrives: the press carries them, and they win over the trait."""
    w, c, names = seed
    assert w.forward_again                        # the trait still says on: its update is on its way
    c.from_front_end({"method": "custom", "content": {"type": "backward", "retain_graph": False,
                                                      "forward_again": False}})
    c.from_front_end({"method": "custom", "content": {"type": "backward", "retain_graph": False,
                                                      "forward_again": False}})
    assert w.frames[-1]["kind"] == "error"
    assert w.frames[-1]["error"].startswith("Trying to backward through the graph a second time")
    assert names["x"].grad.tolist() == [10.0, 10.0]
    c.from_front_end({"method": "custom", "content": {"type": "backward", "retain_graph": False,
                                                      "forward_again": True}})
    assert names["x"].grad.tolist() == [20.0, 20.0]   # run again from the leaves, then backward()

def test_notebook_changes_show_up_as_a_frame(seed):
    w, c, names = seed
    root = w._animation.root
    root.backward(retain_graph=True)             # the notebook's own cell gives what the widget shows
    w.backward(retain_graph=True)
    assert "sync" not in [f["kind"] for f in w.frames]
    root.backward(retain_graph=True)             # ... and once more, behind the widget's back
    w.backward(retain_graph=True)
    n = [f["kind"] for f in w.frames].index("sync")
    assert w.caption(n) == "Since the last step shown, the notebook changed .grad: x.grad is now [30., 30.]"
    acc = [i for i, f in enumerate(w.frames) if f["kind"] == "acc"][-1]
    assert "[30., 30.] + [10., 10.] = [40., 40.]" in w.caption(acc)


def test_unexpected_errors_in_a_handler_stay_in_the_widget(seed, monkeypatch):
    w, c, _ = seed

    def broken(self, *a, **k):
        raise ValueError("something odd")

    monkeypatch.setattr(AutogradWidget, "zero_grad", broken)
    c.from_front_end({"method": "custom", "content": {"type": "zero"}})
    assert w.frames[-1]["kind"] == "error" and "ValueError: something odd" in w.frames[-1]["error"]


# --- animate() and its promises ------------------------------------------------------------------

def test_animate_leaves_the_notebook_as_it_was(comms):
    x = torch.ones(2, requires_grad=True)
    y = 5 * (x + 1) ** 2
    o = (1 / 2) * torch.sum(y)
    w = gradviz.animate(o)
    assert isinstance(w, AutogradWidget)
    assert x.grad is None
    assert w.root_name == "o"                                   # names from the calling frame
    assert [n["name"] for n in w.graph["nodes"] if n["name"]] == ["x", "y", "o"]
    o.backward()                                                # the lesson's next cell
    assert x.grad.tolist() == [10.0, 10.0]
    with pytest.raises(RuntimeError, match="second time"):
        o.backward()


def test_animate_keeps_an_existing_grad_object(comms):
    x = torch.ones(2, requires_grad=True)
    o = (3 * x).sum()
    o.backward(retain_graph=True)
    g = x.grad
    w = animate(o)
    assert x.grad is g and g.tolist() == [3.0, 3.0]
    acc = next(f for f in w.frames if f["kind"] == "acc")
    assert acc["event"]["grad_before"] == [3.0, 3.0] and acc["event"]["grad_after"] == [6.0, 6.0]


def test_animate_after_a_freeing_backward_shows_the_engine_error(comms):
    x = torch.ones(2, requires_grad=True)
    o = (x * x).sum()
    o.backward()
    w = animate(o)
    assert w.frames[-1]["kind"] == "error"
    assert x.grad.tolist() == [2.0, 2.0]


def test_a_tensor_without_grad(comms):
    x = torch.ones(2)
    w = animate(x * 2)
    assert w.frames[0]["msg"][0] == "cap_no_grad"


def test_a_tensor_made_under_no_grad_keeps_its_name(comms):
    x = torch.ones(2, requires_grad=True)
    with torch.no_grad():
        z = x * 2
    w = animate(z)
    assert w.root_name == "z" and w.caption(len(w.frames) - 1).startswith("z does not require grad")


@pytest.mark.parametrize("gradient, says", [
    (torch.ones(3), "Mismatch in shape: grad_output[0] has a shape of gradviz.Size([3])"),
    ("abc", "gradients can be either Tensors or None, but got str"),
])
def test_a_gradient_the_engine_refuses_is_its_message(comms, gradient, says):
    x = torch.ones(2, requires_grad=True)
    y = x * 2
    w = animate(y, gradient)
    assert w.frames[-1]["kind"] == "error" and says in w.frames[-1]["error"]
    assert w.derivation["leaves"][0]["chain"] == "0"      # no numbers made up for a refused seed
    assert x.grad is None


def test_animate_rejects_what_is_not_a_tensor():
    with pytest.raises(TypeError, match="not a list"):
        animate([1, 2])


def test_no_renderer_is_said_inside_the_widget(comms, monkeypatch):
    from gradviz.drawing import picture
    from gradviz.drawing.render import RendererNotFound

    def missing(self, *a, **k):
        raise RendererNotFound("cannot draw the graph: the Graphviz command 'nope' was not found. "
                               "Either `pip install graphviz-pure` ...")

    monkeypatch.setattr(picture.Drawing, "svg", missing)
    root, names, _ = LESSONS["seed"]()
    w = AutogradWidget(root, names=names)
    assert w.svg == ""
    assert "cannot draw the graph" in w.error and "graphviz-pure" in w.error
    assert len(w.frames) == 19 and w.derivation["leaves"]       # captions and derivation still play


def test_presenter_speed_and_view(comms):
    root, names, _ = LESSONS["neuron"]()
    w = AutogradWidget(root, names=names, presenter=True, speed=2, view="pytorch")
    assert w.presenter is True and w.speed == 2.0
    assert w.graph["view"] == "pytorch" and "gv-pytorch" in w.svg
    assert [f["kind"] for f in w.frames].count("node") == 4


def test_display_bundle_carries_a_self_contained_fallback(seed):
    w, c, _ = seed
    data, metadata = w._repr_mimebundle_()
    assert data[WIDGET_VIEW]["model_id"] == c.comm_id
    html = data["text/html"]
    assert html.startswith('<div class="gv-host"') and "bootStandalone(document)" in html
    assert '<svg' in html.split('<script type="application/json"')[0]     # the graph, even without scripts


WIDGET_LIBRARIES = "('anywidget', 'ipywidgets', 'graphviz', 'latex2mathml', 'traitlets')"


def run_fresh(code):
    """Run ``code`` in a fresh interpreter, then fail if it loaded any widget or drawing library."""
    code += f"; import sys; bad = [m for m in {WIDGET_LIBRARIES} if m in sys.modules]; assert not bad, bad"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_importing_gradviz_loads_no_widget_library():
    run_fresh("import gradviz as torch; x = torch.ones(2, requires_grad=True); (x * 2).sum().backward()")


def test_lazy_names_on_the_package():
    assert gradviz.animate is animate and gradviz.AutogradWidget is AutogradWidget


def test_star_import_is_light_and_hides_no_builtin():
    run_fresh("from gradviz import *; import gradviz; "
              "assert {'tensor', 'no_grad', 'Variable', 'autograd'} <= set(gradviz.__all__); "
              "assert int(2.5) == 2 and max([1, 2]) == 2 and float is type(1.0)")


def test_state_round_trips_through_json(seed):
    w, _, _ = seed
    state = w.state()
    assert json.loads(json.dumps(state, allow_nan=False)) == state
    assert set(state) == set(SYNCED)


def test_big_numbers_and_nan_stay_json(comms):
    x = torch.tensor([1.0, 0.0], requires_grad=True)
    with np.errstate(all="ignore"):
        o = (x.log() * x).sum()                                 # log(0) * 0: nan in the gradient
    with warnings.catch_warnings():
        warnings.simplefilter("error")                          # the widget itself warns about nothing
        with np.errstate(all="ignore"):                         # (the engine's own numpy may)
            w = animate(o)
        json.dumps(w.frames, allow_nan=False)
        json.dumps(w.derivation, allow_nan=False)
    assert any("nan" in json.dumps(f["event"]) for f in w.frames if f["event"])


def test_a_bug_in_the_frames_is_said_inside_the_widget(comms, monkeypatch):
    from gradviz.widget import pipeline

    def broken(*a, **k):
        raise KeyError("oops")

    monkeypatch.setattr(pipeline, "forward_frames", broken)
    root, names, _ = LESSONS["seed"]()
    w = AutogradWidget(root, names=names)
    assert "the animation could not be built (KeyError" in w.error
    assert len(w.frames) == 1 and w.svg.startswith("<svg")
