"""``tinynet.linalg``: PyTorch's ``torch.linalg`` on NumPy and CuPy arrays.

The functions live in :mod:`tinynet.ops` by family (``lapack_solve``, ``lapack_det``,
``lapack_decomp``, ``lapack_lstsq``, ``matrix_functions``, ``norms``); this module only
gathers them under PyTorch's names. Numerics come from ``numpy.linalg``/``scipy.linalg`` on
the CPU and ``cupy.linalg``/``cupyx.scipy.linalg`` on the GPU; gradients follow the
literature cited in each module. Real float32/float64 matrices (float16 where PyTorch's CPU
takes it: norms, ``matrix_exp``, ``matrix_power``, ``vecdot``, ``multi_dot``); tinynet has no
complex dtypes. docs/linalg.md lists the functions and where tinynet differs from PyTorch.

``solve``, ``inv``, ``slogdet``, ``matrix_exp`` and the compositions are twice
differentiable; the backwards of the factorisations are not recorded (second derivatives
through them raise ``AutogradError``).

Bad input raises :mod:`tinynet.errors` types naming ``linalg.<fn>`` and the argument; a
matrix the factorisation cannot take (``solve``/``inv`` of a singular matrix, ``cholesky``
of one that is not positive-definite) raises :class:`LinAlgError`, a ``RuntimeError``, as
``torch.linalg.LinAlgError``.
"""
from .errors import LinAlgError
from .ops.lapack_decomp import eigh, eigvalsh, qr, svd, svdvals
from .ops.lapack_det import cholesky, cholesky_ex, det, slogdet
from .ops.lapack_lstsq import lstsq, matrix_rank, pinv
from .ops.lapack_solve import inv, inv_ex, solve, solve_triangular
from .ops.blas import matmul  # torch.linalg.matmul is torch.matmul (ops/blas.py: the matrix products)
from .ops.matrix_functions import cross, diagonal, matrix_exp, matrix_power, multi_dot, vander, vecdot
from .ops.norms import matrix_norm, norm, vector_norm

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "inv_ex",
           "lstsq", "matmul", "matrix_exp", "matrix_norm", "matrix_power", "matrix_rank", "multi_dot", "norm", "pinv",
           "qr", "slogdet", "solve", "solve_triangular", "svd", "svdvals", "vander", "vecdot", "vector_norm"]
