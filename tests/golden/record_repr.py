"""Record the golden reprs in tests/golden/repr/ with real PyTorch (run once; commit the files).

    .venv/bin/python tests/golden/record_repr.py          # needs torch 2.13 installed
    .venv/bin/python tests/golden/record_repr.py norms    # only the files named

Each golden file holds cases as ``=== <code>`` followed by what ``repr`` of the code's last
expression prints under PyTorch.  tests/test_format.py runs the same code with ``torch`` bound to
gradviz and compares, reading ``gradviz.`` as ``torch.``.  Print options and the seed are reset
before every case.
"""

import ast
import pathlib
import sys

HERE = pathlib.Path(__file__).parent / "repr"

CASES = {
    "basic": [
        "torch.tensor([1., 2.])",
        "torch.tensor([1, 2, 3])",
        "torch.tensor([True, False])",
        "torch.tensor(3.5)",
        "torch.tensor(3)",
        "torch.tensor(True)",
        "torch.tensor(-0.5)",
        "torch.tensor([-1., 2.5, -3.25])",
        "torch.tensor([-1, 20, -300])",
        "torch.tensor([[1., 2.], [3., 4.]])",
        "torch.tensor([[1, -2], [30, 4]])",
        "torch.tensor([0.1, 0.25, 1/3])",
        "torch.tensor([1e-5, 1.0])",
        "torch.tensor([1e10, 1.0])",
        "torch.tensor([1e8, 1.0])",
        "torch.tensor([1e-4, 1.0])",
        "torch.tensor([1234.5678, 0.001])",
        "torch.tensor([123456789.0])",
        "torch.tensor([0.0, -0.0])",
        "torch.tensor([float('inf'), float('-inf'), float('nan'), 1.5])",
        "torch.tensor([float('inf'), 2.])",
        "torch.tensor([float('nan')])",
        "torch.tensor(1e-8)",
        "torch.tensor(1e20)",
        "torch.zeros(2, 3)",
        "torch.ones(2, 3, 4)",
        "torch.arange(24).reshape(2, 3, 4)",
        "torch.arange(24.).reshape(2, 3, 4) / 7",
        "torch.arange(16.).reshape(2, 2, 2, 2)",
        "torch.arange(2000)",
        "torch.arange(2000.) / 3",
        "torch.arange(1001)",
        "torch.arange(1000)",
        "torch.arange(3000).reshape(30, 100)",
        "torch.arange(3000.).reshape(3, 10, 100)",
        "torch.arange(40)",
        "torch.arange(40.) * 1.5",
        "torch.arange(30.).reshape(2, 15) * 1e5",
        "torch.linspace(-1, 1, 7)",
        "torch.tensor([])",
        "torch.zeros(0, 3)",
        "torch.zeros(2, 0)",
        "torch.tensor([], dtype=torch.int64)",
        "torch.zeros(0, dtype=torch.float64)",
        "torch.tensor([1., 2.], dtype=torch.float64)",
        "torch.tensor([1, 2], dtype=torch.int32)",
        "torch.tensor([1, 2], dtype=torch.uint8)",
        "torch.tensor([1., 2.], dtype=torch.float16)",
        "torch.tensor(2., dtype=torch.float64)",
        "torch.tensor(7, dtype=torch.int32)",
        "torch.full((2, 3), 3)",
        "torch.full((2, 3), 3.)",
        "torch.full((2,), True)",
        "torch.eye(3)",
        "torch.ones(2, dtype=torch.float64) / 3",
        "torch.tensor([1, 2]) / 2",
        "torch.tensor([1, 2]) * 2.5",
        "torch.tensor([1, 2]) + torch.tensor(1.5)",
        "torch.tensor([1., 2.]) > 1",
        "torch.tensor([[1.5, 2.], [3., 4.]]).sum(0)",
        "torch.tensor([1, 2]).float()",
        "torch.tensor([1.7, -2.7]).long()",
        "torch.tensor([0.1, 0.2, 0.3]).sum()",
        "torch.Size([2, 3])",
        "torch.tensor([[1., 2.], [3., 4.]]).shape",
        "torch.float32",
        "torch.tensor([1, 2]).dtype",
        "torch.tensor([[1., 2.], [3., 4.]]).max(dim=1)",
        "torch.tensor([[1., 2.], [3., 4.]]).min(0)",
        "torch.tensor([1.5]).item()",
        "torch.tensor([[1, 2], [3, 4]]).tolist()",
        "torch.tensor([1., 2.]).type()",
        "torch.tensor([1., 2.]).grad",
    ],
    "autograd": [
        "torch.ones(2, requires_grad=True)",
        "torch.tensor(2., requires_grad=True)",
        "torch.ones(2, 2, dtype=torch.float64, requires_grad=True)",
        "torch.zeros(0, requires_grad=True)",
        "x = torch.ones(2, requires_grad=True); x + 1",
        "x = torch.ones(2, requires_grad=True); x * 2",
        "x = torch.ones(2, requires_grad=True); 2 * x",
        "x = torch.ones(2, requires_grad=True); x - 1",
        "x = torch.ones(2, requires_grad=True); 1 - x",
        "x = torch.ones(2, requires_grad=True); x / 2",
        "x = torch.ones(2, requires_grad=True); 2 / x",
        "x = torch.ones(2, requires_grad=True); -x",
        "x = torch.ones(2, requires_grad=True); x ** 2",
        "x = torch.ones(2, requires_grad=True); 2 ** x",
        "x = torch.ones(2, requires_grad=True); x ** x",
        "x = torch.ones(2, requires_grad=True); x.sum()",
        "x = torch.ones(2, 3, requires_grad=True); x.sum(1)",
        "x = torch.ones(2, 3, requires_grad=True); x.sum(dim=1, keepdim=True)",
        "x = torch.ones(2, 3, requires_grad=True); x.mean()",
        "x = torch.ones(2, 3, requires_grad=True); x.mean(0)",
        "x = torch.ones(2, requires_grad=True); torch.sum(5 * (x + 1) ** 2) / 2",
        "x = torch.ones(2, requires_grad=True); 0.5 * torch.sum(5 * (x + 1) ** 2)",
        "x = torch.ones(2, requires_grad=True); (1/2) * torch.sum(5 * (x + 1) ** 2)",
        "x = torch.ones(2, requires_grad=True); x.exp()",
        "x = torch.ones(2, requires_grad=True); x.log()",
        "x = torch.ones(2, requires_grad=True); x.sqrt()",
        "x = torch.ones(2, requires_grad=True); x.sin()",
        "x = torch.ones(2, requires_grad=True); x.cos()",
        "x = torch.ones(2, requires_grad=True); x.tanh()",
        "x = torch.ones(2, requires_grad=True); x.sigmoid()",
        "x = torch.ones(2, requires_grad=True); x.relu()",
        "x = torch.ones(2, requires_grad=True); x.abs()",
        "x = torch.ones(2, requires_grad=True); x.clamp(0, 0.5)",
        "x = torch.ones(2, requires_grad=True); x.max()",
        "x = torch.ones(2, 2, requires_grad=True); x.max(1)",
        "x = torch.ones(2, requires_grad=True); x.norm()",
        "x = torch.ones(2, 3, requires_grad=True); x @ torch.ones(3, 2)",
        "x = torch.ones(2, 3, requires_grad=True); x @ torch.ones(3)",
        "x = torch.ones(3, requires_grad=True); x @ torch.ones(3)",
        "x = torch.ones(3, requires_grad=True); x @ torch.ones(3, 2)",
        "x = torch.ones(2, 3, requires_grad=True); x.view(6)",
        "x = torch.ones(2, 3, requires_grad=True); x.reshape(3, 2)",
        "x = torch.ones(2, 3, requires_grad=True); x.t()",
        "x = torch.ones(2, 3, requires_grad=True); x.T",
        "x = torch.ones(2, 3, requires_grad=True); x.transpose(0, 1)",
        "x = torch.ones(2, 3, requires_grad=True); x.unsqueeze(0)",
        "x = torch.ones(2, 1, requires_grad=True); x.squeeze()",
        "x = torch.ones(2, 1, requires_grad=True); x.squeeze(1)",
        "x = torch.ones(2, 3, requires_grad=True); x[0]",
        "x = torch.ones(2, 3, requires_grad=True); x[:, 1:]",
        "x = torch.ones(2, 3, requires_grad=True); x[[0, 1], [1, 2]]",
        "x = torch.ones(2, 3, requires_grad=True); x.expand(4, 2, 3)",
        "x = torch.ones(2, requires_grad=True); torch.cat([x, x])",
        "x = torch.ones(2, requires_grad=True); torch.stack([x, x])",
        "x = torch.ones(2, requires_grad=True); torch.where(x > 0, x, 0.)",
        "x = torch.ones(2, requires_grad=True); x.clone()",
        "x = torch.ones(2, requires_grad=True); x.double()",
        "x = torch.ones(2, requires_grad=True); x.detach()",
        "x = torch.ones(2, requires_grad=True); (x * 2).detach()",
        "x = torch.ones(2, requires_grad=True); x.data",
        "x = torch.ones(2, requires_grad=True); (x * 2).grad_fn.name()",
        "x = torch.ones(2, requires_grad=True); y = x * 2; y.backward(torch.ones(2)); x.grad",
        "x = torch.ones(2, requires_grad=True); y = (x * 3).sum(); y.backward(); y.backward; x.grad",
        "x = torch.tensor([1., 2.], requires_grad=True); y = x ** 2; y.sum().backward(); x.grad",
        "x = torch.tensor([1., 2.], dtype=torch.float64, requires_grad=True); (x * x).sum().backward(); x.grad",
        "x = torch.ones(2, requires_grad=True); y = x * 2\nwith torch.no_grad():\n    z = x * 2\nz",
        "x = torch.ones(2, requires_grad=True); y = x + 1; y.requires_grad",
        "x = torch.ones(2, requires_grad=True); y = x + 1; y.is_leaf",
        "x = torch.ones(2, requires_grad=True); x.is_leaf",
        "x = torch.ones(2, requires_grad=True); x.sum().item()",
        "x = torch.ones(2, requires_grad=True); x.tolist()",
        "x = torch.ones(2, 2, requires_grad=True); x.shape",
        "x = torch.ones(2, 2, requires_grad=True); x.size()",
        "x = torch.ones(2, 2, requires_grad=True); x.size(0)",
        "x = torch.ones(2, 2, requires_grad=True); x.dtype",
        "x = torch.arange(2000.).requires_grad_(); x * 2",
        "x = torch.ones(40, requires_grad=True); x * 1.5",
        "x = torch.ones(30, requires_grad=True); x * 1e5",
        "x = torch.ones(3, 3, dtype=torch.float64, requires_grad=True); x * 2",
        "x = torch.ones(20, dtype=torch.float64, requires_grad=True); x * 2",
        "x = torch.arange(27.).reshape(3, 9).requires_grad_(); x * 1e-5",
        "torch.tensor([[1427663.1612, 563441.6753]], dtype=torch.float64, requires_grad=True)",
        "torch.tensor([[-11048., 6288.], [3916., 903.5]], dtype=torch.float16, requires_grad=True)",
        "torch.tensor([[1e-7, -2e-7], [3e-7, 0.]], dtype=torch.float16, requires_grad=True)",
    ],
    "printoptions": [
        "torch.set_printoptions(precision=2); torch.tensor([1.23456, 2.5])",
        "torch.set_printoptions(precision=2); torch.tensor([1/3, 2/3], requires_grad=True)",
        "torch.set_printoptions(precision=6); torch.tensor([1/3, 2/3])",
        "torch.set_printoptions(precision=2); torch.set_printoptions(profile='default'); torch.tensor([1/3])",
        "torch.set_printoptions(sci_mode=True); torch.tensor([1.5, 2.])",
        "torch.set_printoptions(sci_mode=False); torch.tensor([1e-8, 1e8])",
        "torch.set_printoptions(threshold=5); torch.arange(10)",
        "torch.set_printoptions(threshold=5, edgeitems=1); torch.arange(10.)",
        "torch.set_printoptions(threshold=5, edgeitems=2); torch.arange(30).reshape(5, 6)",
        "torch.set_printoptions(linewidth=20); torch.arange(12.)",
        "torch.set_printoptions(linewidth=40); torch.ones(10, requires_grad=True) * 2",
        "torch.set_printoptions(profile='short'); torch.tensor([1/3, 2/3])",
        "torch.set_printoptions(profile='full'); torch.arange(1200)[::100]",
        "torch.set_printoptions(precision=3); torch.tensor([[1/3, 200.], [-5., 0.]])",
        "torch.set_printoptions(precision=2, sci_mode=True); torch.tensor([1/3, 200.])",
    ],
    "norms": [
        "torch.nn.BatchNorm2d(3)",
        "torch.nn.BatchNorm2d(8, eps=1e-3, momentum=None, affine=False)",
        "torch.nn.BatchNorm2d(4, track_running_stats=False, bias=False)",
        "torch.nn.BatchNorm3d(2)",
        "torch.nn.Sequential(torch.nn.BatchNorm2d(2), torch.nn.BatchNorm1d(2, momentum=0.5))",
        "bn = torch.nn.BatchNorm2d(2); bn(torch.arange(16.).reshape(2, 2, 2, 2))",
        "bn = torch.nn.BatchNorm2d(2, momentum=None); x = torch.arange(16.).reshape(2, 2, 2, 2); bn(x); bn(x * x); bn(x - 3); bn.running_var",
        "bn = torch.nn.BatchNorm2d(2, momentum=None); x = torch.arange(16.).reshape(2, 2, 2, 2); bn(x); bn(x * x); bn.num_batches_tracked",
        "bn = torch.nn.BatchNorm2d(2); bn(torch.arange(16.).reshape(2, 2, 2, 2)); bn.eval(); bn(torch.ones(1, 2, 1, 2))",
        "bn = torch.nn.BatchNorm2d(2, track_running_stats=False); bn.eval(); bn(torch.arange(8.).reshape(1, 2, 2, 2))",
        "bn = torch.nn.BatchNorm3d(1, affine=False); bn(torch.arange(8.).reshape(1, 1, 2, 2, 2))",
        "bn = torch.nn.BatchNorm2d(2); bn(torch.arange(16.).reshape(2, 2, 2, 2)); bn.reset_parameters(); (bn.running_mean, bn.num_batches_tracked)",
        "bn = torch.nn.BatchNorm2d(2); list(bn.state_dict())",
        "torch.nn.LayerNorm(4)",
        "torch.nn.LayerNorm((2, 3), eps=1e-3, bias=False)",
        "torch.nn.LayerNorm([5], elementwise_affine=False)",
        "torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.LayerNorm(4), torch.nn.ReLU())",
        "torch.nn.functional.layer_norm(torch.tensor([[1., 2., 3.], [2., 4., 9.]]), (3,))",
        "x = torch.arange(12.).reshape(2, 2, 3).requires_grad_(); torch.nn.LayerNorm((2, 3))(x * x)",
        "x = torch.arange(6.).reshape(2, 3).requires_grad_(); f = torch.nn.functional.layer_norm(x, [3], None, torch.ones(3)).grad_fn; (f.name(), [n is None for n, _ in f.next_functions])",
        "x = torch.tensor([[0.5, 1., 4.]], requires_grad=True); y = torch.nn.functional.layer_norm(x ** 2, (3,), torch.tensor([1., 2., 3.])); y.backward(torch.tensor([[1., -1., 2.]])); x.grad",
        "ln = torch.nn.LayerNorm(3); x = torch.tensor([[1., 2., 4.], [0., -1., 1.]]); (ln(x) * x).sum().backward(); (ln.weight.grad, ln.bias.grad)",
        "ln = torch.nn.LayerNorm(3, dtype=torch.float64); ln(torch.tensor([[1., 2., 4.]], dtype=torch.float64))",
        "torch.nn.functional.layer_norm(torch.tensor([[3., 3., 3.]]), (3,), eps=0.)",
    ],
    "random": [
        "torch.manual_seed(0); torch.rand(3)",
        "torch.manual_seed(0); torch.randn(3)",
        "torch.manual_seed(0); torch.randn(3, requires_grad=True)",
        "torch.manual_seed(0); torch.randn(2, 3)",
        "torch.manual_seed(0); torch.randn(4, 4)",
        "torch.manual_seed(0); torch.randn(5, 5)",
        "torch.manual_seed(1); torch.randn(17)",
        "torch.manual_seed(42); torch.randn(3, 4, requires_grad=True)",
        "torch.manual_seed(42); torch.rand(2, 2)",
        "torch.manual_seed(42); torch.randn(10, 10)",
        "torch.manual_seed(42); torch.rand(3, dtype=torch.float64)",
        "torch.manual_seed(42); torch.randn(3, dtype=torch.float64)",
        "torch.manual_seed(42); torch.randn(20, dtype=torch.float64)",
        "torch.manual_seed(7); torch.randint(0, 10, (3, 4))",
        "torch.manual_seed(7); torch.randint(5, (6,))",
        "torch.manual_seed(7); torch.randperm(10)",
        "torch.manual_seed(3); a = torch.randn(3); b = torch.randn(3); b",
        "torch.manual_seed(3); a = torch.randn(1, dtype=torch.float64); torch.randn(2, dtype=torch.float64)",
        "torch.manual_seed(3); a = torch.rand(5); torch.randn(40)",
        "torch.manual_seed(0); x = torch.randn(3, requires_grad=True); y = x * 2; y",
        "torch.manual_seed(0); torch.rand_like(torch.ones(2, 2))",
        "torch.manual_seed(0); torch.randn_like(torch.ones(4, 5))",
        "torch.manual_seed(0); torch.empty(3, 3).uniform_(-1, 1)",
        "torch.manual_seed(0); torch.empty(20).normal_(2, 0.5)",
        "torch.manual_seed(0); torch.empty(5).normal_(mean=1., std=3.)",
        "torch.manual_seed(0); torch.normal(0., 1., (2, 3))",
        "torch.manual_seed(0); g = torch.Generator().manual_seed(5); torch.rand(2, generator=g)",
        "torch.manual_seed(0); torch.initial_seed()",
        "torch.manual_seed(2**40 + 1); torch.rand(2)",
        "torch.manual_seed(0); torch.randn(1000)",
        "torch.manual_seed(0); w = torch.randn(2, 16, requires_grad=True); b = torch.zeros(16, requires_grad=True); torch.randn(4, 2) @ w + b",
    ],
    "activations": [
        "torch.nn.LeakyReLU()",
        "torch.nn.LeakyReLU(0.2, inplace=True)",
        "torch.nn.ELU()",
        "torch.nn.ELU(alpha=0.5, inplace=True)",
        "torch.nn.SELU()",
        "torch.nn.CELU(2.0)",
        "torch.nn.GELU()",
        "torch.nn.GELU(approximate='tanh')",
        "torch.nn.SiLU()",
        "torch.nn.SiLU(inplace=True)",
        "torch.nn.Softplus()",
        "torch.nn.Softplus(beta=2, threshold=5)",
        "torch.nn.Hardtanh()",
        "torch.nn.Hardtanh(-2, 2, inplace=True)",
        "torch.nn.ReLU6()",
        "torch.nn.ReLU6(inplace=True)",
        "torch.nn.Mish()",
        "torch.nn.LogSigmoid()",
        "torch.nn.Softsign()",
        "torch.nn.Hardsigmoid()",
        "torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.GELU(), torch.nn.Linear(3, 1), torch.nn.LeakyReLU(0.1))",
        "x = torch.tensor([-2., -0.5, 0., 1.5], requires_grad=True); torch.nn.functional.leaky_relu(x, 0.1)",
        "x = torch.tensor([-2., -0.5, 0., 1.5], requires_grad=True); torch.nn.functional.elu(x)",
        "x = torch.tensor([-2., -0.5, 0., 1.5], requires_grad=True); torch.nn.functional.gelu(x)",
        "x = torch.tensor([-2., -0.5, 0., 1.5], requires_grad=True); torch.nn.functional.gelu(x, approximate='tanh')",
        "x = torch.tensor([-2., -0.5, 0., 1.5], requires_grad=True); torch.nn.functional.silu(x)",
        "x = torch.tensor([-2., -0.5, 0., 1.5], requires_grad=True); torch.nn.functional.softplus(x)",
        "x = torch.tensor([-2., -0.5, 0., 1.5], requires_grad=True); torch.nn.functional.relu6(x * 4)",
        "x = torch.tensor([-2., -0.5, 0., 1.5], requires_grad=True); torch.nn.functional.mish(x)",
        "x = torch.tensor([-2., -0.5, 0., 1.5], requires_grad=True); torch.nn.functional.logsigmoid(x)",
        "x = torch.tensor([-2., -0.5, 0., 1.5], requires_grad=True); torch.nn.functional.hardsigmoid(x)",
        "x = torch.tensor([-2., -0.5, 0., 1.5], requires_grad=True); torch.selu(x)",
        "x = torch.tensor([-2., -0.5, 0., 1.5], requires_grad=True); torch.celu(x, 0.5)",
        "x = torch.tensor([-2., -0.5, 0., 1.5], requires_grad=True); y = x * 1; torch.nn.functional.leaky_relu_(y, 0.2)",
        "x = torch.tensor([-2., -0.5, 0., 1.5], requires_grad=True); y = x * 1; torch.nn.functional.elu_(y)",
    ],
}


def run_case(torch, code):
    """Run ``code`` with ``torch`` bound, returning the repr of its last expression."""
    torch.set_printoptions(profile="default", sci_mode=None)
    torch.manual_seed(0)
    tree = ast.parse(code)
    *body, last = tree.body
    scope = {"torch": torch}
    try:
        exec(compile(ast.Module(body, []), "<case>", "exec"), scope)
        value = eval(compile(ast.Expression(last.value), "<case>", "eval"), scope)
        return repr(value)
    finally:
        torch.set_printoptions(profile="default", sci_mode=None)


def parse(path):
    """``[(code, expected), ...]`` from a golden file."""
    cases, code, lines = [], None, []
    for line in path.read_text().split("\n"):
        if line.startswith("=== "):
            if code is not None:
                cases.append((code, "\n".join(lines).rstrip("\n")))
            code, lines = line[4:].replace("\\n", "\n"), []
        else:
            lines.append(line)
    if code is not None:
        cases.append((code, "\n".join(lines).rstrip("\n")))
    return cases


def main(names=()):
    import torch
    for name, cases in CASES.items():
        if names and name not in names:
            continue
        out = []
        for code in cases:
            out.append("=== " + code.replace("\n", "\\n"))
            out.append(run_case(torch, code))
        (HERE / f"{name}.txt").write_text("\n".join(out) + "\n")
        print(f"wrote {len(cases)} cases to {HERE / name}.txt", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
