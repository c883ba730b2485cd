from typing import List

import jax
import jax.numpy as jnp

from .utils import init_mixed_linear, init_linear, mixed_dropout, mixed_matmul


class PPNP:
    """PPNP/APPNP: an MLP without biases on the (sparse) attributes, then the propagation.

    Parameters are a dict {'fcs': [W0 [in, hidden], W1 [out, in], ...]}; only W0 is
    L2-regularised (reg_params)."""

    def __init__(self, nfeatures: int, nclasses: int, hiddenunits: List[int], drop_prob: float,
                 propagation, bias: bool = False):
        if bias:
            raise NotImplementedError('the PPNP port has no biases (the paper\'s setting)')
        self.sizes = [nfeatures] + list(hiddenunits) + [nclasses]
        self.drop_prob = drop_prob
        self.propagation = propagation

    def init(self, key):
        keys = jax.random.split(key, len(self.sizes) - 1)
        fcs = [init_mixed_linear(keys[0], self.sizes[0], self.sizes[1])]
        for i in range(1, len(self.sizes) - 1):
            fcs.append(init_linear(keys[i], self.sizes[i], self.sizes[i + 1]))
        return {'fcs': fcs}

    @staticmethod
    def reg_params(params):
        return [params['fcs'][0]]

    def _transform_features(self, params, attr_matrix, key, training):
        fcs = params['fcs']
        key_in, key_hidden = jax.random.split(key)
        layer_inner = jax.nn.relu(mixed_matmul(
                mixed_dropout(key_in, attr_matrix, self.drop_prob, training), fcs[0]))
        for fc in fcs[1:-1]:
            layer_inner = jax.nn.relu(layer_inner @ fc.T)
        return mixed_dropout(key_hidden, layer_inner, self.drop_prob, training) @ fcs[-1].T

    def apply(self, params, attr_matrix, idx, key=None, training=False):
        if key is None:
            key = jax.random.PRNGKey(0)
        local_logits = self._transform_features(params, attr_matrix, key, training)
        final_logits = self.propagation(local_logits, idx)
        return jax.nn.log_softmax(final_logits, axis=-1)

    def __repr__(self):
        return 'PPNP()'
