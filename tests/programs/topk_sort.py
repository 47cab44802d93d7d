"""topk and sort: values, indices, the gradient back to where each value came from, NaN as the largest
value, bools and unsigned integers (see tests/test_programs.py)."""

from show import show


def run(torch):
    x = torch.tensor([[3., 1., 4., 1.5], [9., 2., 6., 5.]], requires_grad=True)
    r = x.topk(2)
    print(r)
    fn = x.topk(2, dim=1).values.grad_fn     # (a dim given as -1 PyTorch saves as given, and shows as 2**64 - 1)
    print(fn.name(), fn._saved_indices, fn._saved_dim, fn._saved_self_sym_sizes)
    r.values.sum().backward()
    print(x.grad)
    print(torch.topk(x, 1, dim=0, largest=False))
    print(x.topk(3, sorted=True))
    print(x.topk(0))
    for f in (lambda: x.topk(5), lambda: x.topk(-1), lambda: x.topk(1, dim=2), lambda: torch.tensor(5.).topk(1),
              lambda: torch.tensor(5.).topk(0), lambda: torch.tensor([1, 3, 2]).topk(2), lambda: torch.tensor(5.).topk(2)):
        show(f)
    print(torch.tensor([1., float('nan'), 3.]).topk(2), torch.tensor([1., float('nan'), 3.]).topk(2, largest=False))
    print(torch.tensor([1., float('nan'), 3.]).sort(descending=True), torch.tensor([1., float('nan'), 3.]).sort())
    print(torch.tensor([1, 3, 2], dtype=torch.uint8).sort(descending=True))
    print(torch.tensor([True, False, True]).sort(descending=True))
    print(torch.tensor([2., 1, 2, 1]).sort(descending=True))
    y = torch.tensor([[0.1, 0.7, 0.2], [0.5, 0.3, 0.2]])
    target = torch.tensor([1, 2])
    _, pred = y.topk(2, 1, True, True)
    print(pred, (pred == target.view(-1, 1)).any(dim=1).float().mean())
