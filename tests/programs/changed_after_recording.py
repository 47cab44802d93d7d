"""What a program changes after an op, before anything reads the op's grad_fn: the node keeps what
its inputs were when it was recorded (their history, versions, whether they required grad), as
PyTorch's does (see tests/test_programs.py; gradviz works a node's fields out when first read)."""


def names(fn):
    return [None if f is None else f.name() for f, _ in fn.next_functions]


def attempt(f):
    try:
        f()
        print("ran")
    except RuntimeError as e:
        print("RuntimeError:", e)


def run(torch):
    x = torch.tensor([1.0, 2.0], requires_grad=True)

    # an input written in place after the op: the node's edge is still its old history
    y = x * 2
    z = y + 3
    y.add_(1)
    print(names(z.grad_fn), names(y.grad_fn))
    z.sum().backward()
    print(x.grad)

    # ... and a saved input written in place is caught at backward, at the version it had
    x.grad = None
    y = x * 2
    z = y * y
    y.mul_(3)
    attempt(lambda: z.sum().backward())
    y = x.exp()
    w = y * 1
    y.sub_(1)
    attempt(lambda: w.sum().backward())
    print(x.grad)

    # a leaf that starts requiring grad after the op gets no gradient from it
    a = torch.tensor([3.0, 4.0])
    b = a * x
    a.requires_grad_()
    print(names(b.grad_fn))
    b.sum().backward()
    print(a.grad, x.grad)

    # ... nor does one detached in place: its history before stays the node's edge
    x.grad = None
    y = x * 2
    z = y * 5
    y.detach_()
    print(names(z.grad_fn), y.grad_fn, y.requires_grad)
    z.sum().backward()
    print(x.grad)

    # a result whose .data is replaced: the node keeps the values it computed
    x.grad = None
    y = x.exp()
    y.data = torch.zeros(2)
    y.sum().backward()
    print(x.grad)

    # a hook on a leaf's AccumulateGrad reached through one graph runs in the graphs that share it
    x.grad = None
    p = x * 2
    q = x * 3
    acc = q.grad_fn.next_functions[0][0]
    acc.register_hook(lambda grads_in, grads_out: print("acc hook", grads_out[0]))
    del q
    p.sum().backward()
    print(x.grad)

    # one leaf, two ops, read in either order: one AccumulateGrad
    u = x * 2
    v = x + 1
    print(v.grad_fn.next_functions[0][0] is u.grad_fn.next_functions[0][0])
