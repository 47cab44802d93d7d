"""ravel, movedim, fliplr/flipud, take_along_dim, outer, argwhere, count_nonzero, meshgrid, tril/triu_indices,
finfo/iinfo and the small integer casts, as PyTorch prints them (see tests/test_programs.py)."""

import warnings

from show import show


def run(torch):
    x = torch.arange(6.).reshape(2, 3).requires_grad_()
    v, w = torch.tensor([1., 2., 3.], requires_grad=True), torch.tensor([4., 5.], requires_grad=True)
    for name, f in [("ravel", lambda: x.ravel()), ("ravel of a transpose", lambda: x.t().ravel()),
                    ("movedim", lambda: x.movedim(0, 1)), ("moveaxis", lambda: torch.moveaxis(x, [0, 1], [1, 0])),
                    ("swapdims", lambda: x.swapdims(0, 1)), ("fliplr", lambda: x.fliplr()), ("flipud", lambda: x.flipud()),
                    ("take_along_dim", lambda: x.take_along_dim(torch.tensor([[0], [2]]), 1)),
                    ("take_along_dim, flat", lambda: torch.take_along_dim(x, torch.tensor([0, 4]))),
                    ("outer", lambda: v.outer(w)), ("ger", lambda: torch.ger(v, w))]:
        r = f()
        print(name, r.tolist(), r.grad_fn.name(), [type(a[0]).__name__ for a in r.grad_fn.next_functions])
    y = torch.arange(24.).reshape(2, 3, 4)
    print(y.movedim((0, 1), (2, 0)).shape, torch.movedim(y, -1, 0).shape, y.movedim((), ()).shape)
    for f in (lambda: y.movedim((0, 1), (2,)), lambda: y.movedim((0, 0), (1, 2)), lambda: y.movedim(3, 0),
              lambda: v.fliplr(), lambda: torch.tensor(1.).flipud(),
              lambda: x.take_along_dim(torch.tensor([0, 1]), 1)):
        show(f)
    t = x.take_along_dim(torch.tensor([[0, 2]]), 1)
    t.sum().backward()
    print(t, x.grad)
    z = torch.tensor([[0, 1, 0], [2, 0, 3]])
    print(torch.argwhere(z), z.argwhere().shape, torch.count_nonzero(z), z.count_nonzero(dim=0), z.count_nonzero((0, 1)))
    gx, gy = torch.meshgrid(v, w, indexing="ij")
    print(gx, gy, gx.grad_fn.name(), [type(a[0]).__name__ for a in gx.grad_fn.next_functions])
    a, b = torch.meshgrid(v, w, indexing="xy")
    print(a, b, a.is_contiguous())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        print(torch.meshgrid(v, w)[0].shape, torch.meshgrid([v, w, v], indexing="ij")[2].shape, len(caught))
    show(lambda: torch.meshgrid(v, w, indexing="yx"))
    print(torch.tril_indices(3, 3), torch.triu_indices(3, 4, 1), torch.tril_indices(4, 3, -1))
    print(torch.finfo(torch.float32), torch.finfo(torch.float32).eps, torch.finfo(torch.float64).eps)
    print(torch.finfo(), torch.finfo(torch.float16).tiny, torch.finfo(torch.float16).bits, torch.finfo(torch.float64))
    print(torch.iinfo(torch.int64), torch.iinfo(torch.uint8).max, torch.iinfo(torch.int32).min, torch.iinfo(torch.int8))
    show(lambda: torch.finfo(torch.int64))
    show(lambda: torch.iinfo(torch.float32))
    print(torch.tensor([1.5, -2]).char(), torch.tensor([1.5, 200]).byte(), torch.tensor([1.5, -2]).short())
