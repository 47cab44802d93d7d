"""gradviz.utils.data against PyTorch 2.13: the same batches in the same order (shuffled after
manual_seed, or with a generator), collation of tensors, numbers, tuples and dicts, random_split,
samplers, and the random numbers drawn after a pass."""

import pytest

import gradviz
from parity import printed

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

PROGRAMS = {
    "in order": """D = torch.utils.data
torch.manual_seed(7)
ds = D.TensorDataset(torch.arange(14.).reshape(7, 2), torch.arange(7) % 3)
print(len(ds), ds[2], len(D.DataLoader(ds, batch_size=3)), len(D.DataLoader(ds, batch_size=3, drop_last=True)))
for xb, yb in D.DataLoader(ds, batch_size=3):
    print(xb, yb)
for b in D.DataLoader(ds, batch_size=3, drop_last=True):
    print(type(b).__name__, b)
for b in D.DataLoader(ds, batch_size=None):
    print(b)
print(torch.rand(2))
""",
    "shuffled after manual_seed": """D = torch.utils.data
torch.manual_seed(0)
ds = D.TensorDataset(torch.randn(10, 2), torch.arange(10))
dl = D.DataLoader(ds, batch_size=4, shuffle=True)
for epoch in range(3):
    print([yb.tolist() for _, yb in dl])
print(torch.rand(3))
dl = D.DataLoader(ds, batch_size=3, shuffle=True, drop_last=True)
for epoch in range(2):
    for xb, yb in dl:
        print(xb, yb)
print(torch.randn(2))
""",
    "a generator of its own": """D = torch.utils.data
torch.manual_seed(2)
g = torch.Generator().manual_seed(42)
dl = D.DataLoader(list(range(9)), batch_size=2, shuffle=True, generator=g)
print([b.tolist() for b in dl], [b.tolist() for b in dl], torch.initial_seed() is not None)
torch.manual_seed(1)
print(list(D.RandomSampler(range(5))), list(D.RandomSampler(range(5), replacement=True, num_samples=40)))
print(list(D.SubsetRandomSampler([10, 20, 30])), list(D.WeightedRandomSampler([0.1, 0.9, 0.4], 6)))
print(list(D.BatchSampler(D.SequentialSampler(range(7)), 3, False)), list(D.BatchSampler(range(7), 3, True)))
print(torch.rand(2))
""",
    "collate": """D = torch.utils.data
c = D.default_collate
print(c([1, 2, 3]), c([1.5, 2.0]), c([True, False]), c(["a", "b"]), c([(1, 2.0), (3, 4.0)]))
print(c([{"x": torch.ones(2), "y": 1}, {"x": torch.zeros(2), "y": 2}]), c([[1, 2], [3, 4]]))
import collections
P = collections.namedtuple("P", "a b")
print(c([P(1, torch.tensor(2.)), P(3, torch.tensor(4.))]))
import numpy as np
print(c([np.array([1., 2.]), np.array([3., 4.])]), c([np.float32(1.5), np.float32(2.5)]), D.default_convert(np.arange(3)))
try:
    c([[1, 2], [3]])
except RuntimeError as e:
    print(e)
try:
    c([object()])
except TypeError as e:
    print(str(e)[:60])
class Squares(D.Dataset):
    def __len__(self):
        return 5
    def __getitem__(self, i):
        return {"x": torch.tensor([float(i)]), "y": i * i}
for b in D.DataLoader(Squares(), batch_size=2):
    print(b)
print(len(Squares() + Squares()), (Squares() + Squares())[7])
""",
    "random_split and subsets": """D = torch.utils.data
torch.manual_seed(3)
a, b = D.random_split(range(10), [3, 7])
print(list(a), list(b), len(a))
a, b, c = D.random_split(range(11), [0.3, 0.3, 0.4], generator=torch.Generator().manual_seed(42))
print(list(a), list(b), list(c))
print([list(s) for s in D.random_split(range(2), [0.5, 0.5, 0.0])])
try:
    D.random_split(range(5), [2, 2])
except ValueError as e:
    print(e)
try:
    D.TensorDataset(torch.ones(3), torch.ones(4))
except AssertionError as e:
    print("AssertionError", e)
print(torch.rand(1))
""",
    "errors": """D = torch.utils.data
for kw in [dict(shuffle=True, sampler=[0, 1]), dict(batch_size=0), dict(batch_size=None, drop_last=True),
           dict(num_workers=-1), dict(batch_sampler=[[0]], batch_size=2), dict(persistent_workers=True)]:
    try:
        D.DataLoader(range(4), **kw)
    except ValueError as e:
        print(e)
""",
    "a course's loop: random_split, pin_memory, a wrapped loader, OneCycleLR": """torch.manual_seed(42)
D = torch.utils.data
ds = D.TensorDataset(torch.randn(20, 3), torch.randint(0, 2, (20,)))
train_ds, val_ds = D.random_split(ds, [15, 5])
train_dl = D.DataLoader(train_ds, batch_size=4, shuffle=True, num_workers=0, pin_memory=True)
val_dl = D.DataLoader(val_ds, batch_size=8)
class WrappedDataLoader:
    def __init__(self, dl, func):
        self.dl, self.func = dl, func
    def __len__(self):
        return len(self.dl)
    def __iter__(self):
        for b in self.dl:
            yield self.func(*b)
wdl = WrappedDataLoader(train_dl, lambda x, y: (x * 2, y))
model = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
opt = torch.optim.SGD(model.parameters(), 0.05, momentum=0.9, weight_decay=1e-4)
sched = torch.optim.lr_scheduler.OneCycleLR(opt, 0.1, epochs=2, steps_per_epoch=len(wdl))
for epoch in range(2):
    model.train()
    for xb, yb in wdl:
        loss = torch.nn.functional.cross_entropy(model(xb), yb)
        loss.backward(); opt.step(); opt.zero_grad(); sched.step()
    model.eval()
    with torch.no_grad():
        losses = [torch.nn.functional.cross_entropy(model(xb), yb, reduction="sum") for xb, yb in val_dl]
        print(epoch, loss.item(), torch.stack(losses).sum().item() / len(val_ds), sched.get_last_lr())
""",
    "an iterable dataset": """D = torch.utils.data
class Stream(D.IterableDataset):
    def __iter__(self):
        return iter(range(7))
print([b.tolist() for b in D.DataLoader(Stream(), batch_size=3)], [b for b in D.DataLoader(Stream(), batch_size=None)][:2])
""",
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_as_torch(name):
    assert printed(gradviz, PROGRAMS[name]) == printed(torch, PROGRAMS[name])


def test_module_paths():
    import gradviz.utils.data as data
    from gradviz.utils.data import DataLoader
    assert data.DataLoader is DataLoader is gradviz.utils.data.DataLoader
    assert DataLoader.__module__ == "gradviz.utils.data.dataloader"
