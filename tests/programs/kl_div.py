"""kl_div / KLDivLoss and xlogy: distillation-style training of a softmax towards a target distribution,
the graph PyTorch writes kl_div as, every reduction (the 'mean' warning), log_target, a target that
requires grad, xlogy's zeros and nans (see tests/test_programs.py)."""

import warnings


def run(torch):
    F, nn = torch.nn.functional, torch.nn
    torch.manual_seed(0)
    teacher = torch.softmax(torch.randn(4, 5) * 2, dim=1)
    logits = torch.zeros(4, 5, requires_grad=True)
    opt = torch.optim.SGD([logits], lr=1.0)
    crit = nn.KLDivLoss(reduction="batchmean")
    print(crit, crit.log_target)
    for step in range(30):
        opt.zero_grad()
        loss = crit(F.log_softmax(logits, dim=1), teacher)
        loss.backward()
        opt.step()
    print(loss, loss.item(), logits.grad.tolist())
    fn, names = loss.grad_fn, []
    while fn is not None:
        names.append(fn.name())
        fn = fn.next_functions[0][0] if fn.next_functions else None
    print(names)
    x = F.log_softmax(torch.randn(2, 3, dtype=torch.float64, requires_grad=True), dim=1)
    t = torch.tensor([[0.0, 0.25, 0.75], [0.5, 0.5, 0.0]], dtype=torch.float64)
    for reduction in ("mean", "batchmean", "sum", "none"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            print(reduction, F.kl_div(x, t, reduction=reduction).tolist(), [str(w.message)[:40] for w in caught])
    print(F.kl_div(x, (t + 0.1).log(), reduction="sum", log_target=True).item())
    tg = torch.tensor([[0.2, 0.3, 0.5]], requires_grad=True)
    y = torch.log_softmax(torch.tensor([[1.0, 2.0, 3.0]], requires_grad=True), dim=1)
    k = F.kl_div(y, tg, reduction="batchmean")
    k.backward()
    print(k.item(), tg.grad.tolist(), k.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[0][0].name())
    a = torch.tensor([0.0, 0.0, 1.0, 2.0, -1.5], requires_grad=True)
    b = torch.tensor([0.0, float("nan"), 0.5, 3.0, 2.0], requires_grad=True)
    r = torch.xlogy(a, b)
    r.sum().backward()
    print(r, a.grad, b.grad)
    try:
        F.kl_div(x, t, reduction="avg")
    except ValueError as e:
        print("ValueError", e)
