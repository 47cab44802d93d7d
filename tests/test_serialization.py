"""gradviz.save / gradviz.load against PyTorch 2.13: what comes back (tensors, views, parameters,
state_dicts, optimiser states, containers), load_state_dict's reports and errors, weights_only's
refusal; files written by either library read by the other; a seeded training loop with a
DataLoader, a scheduler and a checkpoint in the middle prints torch's losses and rates."""

import io
import pathlib

import pytest

import gradviz
from parity import printed

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

ROUND_TRIP = """torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
opt = torch.optim.Adam(m.parameters(), lr=0.01)
m(torch.randn(5, 3)).sum().backward(); opt.step()
obj = {"model": m.state_dict(), "opt": opt.state_dict(), "epoch": 3, "t": torch.arange(6).reshape(2, 3).t(),
       "p": torch.nn.Parameter(torch.ones(2)), "g": torch.ones(2, requires_grad=True),
       "list": [1, 2.5, "s", None, (1, 2), {3}, b"ab", 2 + 1j], "size": torch.Size([2, 3]), "dt": torch.float64,
       "b": torch.tensor([True, False]), "h": torch.ones(2, dtype=torch.float16), "same": [torch.ones(1)] * 2,
       "i8": torch.tensor([-3, 4], dtype=torch.int8), "empty": torch.zeros(0, 3), "scalar": torch.tensor(2.5)}
buf = io.BytesIO(); torch.save(obj, buf); buf.seek(0)
back = torch.load(buf)
for k, v in back.items():
    print(k, type(v).__name__, v)
print(back["same"][0] is back["same"][1], back["t"].stride(), back["p"].requires_grad, back["g"].is_leaf)
x = torch.arange(12.).reshape(3, 4); buf = io.BytesIO(); torch.save([x, x[1], x[:, 2], x.t()], buf); buf.seek(0)
for t in torch.load(buf):
    print(t, t.stride(), t.storage_offset(), t.is_contiguous())
m2 = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
print(m2.load_state_dict(back["model"]))
opt2 = torch.optim.Adam(m2.parameters(), lr=0.5); opt2.load_state_dict(back["opt"]); print(opt2)
print(m2(torch.ones(1, 3)))
torch.save(m.state_dict(), PATH); print(torch.load(PATH, weights_only=True).keys())
try:
    m2.load_state_dict({"0.weight": torch.ones(4, 3), "extra": torch.ones(1)})
except RuntimeError as e:
    print(e)
print(m2.load_state_dict({"0.weight": torch.ones(4, 3), "extra": torch.ones(1)}, strict=False))
import numpy as np
buf = io.BytesIO(); torch.save({"a": np.ones(2)}, buf); buf.seek(0)
try:
    torch.load(buf)
except Exception as e:
    print(type(e).__name__, e)
buf.seek(0); print(type(torch.load(buf, weights_only=False)["a"]).__name__)
"""

CHECKPOINT = """D = torch.utils.data
torch.manual_seed(0)
X = torch.randn(48, 4); y = (X @ torch.tensor([1.0, -2.0, 0.5, 3.0]) > 0).long()
train, valid = D.random_split(D.TensorDataset(X, y), [0.75, 0.25])
def make():
    model = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.Tanh(), torch.nn.Linear(16, 2))
    opt = torch.optim.AdamW(model.named_parameters(), lr=0.02)
    return model, opt, torch.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)
model, opt, sched = make()
dl = D.DataLoader(train, batch_size=8, shuffle=True)
def epoch(model, opt, sched, e):
    for xb, yb in dl:
        loss = torch.nn.functional.cross_entropy(model(xb), yb)
        opt.zero_grad(); loss.backward(); opt.step()
        print(e, loss.item())
    sched.step()
    with torch.no_grad():
        xs, ys = D.default_collate([valid[i] for i in range(len(valid))])
        print("valid", torch.nn.functional.cross_entropy(model(xs), ys).item(), sched.get_last_lr())
for e in range(3):
    epoch(model, opt, sched, e)
buf = io.BytesIO()
torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "sched": sched.state_dict(), "epoch": 3}, buf)
buf.seek(0)
ckpt = torch.load(buf)
model, opt, sched = make()
print(model.load_state_dict(ckpt["model"])); opt.load_state_dict(ckpt["opt"]); sched.load_state_dict(ckpt["sched"])
for e in range(ckpt["epoch"], 6):
    epoch(model, opt, sched, e)
print(opt.state_dict()["param_groups"][0]["lr"], sched.state_dict())
"""


MISMATCH_AND_LOOP = """torch.manual_seed(3)
m = torch.nn.Linear(3, 2)
try:
    m.load_state_dict({"weight": torch.ones(2, 2), "bias": torch.ones(2)})
except RuntimeError as e:
    print(e)
buf = io.BytesIO(); torch.save(torch.arange(5.), buf); buf.seek(0); print(torch.load(buf, map_location="cpu"))
buf.seek(0); print(torch.load(buf, map_location=torch.device("cpu"), weights_only=True))
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
v = x[1:]
y = x * 2
z = y[0]
z.register_hook(lambda g: print("z hook", g))
y.register_hook(lambda g: print("y hook", g))
(z * 3 + y.sum()).backward()
print(x.grad)
ds = torch.utils.data.TensorDataset(torch.arange(10.).view(5, 2), torch.tensor([0, 1, 0, 1, 1]))
dl = torch.utils.data.DataLoader(ds, batch_size=2, shuffle=True, num_workers=0)
torch.manual_seed(5)
for i, (xb, yb) in enumerate(dl):
    print(i, xb.tolist(), yb.tolist())
print(len(dl), len(dl.dataset), next(iter(dl))[1])
opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9, nesterov=True)
sch = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[2, 4], gamma=0.5)
for epoch in range(6):
    for xb, yb in dl:
        loss = torch.nn.functional.cross_entropy(m(torch.cat([xb, xb[:, :1]], 1)), yb)
        opt.zero_grad(); loss.backward(); opt.step()
    sch.step()
    print(epoch, round(loss.item(), 6), sch.get_last_lr(), opt.state_dict()["state"][0]["momentum_buffer"].sum().item())
print(sch.state_dict())
print(torch.randn(2, axis=None) if False else torch.randn(2))
a = torch.arange(6.).reshape(2, 3)
print(torch.cat((a, a.int()), axis=0).dtype, torch.stack([a, a.long()], dim=1).dtype, torch.cat([a.double(), a]).dtype)
print(a.sum(axis=1, keepdims=True), a.max(axis=1).values, a.argsort(axis=1, descending=True), a.mean(axis=-1))
print(torch.norm(a, dim=1), a.norm(dim=0, keepdim=True))
"""


def test_size_mismatch_and_a_multistep_loop_as_torch(tmp_path):
    out = _run(gradviz, MISMATCH_AND_LOOP, tmp_path)
    assert "ERROR" not in out
    assert out == _run(torch, MISMATCH_AND_LOOP, tmp_path)


WHOLE_MODEL = """torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Dropout(0.1), torch.nn.Linear(4, 1))
buf = io.BytesIO(); torch.save(model, buf); buf.seek(0)
try:
    torch.load(buf)
except Exception as e:
    print(type(e).__name__, str(e)[:300])
buf.seek(0)
m2 = torch.load(buf, weights_only=False)
print(m2, type(m2[0]), m2[0].weight, m2.training)
m2.eval(); print(m2(torch.ones(2, 3)))
"""


def test_a_whole_model_as_torch(tmp_path):
    out = _run(gradviz, WHOLE_MODEL, tmp_path)
    assert "Sequential(" in out
    assert out == _run(torch, WHOLE_MODEL, tmp_path)


def _run(L, code, tmp_path):
    return printed(L, code, io=io, PATH=str(tmp_path / "ckpt.pt"))


def test_round_trip_as_torch(tmp_path):
    assert _run(gradviz, ROUND_TRIP, tmp_path) == _run(torch, ROUND_TRIP, tmp_path)


def test_checkpointed_training_loop_as_torch(tmp_path):
    out = _run(gradviz, CHECKPOINT, tmp_path)
    assert "ERROR" not in out
    assert out == _run(torch, CHECKPOINT, tmp_path)


def _checkpoint(L):
    L.manual_seed(1)
    m = L.nn.Linear(3, 2)
    opt = L.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    m(L.ones(1, 3)).sum().backward()
    opt.step()
    x = L.arange(12.).reshape(3, 4)
    return {"m": m.state_dict(), "o": opt.state_dict(), "views": [x, x.t(), x[1]], "i": L.tensor([1, 2]),
            "p": L.nn.Parameter(L.ones(2)), "n": [1, "a", (2.5, None)]}


def _same(a, b):
    if hasattr(a, "detach"):
        assert type(a).__name__ == type(b).__name__ and a.dtype.__repr__().split(".")[-1] == repr(b.dtype).split(".")[-1]
        assert a.tolist() == b.tolist() and a.stride() == b.stride() and a.requires_grad == b.requires_grad
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    else:
        assert a == b


@pytest.mark.parametrize("writer, reader", [(gradviz, torch), (torch, gradviz)])
def test_either_library_reads_the_others_files(writer, reader, tmp_path):
    path = tmp_path / "model.pt"
    writer.save(_checkpoint(writer), path)
    _same(reader.load(path), _checkpoint(reader))
    buf = io.BytesIO()
    writer.save(_checkpoint(writer), buf)
    buf.seek(0)
    _same(reader.load(buf), _checkpoint(reader))


def test_a_gradviz_file_is_torchs_layout(tmp_path):
    import zipfile
    gradviz.save({"w": gradviz.ones(2)}, tmp_path / "weights.pt")
    torch.save({"w": torch.ones(2)}, tmp_path / "torch.pt")
    ours = zipfile.ZipFile(tmp_path / "weights.pt").namelist()
    theirs = zipfile.ZipFile(tmp_path / "torch.pt").namelist()
    assert ours == [n.replace("torch/", "weights/") for n in theirs]
    assert torch.load(tmp_path / "weights.pt", mmap=True)["w"].tolist() == [1.0, 1.0]   # records aligned


def test_safe_globals():
    import collections
    P = collections.namedtuple("P", "a")
    P.__module__ = __name__
    globals()["P"] = P
    buf = io.BytesIO()
    gradviz.save(P(gradviz.ones(1)), buf)
    with pytest.raises(Exception, match="GLOBAL test_serialization.P was not an allowed global"):
        gradviz.load(io.BytesIO(buf.getvalue()))
    with gradviz.serialization.safe_globals([P]):
        assert gradviz.load(io.BytesIO(buf.getvalue())).a.tolist() == [1.0]
    assert gradviz.serialization.get_safe_globals() == []
    assert pathlib.Path(gradviz.serialization.__file__).name == "serialization.py"
