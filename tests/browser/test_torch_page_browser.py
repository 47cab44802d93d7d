"""A saved page made from real torch tensors plays offline, the same as one made with gradviz's engine."""

import pytest

from .conftest import caption, open_saved, step_through

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

import gradviz  # noqa: E402


@pytest.fixture(scope="module")
def torch_page(tmp_path_factory):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.Tanh(), torch.nn.Linear(3, 2))
    X, Y = torch.tensor([[0., 1.], [1., 0.]]), torch.tensor([1, 0])
    with gradviz.watch():
        loss = torch.nn.CrossEntropyLoss()(model(X), Y)
    w = gradviz.animate(loss, collapse=model, names={"model": model, "X": X, "Y": Y, "loss": loss})
    path = tmp_path_factory.mktemp("torch") / "torch.html"
    w.save_html(path)
    return w, path


def test_a_page_from_real_torch_plays_offline(offline_page, torch_page, artifacts):
    w, path = torch_page
    page = offline_page
    widget = open_saved(page, w, path)
    step_through(widget, w)                                    # every step shows what Python said
    assert "model.0.weight.grad" in caption(widget)
    text = widget.inner_text()
    assert "model.0" in text and "NllLossBackward0" in "".join(w.caption(k) for k in range(len(w.frames)))
    page.screenshot(path=str(artifacts / "torch-page.png"))
    assert page.gv_errors == [] and page.gv_blocked == []
