import math
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
import jax
import jax.numpy as jnp


class SparseMatrix(NamedTuple):
    """A COO matrix as JAX arrays: values, row and column indices, number of rows."""
    values: jnp.ndarray
    rows: jnp.ndarray
    cols: jnp.ndarray
    nrows: int


def sparse_matrix_to_jax(X) -> SparseMatrix:
    coo = sp.coo_matrix(X)
    return SparseMatrix(
            jnp.asarray(coo.data, dtype=jnp.float32),
            jnp.asarray(coo.row, dtype=jnp.int32),
            jnp.asarray(coo.col, dtype=jnp.int32),
            coo.shape[0])


def matrix_to_jax(X):
    if sp.issparse(X):
        return sparse_matrix_to_jax(X)
    else:
        return jnp.asarray(X, dtype=jnp.float32)


def sparse_matmul(mat: SparseMatrix, dense: jnp.ndarray) -> jnp.ndarray:
    """mat @ dense for a COO matrix: each non-zero scales a row of dense, summed per row."""
    contributions = mat.values[:, None] * dense[mat.cols]
    return jax.ops.segment_sum(contributions, mat.rows, num_segments=mat.nrows)


def dropout(key, x: jnp.ndarray, p: float, training: bool) -> jnp.ndarray:
    """Inverted dropout, as torch's F.dropout: zero with probability p, scale the rest by 1/(1-p)."""
    if not training or p == 0:
        return x
    keep = jax.random.bernoulli(key, 1 - p, x.shape)
    return jnp.where(keep, x / (1 - p), 0.)


def mixed_dropout(key, x, p: float, training: bool):
    """SparseDropout on a sparse matrix's values, dropout on a dense array (MixedDropout)."""
    if isinstance(x, SparseMatrix):
        return x._replace(values=dropout(key, x.values, p, training))
    return dropout(key, x, p, training)


def mixed_matmul(x, weight: jnp.ndarray) -> jnp.ndarray:
    """MixedLinear without bias: sparse or dense input times the [in, out] weight."""
    if isinstance(x, SparseMatrix):
        return sparse_matmul(x, weight)
    return x @ weight


def kaiming_uniform(key, shape, fan: int, a: float = math.sqrt(5)) -> jnp.ndarray:
    """torch.nn.init.kaiming_uniform_ with the given fan: U(-bound, bound), bound = gain * sqrt(3 / fan)."""
    gain = math.sqrt(2.0 / (1 + a ** 2))
    bound = gain * math.sqrt(3.0 / fan)
    return jax.random.uniform(key, shape, jnp.float32, -bound, bound)


def init_mixed_linear(key, in_features: int, out_features: int) -> jnp.ndarray:
    """MixedLinear's weight, [in, out]; torch reads its fan_out (dim 0, in_features) as the fan."""
    return kaiming_uniform(key, (in_features, out_features), fan=in_features)


def init_linear(key, in_features: int, out_features: int) -> jnp.ndarray:
    """nn.Linear's default weight, [out, in], kaiming-uniform over fan_in = in_features."""
    return kaiming_uniform(key, (out_features, in_features), fan=in_features)
