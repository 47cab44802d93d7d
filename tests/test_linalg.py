"""gradviz.linalg and torch.norm against PyTorch 2.13: values to the last bit (hypothesis over shapes,
dims, ords and dtypes), reprs, grad_fn names and saved values, gradients, and the errors PyTorch
gives for a bad ord, dim or dtype.  The kernel's own order is in gradviz/kernels/_norms.py.
solve, inv and det: values and gradients to the last bit (MKL's LAPACK, as PyTorch calls it),
singular matrices as PyTorch's LinAlgError."""

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import gradviz
from parity import printed


def test_linalg_is_a_module_reached_every_way():
    import gradviz.linalg
    from gradviz.linalg import vector_norm
    assert gradviz.linalg.vector_norm is vector_norm and "linalg" not in gradviz.__all__
    x = gradviz.tensor([[3.0, -4.0], [0.0, 0.0]], dtype=gradviz.float64, requires_grad=True)
    y = vector_norm(x, dim=1)
    assert y.tolist() == [5.0, 0.0] and y.grad_fn.name() == "LinalgVectorNormBackward0"
    y.sum().backward()
    assert x.grad.tolist() == [[0.6, -0.8], [0.0, 0.0]]          # 0 where the norm is 0


def test_norm_of_integers_is_refused():
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor as input. Got Long"):
        gradviz.arange(3).norm()


def test_ord_zero_sends_no_gradient():
    x = gradviz.tensor([1.0, 0.0, -2.0], requires_grad=True)
    y = gradviz.linalg.vector_norm(x, 0)
    assert y.item() == 2.0 and y.requires_grad
    y.backward()
    assert x.grad is None


def test_nuclear_and_spectral_norms_say_they_are_missing():
    x = gradviz.ones(2, 2)
    for ord in ("nuc", 2, -2):
        with pytest.raises(NotImplementedError, match="singular values"):
            gradviz.linalg.matrix_norm(x, ord)


# --- against PyTorch ----------------------------------------------------------------------------

CALLS = """
x = torch.tensor([[1.5, -2.0, 0.25, 3.0], [0.0, 4.0, -1.0, 0.5], [2.0, 2.0, -2.0, 2.0]], requires_grad=True)
v = torch.tensor([3.0, -4.0, 0.0], requires_grad=True)
b = torch.tensor([[[1.0, 2.0], [3.0, -4.0]], [[0.5, 0.0], [-1.0, 2.0]]], dtype=torch.float64, requires_grad=True)
L = torch.linalg
for e in ["x.norm()", "x.norm(p=1)", "x.norm(dim=1)", "x.norm(3, 1, True)", "x.norm(p=float('inf'), dim=0)",
          "torch.norm(x)", "torch.norm(x, p='fro')", "torch.norm(x, dim=(0, 1))", "torch.norm(x, p=None)",
          "torch.norm(x, 2, 1, True, dtype=torch.float64)", "x.norm(p=2, dtype=torch.float64)",
          "torch.norm(x, p='fro', dim=1)", "torch.norm(x, 1.5, 0)", "torch.norm(x, 0.5)", "torch.norm(x, -1, 1)",
          "L.vector_norm(x)", "L.vector_norm(x, 0)", "L.vector_norm(x, float('-inf'), 1)", "L.vector_norm(v)",
          "L.vector_norm(x, dim=[])", "L.vector_norm(x, 2, (1, 0), True)", "L.vector_norm(b, dim=(0, 2))",
          "L.vector_norm(x, ord=torch.tensor(1.0))", "L.vector_norm(x, 4)", "L.vector_norm(x[:, ::2], dim=0)",
          "L.vector_norm(x.t(), dim=0)", "L.vector_norm(torch.tensor(-3.0, requires_grad=True), dim=0, keepdim=True)",
          "L.vector_norm(torch.zeros(0))", "L.vector_norm(torch.zeros(0, 3), float('inf'), 1)",
          "L.matrix_norm(x)", "L.matrix_norm(x, 1)", "L.matrix_norm(x, -1)", "L.matrix_norm(x, float('inf'))",
          "L.matrix_norm(x, float('-inf'), keepdim=True)", "L.matrix_norm(b, 1)", "L.matrix_norm(b, 'fro', (0, 2))",
          "L.matrix_norm(b, float('inf'), (2, 0), True)", "L.matrix_norm(x, 1, dtype=torch.float64)",
          "L.norm(x)", "L.norm(v)", "L.norm(x, 1)", "L.norm(x, 'fro')", "L.norm(x, float('inf'))", "L.norm(v, 1)",
          "L.norm(x, 1, dim=1)", "L.norm(b, dim=(0, 2))", "L.norm(b, 1, dim=(0, 2))", "L.norm(x, dtype=torch.float64)"]:
    y = eval(e)
    fn = y.grad_fn
    print(e, y, fn.name() if fn else None, [n.name() if n else None for n, _ in fn.next_functions] if fn else None)
    if fn is not None and fn.name() == "LinalgVectorNormBackward0":
        print(" saved", fn._saved_ord, type(fn._saved_ord).__name__, fn._saved_dim, fn._saved_keepdim)
    for t in (x, v, b):
        t.grad = None
    if y.requires_grad:
        y.sum().backward()
        print(" grads", x.grad, v.grad, b.grad)
"""

ERRORS = """
x = torch.randn(3, 4)
v = torch.randn(4)
L = torch.linalg
for e in ['L.vector_norm(x, ord="fro")', 'L.vector_norm(x, dim=2)', 'L.vector_norm(x, dim=(0, 0))',
          'L.vector_norm(torch.arange(3))', 'L.vector_norm(torch.zeros(0), ord=float("inf"))',
          'L.vector_norm(torch.zeros(0), ord=-1)', 'L.vector_norm(torch.zeros(0, 3), dim=0, ord=float("-inf"))',
          'L.vector_norm(torch.zeros(2, 0), dim=-1, ord=-2.5)', 'L.vector_norm(x, dtype=torch.int64)',
          'L.vector_norm(x, dtype=torch.float16)', 'L.vector_norm(x.double(), dtype=torch.float32)',
          'L.vector_norm(x, ord=None)', 'L.vector_norm([1., 2.])', 'L.matrix_norm(v)', 'L.matrix_norm(x, ord=3)',
          'L.matrix_norm(x, ord=-0.5)', 'L.matrix_norm(x, ord="abc")', 'L.matrix_norm(x, dim=(0,))',
          'L.matrix_norm(x, dim=(0, -2))', 'L.matrix_norm(x.long())', 'L.matrix_norm(x, 1, dim=(0, 1, 2))',
          'L.norm(x, ord=3)', 'L.norm(v, ord="fro")', 'L.norm(x, dim=(0, 1, 1))', 'L.norm(torch.randn(2, 3, 4), ord=2)',
          'L.norm(torch.randn(2, 3, 4), ord="fro")', 'L.norm(x, ord="fro", dim=1)', 'torch.norm(x, p="abc")',
          'torch.norm(x, p="fro", dim=(0, 1, 1))', 'torch.norm(torch.randn(2, 3, 4), p="nuc")',
          'torch.norm(torch.arange(3))', 'torch.norm(x, dim=5)', 'x.norm(dim=(1, -1))']:
    try:
        eval(e)
        print(e, "no error")
    except Exception as err:
        print(e, type(err).__name__, err)
"""


EDGES = r"""
x = torch.tensor([[1.5, -2.0, 0.25], [0.0, 4.0, -1.0]])
h = x.half()
for e in ["torch.norm(x, keepdim=True)", "x.norm(1, keepdim=True)", "torch.linalg.vector_norm(h)", "torch.linalg.vector_norm(h, 1, 0)",
          "torch.linalg.vector_norm(h, dtype=torch.float32)", "torch.linalg.vector_norm(x, float('inf'), keepdim=True)",
          "torch.linalg.vector_norm(torch.tensor([float('nan'), 1.0]), float('inf'))", "torch.linalg.vector_norm(torch.tensor([float('inf'), 1.0]))",
          "torch.linalg.vector_norm(torch.tensor([1e30, 1e30]))", "torch.linalg.vector_norm(torch.tensor([1e-30, 1e-30]))",
          "torch.linalg.vector_norm(torch.tensor([-0.0]))", "torch.linalg.vector_norm(torch.tensor([3.0, 4.0]), -2)",
          "torch.linalg.vector_norm(torch.tensor([0.0, 4.0]), -1)", "x.cumsum(1).cumprod(0)", "torch.cumsum(x.half(), 0)",
          "torch.linalg.matrix_norm(torch.ones(2, 0), 1)", "torch.linalg.vector_norm(x, 2, (0, 1), True)"]:
    try:
        y = eval(e); print(e, y, y.dtype)
    except Exception as err:
        print(e, type(err).__name__, err)

for s in [(2,0),(0,2),(0,0),(3,2,0)]:
  for o in [1,-1,float('inf'),float('-inf'),'fro']:
    try:
      A=torch.ones(*s, requires_grad=True); y=torch.linalg.matrix_norm(A,o); print(s,o,y, y.grad_fn.name() if y.grad_fn else None)
      y2=torch.linalg.matrix_norm(A,o,keepdim=True); print(y2.shape)
    except Exception as e: print(s,o,'!!',type(e).__name__, e)
"""

SYSTEMS = r"""
L = torch.linalg
A = torch.tensor([[4.0, 3.0, 1.0], [6.0, 3.0, -2.0], [1.0, 5.0, 7.0]], requires_grad=True)
B = torch.tensor([[1.0, 2.0], [0.5, -1.0], [3.0, 0.0]], requires_grad=True)
v = torch.tensor([1.0, -2.0, 0.5], requires_grad=True)
for e in ["L.det(A)", "torch.det(A)", "A.det()", "L.inv(A)", "torch.inverse(A)", "A.inverse()", "L.solve(A, B)", "L.solve(A, v)"]:
    y = eval(e)
    print(e, y, y.grad_fn.name(), [n.name() if n else None for n, _ in y.grad_fn.next_functions])
    w = torch.arange(float(y.numel())).reshape(y.shape) - 1
    (y * w).sum().backward()
    print(A.grad, B.grad, v.grad)
    A.grad = B.grad = v.grad = None
print(L.inv(A.double()), L.det(A.double()), L.solve(A.double(), B.double()))
print(L.det(torch.zeros(0, 0)), L.inv(torch.zeros(0, 0)), L.det(torch.ones(2, 2)))
for e in ['L.det(torch.ones(2,3))','L.det(torch.ones(3))','L.det(torch.ones(2,2,dtype=torch.long))','L.inv(torch.ones(2,3))','L.inv(torch.ones(3))','L.inv(torch.ones(2,2))','L.inv(torch.zeros(3,3))','L.solve(torch.ones(2,2), torch.ones(3))','L.solve(torch.eye(2), torch.ones(3,1))','L.solve(torch.ones(2,2), torch.ones(2))','L.solve(torch.eye(2), torch.ones(2).long())','L.solve(torch.eye(2), torch.ones(2,dtype=torch.float64))','L.solve(torch.ones(2,3), torch.ones(2))', 'L.solve(torch.eye(3), torch.ones(2,3))', 'torch.det(torch.tensor([[1,2],[3,4.]]))', 'L.inv(torch.tensor([[1,2],[2,4.]]))']:
    try:
        print(e, '->', eval(e))
    except RuntimeError as x:
        print(e, '!!', type(x).__name__, isinstance(x, L.LinAlgError), x)
x = torch.tensor([[2.0, 1.0], [1.0, 3.0]], requires_grad=True)
g, = torch.autograd.grad(L.inv(x).sum(), x, create_graph=True); print(g, g.grad_fn.name())
print(torch.autograd.grad(g.sum(), x))
"""


LEFT_FALSE = r"""
L = torch.linalg
torch.manual_seed(1)
A = (torch.randn(3, 3) + 3 * torch.eye(3)).requires_grad_()
B = torch.randn(2, 3, requires_grad=True)
Ab = (torch.randn(2, 3, 3) + 3 * torch.eye(3)).requires_grad_()
for e in ["L.solve(A, B, left=False)", "L.solve(Ab, B[:1], left=False)", "L.solve(A, B.mT)", "L.solve(Ab, torch.randn(2, 4, 3), left=False)"]:
    y = eval(e)
    print(e, y, y.stride(), y.grad_fn.name(), y.grad_fn._saved_left)
    (y * torch.arange(float(y.numel())).reshape(y.shape).cos()).sum().backward()
    print(A.grad, B.grad, Ab.grad)
    A.grad = B.grad = Ab.grad = None
for e in ['L.solve(torch.eye(2), torch.ones(2), left=False)', 'L.solve(torch.eye(3), torch.ones(3, 2), left=False)', 'L.solve(torch.ones(1, 1), torch.ones(1), left=False)']:
    try:
        print(e, eval(e))
    except RuntimeError as err:
        print(e, type(err).__name__, err)
x = (torch.randn(3, 3, dtype=torch.float64) + 3 * torch.eye(3, dtype=torch.float64)).requires_grad_()
b = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
g1, g2 = torch.autograd.grad((L.solve(x, b, left=False) ** 2).sum(), (x, b), create_graph=True)
print(g1.grad_fn.name(), g2.grad_fn.name(), torch.autograd.grad((g1 + g2.sum()).sum(), (x, b)))
"""

BATCHES = r"""
L = torch.linalg
torch.manual_seed(0)
A = (torch.randn(3, 4, 4) + 3 * torch.eye(4)).requires_grad_()
B = torch.randn(3, 4, 2, requires_grad=True)
V = torch.randn(3, 4, requires_grad=True)
C = torch.randn(4, 5, requires_grad=True)
for e in ["L.det(A)", "L.inv(A)", "L.solve(A, B)", "L.solve(A, V)", "L.solve(A, C)", "L.solve(A[0], torch.randn(2, 4, 3))",
          "A.det()", "torch.inverse(A)"]:
    y = eval(e)
    print(e, y.shape, y.stride(), y.grad_fn.name())
    (y * torch.arange(float(y.numel())).reshape(y.shape).sin()).sum().backward()
    print(y.detach().numpy().tobytes() == y.detach().numpy().tobytes(), A.grad.sum().item(), None if B.grad is None else B.grad.sum().item(),
          None if V.grad is None else V.grad.sum().item(), None if C.grad is None else C.grad.sum().item())
    print(y)
    A.grad = B.grad = V.grad = C.grad = None
S = torch.stack([torch.eye(2), torch.ones(2, 2)])
for e in ['L.inv(S)', 'L.solve(S, torch.ones(2, 2))', 'L.solve(S, torch.ones(2))', 'L.solve(torch.eye(2).expand(3, 2, 2), torch.ones(2, 2, 1))',
          'L.solve(torch.eye(2).expand(3, 2, 2), torch.ones(4, 2))', 'L.det(S)']:
    try:
        print(e, eval(e))
    except RuntimeError as err:
        print(e, type(err).__name__, err)
x = (torch.randn(2, 3, 3, dtype=torch.float64) + 3 * torch.eye(3, dtype=torch.float64)).requires_grad_()
g, = torch.autograd.grad(L.inv(x).sum(), x, create_graph=True); print(g.grad_fn.name())
print(torch.autograd.grad(g.sum(), x)[0])
"""


@pytest.mark.torch
@pytest.mark.parametrize("code", [CALLS, ERRORS, EDGES, SYSTEMS, BATCHES, LEFT_FALSE],
                         ids=["values, grad_fns, gradients", "errors", "half, nan, inf, empty matrices", "solve, inv, det",
                              "batches of matrices, broadcast right-hand sides", "solve(left=False): X A = B"])
def test_prints_what_torch_prints(code):
    torch = pytest.importorskip("torch")
    assert printed(gradviz, code) == printed(torch, code)


def _shaped(dtype):
    """An array (up to 3 dims, sizes chosen so the kernel's vector lanes, its tail of 4 and one per
    element all occur), a dim (None, one or two of its dims) and its layout (as is, transposed, every
    other column)."""
    sizes = st.sampled_from([1, 2, 3, 4, 5, 7, 8, 9, 12, 13, 16, 17, 31, 33, 64, 100])
    return st.tuples(st.lists(sizes, min_size=1, max_size=3), st.integers(0, 2 ** 32 - 1),
                     st.sampled_from(["as is", "transposed", "strided"]), st.data())


ORDS = [2, 1, float("inf"), float("-inf"), 0, 2.0]


@pytest.mark.torch
@settings(max_examples=300, deadline=None)
@given(case=_shaped(np.float32), ord=st.sampled_from(ORDS), dtype=st.sampled_from([np.float32, np.float64]),
       keepdim=st.booleans())
def test_vector_norm_is_torch_to_the_last_bit(case, ord, dtype, keepdim):
    """Bit for bit, with the ords whose arithmetic PyTorch does itself (other ords call the C
    library's powf, rounded here from double: within 1 ulp, checked below)."""
    torch = pytest.importorskip("torch")
    shape, seed, layout, data = case
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal(shape) * rng.choice([1e-3, 1.0, 1e3])).astype(dtype)
    a[rng.random(shape) < 0.1] = 0
    if layout == "transposed":
        a = a.T
    elif layout == "strided":
        a = a[..., ::2]
    dims = data.draw(st.one_of(st.none(), st.lists(st.integers(-a.ndim, a.ndim - 1), min_size=1, max_size=2,
                                                   unique_by=lambda d: d % a.ndim)))
    want = torch.linalg.vector_norm(torch.from_numpy(a), ord, dims, keepdim)
    got = gradviz.linalg.vector_norm(gradviz.from_numpy(a), ord, dims, keepdim)
    assert got.shape == want.shape and got.dtype.name == str(want.dtype).split(".")[1]
    assert got.numpy().tobytes() == want.numpy().tobytes(), (a.shape, a.strides, dims, ord)


@pytest.mark.torch
@settings(max_examples=60, deadline=None)
@given(a=hnp.arrays(np.float32, st.integers(1, 300), elements=st.floats(-100, 100, width=32)),
       ord=st.sampled_from([3, 0.5, -1, 2.5]))
def test_other_ords_within_one_ulp(a, ord):
    torch = pytest.importorskip("torch")
    want = torch.linalg.vector_norm(torch.from_numpy(a), ord).item()
    got = gradviz.linalg.vector_norm(gradviz.from_numpy(a), ord).item()
    assert got == want or abs(got - want) <= 2 * np.spacing(np.float32(abs(want))) or \
        (math.isinf(got) and math.isinf(want)) or (got == 0 and want == 0)


@pytest.mark.torch
@pytest.mark.parametrize("n", [1, 32767, 32768, 65536, 100003])
@pytest.mark.parametrize("ord", [1, 2, 0])
def test_one_long_output_is_cut_between_threads_as_torch_cuts_it(n, ord):
    """A single output of 32,768 elements or more, off the p = 2 vector path (every other element):
    one run per thread, as ``binary_kernel_reduce``'s parallel_for cuts it."""
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(n).standard_normal(2 * n).astype(np.float32)[::2]
    want = torch.linalg.vector_norm(torch.from_numpy(a), ord)
    got = gradviz.linalg.vector_norm(gradviz.from_numpy(a), ord)
    assert got.numpy().tobytes() == want.numpy().tobytes()


@settings(max_examples=60, deadline=None)
@given(a=hnp.arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(1, 4)),
                    elements=st.floats(0.3, 3)), signs=st.integers(0, 2 ** 16 - 1),
       ord=st.sampled_from([2, 1, 3, 0.5, 1.5, float("inf"), -1]), dim=st.sampled_from([None, 0, 1, (0, 1)]))
def test_gradients_match_finite_differences(a, signs, ord, dim):
    flips = np.array([1 if signs >> i & 1 else -1 for i in range(a.size)]).reshape(a.shape)
    x = gradviz.tensor(a * flips, requires_grad=True)
    if ord == float("inf"):    # the largest |x| must stay the largest within gradcheck's steps (1e-6):
        # values a few ulps apart are a tie to finite differences, not to the exact gradient
        assume(a.size == 1 or np.diff(np.sort(np.abs(a), axis=None)).min() > 1e-4)
    assert gradviz.autograd.gradcheck(lambda t: gradviz.linalg.vector_norm(t, ord, dim), (x,))


@settings(max_examples=40, deadline=None)
@given(a=hnp.arrays(np.float64, st.tuples(st.integers(2, 4), st.integers(2, 4)), elements=st.floats(0.3, 3),
                    unique=True),
       ord=st.sampled_from([1, -1, float("inf"), float("-inf"), "fro"]))
def test_matrix_norm_gradients_match_finite_differences(a, ord):
    x = gradviz.tensor(a * np.where(np.arange(a.size).reshape(a.shape) % 3 == 0, -1, 1), requires_grad=True)
    assert gradviz.autograd.gradcheck(lambda t: gradviz.linalg.matrix_norm(t, ord), (x,))
    assert gradviz.autograd.gradgradcheck(lambda t: gradviz.linalg.vector_norm(t, 2), (x,))


def _has_mkl():
    from gradviz.kernels import _mkl
    return _mkl.library() is not None


@pytest.mark.torch
@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 16), k=st.integers(0, 3), seed=st.integers(0, 2 ** 32 - 1),
       dtype=st.sampled_from([np.float32, np.float64]), batch=st.sampled_from([(), (2,), (2, 3)]))
def test_solve_inv_det_are_torch_to_the_last_bit(n, k, seed, dtype, batch):
    """Forward and backward, through the MKL PyTorch ships (the ``exact`` extra); k = 0: a vector."""
    torch = pytest.importorskip("torch")
    if not _has_mkl():
        pytest.skip("MKL (the exact extra) is not installed: numpy's LAPACK is within rounding only")
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(batch + (n, n)).astype(dtype)
    b = rng.standard_normal(batch + ((n, k) if k else (n,))).astype(dtype)
    results = []
    for lib in (torch, gradviz):
        A, B = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        out = []
        for y in (lib.linalg.det(A), lib.linalg.inv(A), lib.linalg.solve(A, B)):
            w = lib.tensor(rng.standard_normal(tuple(y.shape)).astype(dtype)) if y.ndim else lib.tensor(1.5, dtype=y.dtype)
            A.grad = B.grad = None
            (y * w).sum().backward()
            out.append((y.detach().numpy().tobytes(), tuple(y.stride()), A.grad.numpy().tobytes(),
                        None if B.grad is None else B.grad.numpy().tobytes()))
        results.append(out)
        rng = np.random.default_rng(seed)      # the same weights for both libraries
        rng.standard_normal(batch + (n, n)), rng.standard_normal(batch + ((n, k) if k else (n,)))
    assert results[0] == results[1]


def test_singular_matrices():
    with pytest.raises(gradviz.linalg.LinAlgError, match="The diagonal element 2 is zero"):
        gradviz.linalg.inv(gradviz.ones(2, 2))
    with pytest.raises(RuntimeError, match="The solver failed because the input matrix is singular"):
        gradviz.linalg.solve(gradviz.ones(2, 2), gradviz.ones(2))
    x = gradviz.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=gradviz.float64, requires_grad=True)
    y = gradviz.linalg.det(x)
    y.backward()
    assert y.item() == 0 and x.grad.tolist() == [[0.0, 0.0], [0.0, 0.0]]    # PyTorch's, without create_graph
    assert [str(v) for v in x.grad.numpy().ravel()] == ["0.0", "-0.0", "-0.0", "0.0"]


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 4), seed=st.integers(0, 2 ** 32 - 1))
def test_system_gradients_match_finite_differences(n, seed):
    rng = np.random.default_rng(seed)
    a = gradviz.tensor(rng.standard_normal((n, n)) + 3 * np.eye(n), requires_grad=True)
    b = gradviz.tensor(rng.standard_normal((n, 2)), requires_grad=True)
    assert gradviz.autograd.gradcheck(gradviz.linalg.solve, (a, b))
    assert gradviz.autograd.gradcheck(gradviz.linalg.det, (a,))
    assert gradviz.autograd.gradgradcheck(gradviz.linalg.inv, (a,))
