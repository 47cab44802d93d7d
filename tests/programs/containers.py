"""ModuleDict, ParameterList, ParameterDict and Unflatten as a course uses them (see tests/test_programs.py)."""

from collections import OrderedDict

from show import show


def run(torch):
    nn = torch.nn
    torch.manual_seed(0)
    d = nn.ModuleDict({'lin': nn.Linear(2, 3), 'act': nn.ReLU()})
    print(d)
    print(list(d.keys()), len(d), 'lin' in d, list(d))
    print(nn.ModuleDict())
    pl = nn.ParameterList([nn.Parameter(torch.randn(2, 3)), nn.Parameter(torch.randn(3))])
    print(pl)
    print(nn.ParameterList())
    pd = nn.ParameterDict({'w': nn.Parameter(torch.randn(2, 3)), 'b': nn.Parameter(torch.zeros(3, dtype=torch.float64))})
    print(pd)
    print(list(pd.keys()), len(pd))
    pl.append(torch.randn(2))
    print(pl)
    print(type(pl[2]).__name__, pl[2].requires_grad, pl[-1].shape)
    pl.append(5)
    print(pl)
    print(pl[1:3])

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.ps = nn.ParameterList([nn.Parameter(torch.ones(2))])
            self.md = nn.ModuleDict({'a': nn.Linear(1, 1)})
            self.pd = nn.ParameterDict(OrderedDict(z=nn.Parameter(torch.ones(1)), a=nn.Parameter(torch.ones(2))))

    m = M()
    print(m)
    print([n for n, _ in m.named_parameters()], list(m.state_dict()))
    show(lambda: d['zz'])
    show(lambda: nn.ModuleDict({'a': 3}))
    show(lambda: nn.ModuleDict(5))
    show(lambda: nn.ModuleDict([('a', nn.ReLU(), 3)]))
    show(lambda: nn.ParameterDict({1: torch.ones(1)}))
    show(lambda: pl(1))
    show(lambda: pd(1))
    show(lambda: d(1))
    show(lambda: pl[7])
    show(lambda: nn.ParameterList(torch.ones(2)))
    print(d.pop('act'), list(d.keys()))
    print(pd.popitem()[0], list(pd.keys()), pd.get('q', 3))
    print(pd | nn.ParameterDict({'c': torch.ones(1)}))
    print(len(torch.optim.SGD(m.parameters(), lr=0.1).param_groups[0]['params']))

    # Unflatten, and Tensor.unflatten: always a view
    x = torch.arange(24.).reshape(4, 6).requires_grad_()
    y = x.unflatten(1, (2, 3))
    print(y.shape, y.grad_fn.name(), y.is_contiguous())
    print(x.unflatten(-1, (-1, 3)).shape, torch.unflatten(x, 0, (2, 2)).shape,
          x.unflatten(1, torch.Size([3, 2])).shape, x.unflatten(1, [2, 3]).shape)
    z = x.t().unflatten(0, (3, 2))
    print(z.shape, z.stride(), z.grad_fn.name())
    z.sum().backward()
    print(x.grad)
    for f in (lambda: x.unflatten(1, (2, 4)), lambda: x.unflatten(1, ()), lambda: x.unflatten(2, (2, 3)),
              lambda: x.unflatten(1, (-1, -1)), lambda: x.unflatten(1, (2.0, 3)), lambda: torch.zeros(()).unflatten(0, (1,)),
              lambda: x.unflatten(1, 6), lambda: x.unflatten(1, (-1, 4))):
        show(f)
    u = nn.Unflatten(1, (2, 3))
    print(u, u(torch.zeros(4, 6)).shape)
    print(nn.Sequential(nn.Linear(6, 6), nn.Unflatten(1, torch.Size([2, 3]))))
    show(lambda: nn.Unflatten(1, 6))
    show(lambda: nn.Unflatten(1, (2.0, 3)))
    print(torch.zeros(2, 0).unflatten(1, (0, 5)).shape)
