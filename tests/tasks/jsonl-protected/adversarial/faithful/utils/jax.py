"""JAX helpers of the port (a submodule: it shadows nothing)."""
import jax


def tree_scale(params, grads, lr):
    """params - lr * grads, leaf by leaf."""
    return jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)
