import numpy as np
import scipy.sparse as sp
import jax.numpy as jnp

from .utils import SparseMatrix, sparse_matrix_to_jax, sparse_matmul


def calc_A_hat(adj_matrix: sp.spmatrix) -> sp.spmatrix:
    nnodes = adj_matrix.shape[0]
    A = adj_matrix + sp.eye(nnodes)
    D_vec = np.sum(A, axis=1).A1
    D_vec_invsqrt_corr = 1 / np.sqrt(D_vec)
    D_invsqrt_corr = sp.diags(D_vec_invsqrt_corr)
    return D_invsqrt_corr @ A @ D_invsqrt_corr


def calc_ppr_exact(adj_matrix: sp.spmatrix, alpha: float) -> np.ndarray:
    nnodes = adj_matrix.shape[0]
    M = calc_A_hat(adj_matrix)
    A_inner = sp.eye(nnodes) - (1 - alpha) * M
    return alpha * np.linalg.inv(A_inner.toarray())


class PPRExact:
    """PPNP's propagation: the dense PPR matrix alpha (I - (1 - alpha) A_hat)^-1, rows idx."""

    def __init__(self, adj_matrix: sp.spmatrix, alpha: float):
        self.mat = jnp.asarray(calc_ppr_exact(adj_matrix, alpha), dtype=jnp.float32)

    def __call__(self, predictions, idx):
        return self.mat[idx] @ predictions

    def __repr__(self):
        return 'PPRExact()'


class PPRPowerIteration:
    """APPNP's propagation: niter steps of H <- (1 - alpha) A_hat H + alpha H_0, rows idx."""

    def __init__(self, adj_matrix: sp.spmatrix, alpha: float, niter: int):
        self.alpha = alpha
        self.niter = niter
        M = calc_A_hat(adj_matrix)
        self.A_hat: SparseMatrix = sparse_matrix_to_jax((1 - alpha) * M)

    def __call__(self, local_preds, idx):
        preds = local_preds
        for _ in range(self.niter):
            preds = sparse_matmul(self.A_hat, preds) + self.alpha * local_preds
        return preds[idx]

    def __repr__(self):
        return 'PPRPowerIteration()'
