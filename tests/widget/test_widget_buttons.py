"""The live buttons in the usual flows: after Run All, and after any number of presses.

A notebook's own ``o.backward()`` (run after ``animate(o)``) frees the graph; the widget's
backward() then runs the forward pass again from the leaves (said in a caption); its check
compares what the call added with the chain rule (✓) and says the .grad holds 2 calls' worth.  The freed-graph error stays one untick away.
"""

import numpy as np
import pytest

import gradviz as torch
from gradviz.value_text import node_text, summary
from gradviz.widget import AutogradWidget
from widget_lessons import LESSONS


def checks(w, start):
    """The check-line slots set by the frames from ``start`` on, in order."""
    return [v for f in w.frames[start:] for k, v in f["set"].items() if k.startswith("check:")]


def press(w, **kw):
    start = len(w.frames)
    w.backward(**kw)
    return w.frames[start:]


@pytest.mark.parametrize("name", ["seed", "tutorial", "neuron", "tiny_mlp", "fan_out"])
def test_after_run_all_backward_then_backward_shows_accumulation(name):
    root, names, gradient = LESSONS[name]()
    w = AutogradWidget(root, gradient, names=names)
    root.backward(gradient)                                  # the lesson's own cell: frees the graph
    first = press(w)
    kinds = [f["kind"] for f in first]
    assert "error" not in kinds, [w.caption(len(w.frames) - len(first) + i) for i in range(len(first))]
    assert "cap_forward_again_freed" in [f["msg"][0] for f in first]
    done = [c for c in checks(w, len(w.frames) - len(first))]
    # what this call added agrees with the chain rule (✓), and the .grad holds 2 calls' worth (Σ = 2×)
    assert done and all(c["ok"] is True and c.get("total_times") == 2 for c in done[-len(w._animation.lesson.leaves):])
    second = press(w)
    assert "error" not in [f["kind"] for f in second]
    assert all(c["ok"] is True and c.get("total_times") == 3
               for c in checks(w, len(w.frames) - len(second))[-len(w._animation.lesson.leaves):])


def test_captions_count_only_the_users_calls():
    root, names, _ = LESSONS["seed"]()
    w = AutogradWidget(root, names=names)
    assert all(w.caption(i).startswith("animate() runs") for i, f in enumerate(w.frames) if f["kind"] == "seed")
    first = press(w)
    k = len(w.frames) - len(first)
    seeds = [w.caption(k + i) for i, f in enumerate(first) if f["kind"] == "seed"]
    assert seeds and seeds[0].startswith("backward() call 1 ")
    second = press(w)
    k = len(w.frames) - len(second)
    assert [w.caption(k + i) for i, f in enumerate(second) if f["kind"] == "seed"][0].startswith("backward() call 2 ")


def test_without_forward_again_the_freed_graph_error_is_shown_and_explained():
    root, names, _ = LESSONS["seed"]()
    w = AutogradWidget(root, names=names)
    w.forward_again = False
    press(w)                                      # retain_graph=False: this one frees the graph
    frames = press(w)
    kinds = [f["kind"] for f in frames]
    assert "error" in kinds
    i = len(w.frames) - len(frames) + kinds.index("error")
    assert "backward through the graph a second time" in w.caption(i)
    assert "retain_graph=True" in w.caption(i) and "forward again" in w.caption(i)   # the hint says what to do
    w.lang = "ko"
    assert "retain_graph=True" in w.caption(i) and "해제" in w.caption(i)


def test_a_leaf_changed_in_place_runs_the_forward_pass_again():
    x = torch.ones(2, requires_grad=True)
    o = (x * x).sum()
    w = AutogradWidget(o, names={"x": x, "o": o})
    with torch.no_grad():
        x += 1                                    # a training step: the saved x is stale
    frames = press(w)
    assert "cap_forward_again_modified" in [f["msg"][0] for f in frames]
    assert "error" not in [f["kind"] for f in frames]
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 4.0])         # d(x²)/dx at the new x = 2


def slots_at(w, k):
    """Every slot as the picture shows it at step ``k``: the last value set at or before it (widget.js)."""
    shown = {}
    for f in w.frames[:k + 1]:
        shown.update(f["set"])
    return shown


@pytest.mark.parametrize("name", ["seed", "neuron", "tiny_mlp"])
def test_the_final_frame_shows_no_grad_on_intermediates(name):
    """Issue 8 item 9: once backward() is done, only leaves keep a .grad (lessons 1 and 6)."""
    root, names, gradient = LESSONS[name]()
    w = AutogradWidget(root, gradient, names=names)
    for _ in range(2):                                  # animate()'s pass, then a press of backward
        last = len(w.frames) - 1
        assert w.frames[last]["kind"] == "done"
        shown = slots_at(w, last)
        kinds = {n["id"]: n["kind"] for n in w.graph["nodes"]}
        grads = {k[5:]: v for k, v in shown.items() if k.startswith("grad:")}
        assert all(v == "" for k, v in grads.items() if kinds[k] != "leaf"), grads
        assert all(grads[n].startswith(".grad ") for n, kind in kinds.items() if kind == "leaf" and
                   names[next(x["name"] for x in w.graph["nodes"] if x["id"] == n)].requires_grad)
        w.backward()


def test_after_the_pass_only_leaves_keep_a_grad():
    root, names, _ = LESSONS["seed"]()
    w = AutogradWidget(root, names=names)
    shown = {}
    for f in w.frames:
        shown.update(f["set"])
        if f["kind"] == "node":
            assert any(v.startswith("grad ") for k, v in f["set"].items() if k.startswith("grad:"))
    values = {n["id"] for n in w.graph["nodes"] if n["kind"] == "value"}
    leaves = {n["id"] for n in w.graph["nodes"] if n["kind"] == "leaf"}
    assert all(shown.get(f"grad:{v}", "") == "" for v in values)            # passed through, gone
    assert all(shown[f"grad:{v}"].startswith(".grad ") for v in leaves)     # kept, as in PyTorch


def test_retain_grad_tensors_keep_theirs():
    x = torch.ones(2, requires_grad=True)
    y = x * 3
    y.retain_grad()
    o = y.sum()
    w = AutogradWidget(o, names={"x": x, "y": y, "o": o})
    shown = {}
    for f in w.frames:
        shown.update(f["set"])
    yid = next(n["id"] for n in w.graph["nodes"] if n.get("name") == "y" and n["kind"] == "value")
    assert shown[f"grad:{yid}"] == ".grad [1., 1.]"


def test_batch_captions_do_not_show_a_misleading_first_row():
    root, names, _ = LESSONS["tiny_mlp"]()
    w = AutogradWidget(root, names=names)
    text = " ".join(w.caption(i) for i in range(len(w.frames)))
    assert "[0., 0., 0., 0.]," not in text.replace("zeros(", "")
    assert "‖·‖ = " in text


def last_checks(w):
    """Each leaf's check as the panel shows it at the last frame (the latest value set)."""
    return {k: v for k, v in slots_at(w, len(w.frames) - 1).items() if k.startswith("check:")}


def _mlp():
    torch.manual_seed(0)
    X = torch.tensor([[0., 0.], [0., 1.], [1., 0.], [1., 1.]])
    Y = torch.tensor([[0.], [1.], [1.], [0.]])
    W1, b1 = torch.randn(2, 4, requires_grad=True), torch.zeros(4, requires_grad=True)
    W2, b2 = torch.randn(4, 1, requires_grad=True), torch.zeros(1, requires_grad=True)
    params = [W1, b1, W2, b2]

    def loss_of():
        return (((torch.tanh(X @ W1 + b1) @ W2 + b2) - Y) ** 2).mean()
    return loss_of, params, dict(X=X, Y=Y, W1=W1, b1=b1, W2=W2, b2=b2)


def test_after_training_backward_redraws_every_value_and_checks_at_them():
    """Issue 21 item 4, lesson 6: animate(loss), train in place, then press backward(), zero_(), backward()."""
    loss_of, params, names = _mlp()
    loss = loss_of()
    w = AutogradWidget(loss, names=dict(names, loss=loss))
    before = float(loss.item())
    for _ in range(50):
        loss = loss_of()
        for p in params:
            p.grad = None
        loss.backward()
        with torch.no_grad():
            for p in params:
                p -= 0.2 * p.grad
    now = float(loss_of().item())
    assert abs(now - before) > 1e-3
    frames = press(w)
    again = [f for f in frames if f["kind"] == "forward_again"]
    assert len(again) == 1 and again[0]["msg"][0] == "cap_forward_again_modified"
    root_slot = f"val:{w._animation.ids.value(w._animation.lesson.root_step)}"
    assert again[0]["set"][root_slot] == node_text(np.float32(now)) != node_text(np.float32(before))
    assert again[0]["msg"][1]["value"] == summary(np.float32(now))
    checks_now = last_checks(w)
    assert len(checks_now) == 4 and all(c["ok"] is True for c in checks_now.values()), checks_now
    # the derivation shown is the one at the new values: its chain-rule results are the engine's
    chain = {leaf["leaf"]: leaf["chain"] for leaf in w.derivation["leaves"]}
    assert set(chain) == {"W1", "b1", "W2", "b2"}
    w.zero_grad()
    press(w)
    assert all(c["ok"] is True for c in last_checks(w).values()), last_checks(w)


def test_a_leaf_changed_without_a_version_bump_also_runs_the_forward_pass_again():
    x = torch.ones(2, requires_grad=True)
    o = (x * x).sum()
    w = AutogradWidget(o, names={"x": x, "o": o})
    x.data.mul_(3)                                # no version bump: the saved x is not "modified"
    frames = press(w)
    assert "cap_forward_again_modified" in [f["msg"][0] for f in frames]
    assert last_checks(w)["check:x"]["ok"] is True
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 6.0])


def test_the_notebooks_own_call_with_another_gradient_is_no_cross():
    """Issue 21 item 4, lesson 5: the last cell used another gradient=; the press uses animate()'s."""
    x = torch.ones(2, 2, requires_grad=True)
    z = (2 * x + 3) * (2 * x + 3) * 3
    v = torch.tensor([[0., 1.], [1., 0.]])
    w = AutogradWidget(z, v, names={"x": x, "z": z})
    z.backward(torch.tensor([[0., 0.], [1., 1.]]), retain_graph=True)
    frames = press(w)
    sync = [f for f in frames if f["kind"] == "sync"]
    assert sync and sync[0]["set"]["check:x"]["ok"] is None          # not the widget's gradient: no mark
    c = last_checks(w)["check:x"]
    assert c["ok"] is True and c["added"] == "[[ 0., 60.], [60., 0.]]", c
    w.zero_grad()
    press(w)
    assert last_checks(w)["check:x"]["ok"] is True


@pytest.mark.parametrize("name", ["seed", "tutorial", "neuron", "tiny_mlp", "fan_out"])
def test_any_button_sequence_ends_with_a_tick(name):
    root, names, gradient = LESSONS[name]()
    w = AutogradWidget(root, gradient, names=names)
    root.backward(gradient)
    for act in ("backward", "zero", "backward", "backward", "zero", "zero", "backward"):
        w.backward() if act == "backward" else w.zero_grad()
        if act == "backward":
            assert all(c["ok"] is True for c in last_checks(w).values()), (act, last_checks(w))


def test_a_collapsed_model_runs_its_layers_ops_again_and_ends_with_a_tick():
    """collapse=model folds each layer into one node, but its ops are the op table's: after
    backward() (retain_graph=False), a training step and zero_(), another backward() runs the
    forward pass again op by op from the parameters as they are now, and checks ✓ (issue 21)."""
    import gradviz
    gradviz.manual_seed(0)
    model = gradviz.nn.Sequential(gradviz.nn.Linear(2, 3), gradviz.nn.Tanh(), gradviz.nn.Linear(3, 1))
    X, Y = gradviz.randn(4, 2), gradviz.randn(4, 1)
    loss = gradviz.nn.MSELoss()(model(X), Y)
    w = gradviz.animate(loss, collapse=model)
    w.backward()
    assert w.frames[-1]["kind"] == "done"
    with gradviz.no_grad():
        for p in model.parameters():
            p -= 0.1 * p.grad
    w.zero_grad()
    w.backward()
    kinds = [f["kind"] for f in w.frames]
    assert w.frames[-1]["kind"] == "done" and "error" not in kinds and not any(f.get("unchecked") for f in w.frames)
    again = [f for f in w.frames if f["kind"] == "forward_again"]
    assert len(again) == 1 and again[0]["msg"][0] == "cap_forward_again_freed"
    now = gradviz.nn.MSELoss()(model(X), Y)
    assert again[0]["msg"][1]["value"] == summary(now.detach().numpy())     # the value at the new parameters
    checks = last_checks(w)
    assert checks and all(c["ok"] is True for c in checks.values()), checks
    for p in model.parameters():
        p.grad = None
    now.backward()
    want = [p.grad.clone() for p in model.parameters()]
    w.zero_grad()
    for p, g in zip(model.parameters(), want):
        p.grad = None
    w.backward()
    assert all(gradviz.allclose(p.grad, g) for p, g in zip(model.parameters(), want))


def test_a_split_runs_again_and_its_pieces_are_checked_at_the_new_values():
    """A node of several outputs (p, q = a.split(2)) has no hand rule: its numbers are the engine's.
    After Run All and a training step, backward(), zero_(), backward() runs it again and reads its
    numbers from that press's pass, so the check is ✓ at the new values (not ✗ from the old ones)."""
    a = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    p, q = a.split(2)
    o = (p * 2 + q.exp()).sum()
    w = AutogradWidget(o, names={"a": a, "p": p, "q": q, "o": o})
    o.backward()
    with torch.no_grad():
        a -= 0.1
    for act in ("backward", "zero", "backward"):
        w.backward() if act == "backward" else w.zero_grad()
    assert w.frames[-1]["kind"] == "done" and not any(f.get("unchecked") for f in w.frames)
    assert last_checks(w)["check:a"]["ok"] is True
    np.testing.assert_allclose(a.grad.numpy(), [2.0, 2.0, np.exp(2.9), np.exp(3.9)], rtol=1e-6)
