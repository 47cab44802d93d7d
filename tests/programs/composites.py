"""diff, tile, broadcast_to and repeat: the ops PyTorch writes out of others (see tests/test_programs.py)."""

from show import show


def run(torch):
    x = torch.arange(12.).reshape(3, 4).requires_grad_()
    show(lambda: x.diff(n=0))
    show(lambda: x.diff(n=-1))
    show(lambda: torch.tensor(1.).diff())
    show(lambda: x.diff(n=5))
    show(lambda: x.diff(dim=0, prepend=torch.zeros(1, 4)))
    show(lambda: x.diff(prepend=torch.zeros(4)))
    show(lambda: x.diff(n=2, dim=0))
    show(lambda: torch.tensor([True, False, False]).diff())
    show(lambda: torch.diff(x, append=torch.ones(3, 2), n=2))
    show(lambda: (x ** 2).diff(n=2, dim=1))
    show(lambda: torch.tensor([1, 5, 2]).diff())
    show(lambda: x.tile(2))
    show(lambda: x.tile((2, 1, 1)))
    show(lambda: x.tile(()))
    show(lambda: x.tile(-1, 2))
    show(lambda: torch.tile(x, (2, 2)))
    show(lambda: x.repeat(2, -1, 1))
    show(lambda: x.repeat(0, 2).shape)
    show(lambda: x.broadcast_to(2, 3, 4))
    show(lambda: torch.broadcast_to(x, (3, 5)))
    show(lambda: x.broadcast_to((-1, 4)))
    y = x.diff(n=2, prepend=torch.zeros(3, 1))
    y.sum().backward()
    print(x.grad)
    print(x.tile(2, 1).grad_fn.next_functions, sep="\n")
