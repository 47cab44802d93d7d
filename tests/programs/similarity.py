"""softmin, normalize and cosine_similarity: the graphs PyTorch writes them as, their numbers to the
last digit, their gradients and errors (see tests/test_programs.py)."""

import warnings

from show import show


def run(torch):
    F, nn = torch.nn.functional, torch.nn
    torch.manual_seed(0)
    x = torch.randn(3, 5, requires_grad=True)
    y = torch.randn(3, 5, requires_grad=True)
    s = F.softmin(x, dim=1)
    print(s, s.grad_fn.next_functions[0][0].name())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        print(F.softmin(x).sum(1))
    print(nn.Softmin(dim=0), nn.Softmin(dim=0)(x)[:, 0].tolist())
    n = F.normalize(x)
    print(n, n.norm(dim=1).tolist())
    fn = n.grad_fn
    print(fn.name(), [f.name() for f, _ in fn.next_functions[1][0].next_functions],
          fn.next_functions[1][0].next_functions[0][0].next_functions[0][0].name())
    print(F.normalize(x, p=1, dim=0).tolist())
    print(F.normalize(torch.zeros(2, 3)))
    c = F.cosine_similarity(x, y)
    print(c.tolist(), c.grad_fn.name())
    c.sum().backward()
    print(x.grad.tolist())
    print(y.grad.tolist())
    print(torch.cosine_similarity(x, y[0], dim=-1).tolist(), nn.CosineSimilarity(dim=0, eps=1e-6))
    print(nn.CosineSimilarity()(x, y).tolist())
    print(F.cosine_similarity(torch.zeros(2, 3), torch.ones(2, 3)))
    print(F.cosine_similarity(x.double(), y.double()).tolist())
    print(F.cosine_similarity(torch.tensor([[1, 2, 3]]), torch.tensor([[2., 4., 5.]])))
    show(lambda: F.cosine_similarity(torch.tensor([[1, 2]]), torch.tensor([[2, 4]])))
    show(lambda: F.cosine_similarity(x, torch.randn(4, 5)))
    show(lambda: F.cosine_similarity(x, y, dim=2))
    show(lambda: F.normalize(torch.zeros(3)))
