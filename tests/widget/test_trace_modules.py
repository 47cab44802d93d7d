"""animate(loss, collapse=model): each layer as one step carrying the gradients that crossed it."""

import numpy as np

import gradviz
import gradviz as torch
from gradviz.widget import AutogradWidget


def mlp():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.Tanh(), torch.nn.Linear(3, 1))
    X = torch.tensor([[1.0, 2.0], [0.0, 1.0]])
    Y = torch.tensor([[0.0], [1.0]])
    loss = torch.nn.MSELoss()(model(X), Y)
    return model, X, Y, loss


def test_each_layer_is_one_node_and_one_step():
    model, X, Y, loss = mlp()
    w = AutogradWidget(loss, names={"model": model, "X": X, "Y": Y, "loss": loss}, collapse=model)
    ops = [n["label"] for n in w.graph["nodes"] if n["kind"] == "op"]
    assert ops == ["model.0", "tanh", "model.2", "MSE"]
    nodes = [f for f in w.frames if f["kind"] == "node"]
    assert len(nodes) == 4 and w.error == ""
    assert "(model.0): computes X model.0.weightᵀ + model.0.bias" in w.caption(1)   # a Linear: x Wᵀ + b
    layer = next(i for i, f in enumerate(w.frames) if f["kind"] == "node" and "Linear" in w.caption(i))
    assert "sends ∂loss/∂model.2.weight = δᵀ c = " in w.caption(layer)   # the layer's formula, with its numbers


def test_a_layer_sends_the_gradients_its_ops_sent_and_the_parameters_still_accumulate():
    model, X, Y, loss = mlp()
    w = AutogradWidget(loss, names={"model": model, "X": X, "Y": Y, "loss": loss}, collapse=model)
    loss.backward()
    grads = {n: p.grad._data for n, p in model.named_parameters()}
    accs = [f for f in w.frames if f["kind"] == "acc"]
    assert len(accs) == 4
    done = w.caption(len(w.frames) - 1)
    for name, g in grads.items():
        assert f"model.{name}.grad" in done
    assert {leaf["leaf"] for leaf in w.derivation["leaves"]} == {f"model.{n}" for n in grads}
    for leaf in w.derivation["leaves"]:
        want = grads[leaf["leaf"].removeprefix("model.")]
        assert leaf["chain"] == " ".join(gradviz.value_text.format_value(np.asarray(want)).split())


def test_the_backward_button_folds_its_new_events_too():
    model, X, Y, loss = mlp()
    w = AutogradWidget(loss, names={"model": model, "X": X, "Y": Y, "loss": loss}, collapse=model)
    n = len([f for f in w.frames if f["kind"] == "node"])
    w.backward(retain_graph=True)
    assert len([f for f in w.frames if f["kind"] == "node"]) == 2 * n


def test_collapse_takes_modules_only():
    import pytest
    model, X, Y, loss = mlp()
    with pytest.raises(TypeError, match="collapse= takes an nn.Module"):
        AutogradWidget(loss, collapse=5)
