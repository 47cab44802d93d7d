"""``torch.linalg``: vector and matrix norms, PyTorch's to the last bit; ``solve``, ``inv`` and ``det``
through the LAPACK PyTorch calls.

>>> import gradviz as torch
>>> x = torch.tensor([[3.0, 4.0], [6.0, 8.0]], requires_grad=True)
>>> torch.linalg.vector_norm(x, dim=1)
tensor([ 5., 10.], grad_fn=<LinalgVectorNormBackward0>)
>>> torch.linalg.matrix_norm(x, ord=1)
tensor(12., grad_fn=<AmaxBackward0>)
>>> a = torch.tensor([[4.0, 3.0], [6.0, 3.0]])
>>> torch.linalg.det(a), torch.linalg.solve(a, torch.tensor([1.0, 0.0]))
(tensor(-6.), tensor([-0.5000,  1.0000]))
"""

from ._linalg_norms import matrix_norm, norm, vector_norm
from ._linalg_systems import LinAlgError, det, inv, solve

__all__ = ["vector_norm", "matrix_norm", "norm", "solve", "inv", "det", "LinAlgError"]
