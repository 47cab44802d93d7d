"""smooth_l1_loss / SmoothL1Loss and huber_loss / HuberLoss: a small regression fitted with each, the
losses and gradients to the last digit, beta=0 (l1_loss, composed), their errors and reprs (see
tests/test_programs.py)."""

import warnings


def run(torch):
    F, nn = torch.nn.functional, torch.nn
    torch.manual_seed(0)
    x = torch.randn(8, 3)
    y = x @ torch.tensor([[1.5], [-2.0], [0.5]]) + 0.1 * torch.randn(8, 1)
    y[3] = 10.0                                  # an outlier: where these losses beat MSE
    for crit in (nn.SmoothL1Loss(), nn.SmoothL1Loss(beta=0.5), nn.HuberLoss(), nn.HuberLoss(delta=0.3),
                 nn.MSELoss()):
        torch.manual_seed(1)
        model = nn.Linear(3, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(20):
            opt.zero_grad()
            loss = crit(model(x), y)
            loss.backward()
            opt.step()
        print(crit, getattr(crit, "beta", getattr(crit, "delta", None)), loss, model.weight.grad)
        print(loss.item(), model.weight.data.tolist(), model.bias.data.tolist())
    a = torch.randn(2, 5, requires_grad=True, dtype=torch.float64)
    t = torch.randn(2, 5, dtype=torch.float64)
    for reduction in ("mean", "sum", "none"):
        for fn, kw in ((F.smooth_l1_loss, {"beta": 0.7}), (F.huber_loss, {"delta": 0.7})):
            a.grad = None
            loss = fn(a, t, reduction=reduction, **kw)
            (loss if reduction != "none" else loss.sum()).backward()
            print(reduction, loss, a.grad.tolist())
    l1 = F.smooth_l1_loss(a, t, beta=0.0)
    print(l1, l1.grad_fn.next_functions[0][0].name())
    fn = F.smooth_l1_loss(a, t, beta=0.25).grad_fn
    print(fn.name(), fn._saved_beta, F.huber_loss(a, t).grad_fn._saved_delta)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        print(F.smooth_l1_loss(a, t[0]), [str(m.message) for m in w])
    for bad in (lambda: F.smooth_l1_loss(a, t, beta=-0.5), lambda: F.huber_loss(a, t, delta=0.0),
                lambda: F.huber_loss(a, t, reduction="avg")):
        try:
            bad()
        except (RuntimeError, ValueError) as e:
            print(type(e).__name__, e)
