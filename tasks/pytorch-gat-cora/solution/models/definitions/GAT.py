"""GAT (Veličković et al., 2018) in JAX: the port of models/definitions/GAT.py, implementation #3
(the edge-list one the training script uses). A layer's parameters keep the source's names and
layouts (linear_proj.weight is (NH * FOUT, FIN), as nn.Linear keeps it; the scoring vectors are
(1, NH, FOUT)), so `GAT.state_dict()` has the source's keys."""
import math

import jax
import jax.numpy as jnp
import numpy as np

from utils.constants import LayerType


def xavier_uniform(key, shape):
    """torch.nn.init.xavier_uniform_: fan_in = shape[1] * receptive field, fan_out = shape[0] * it."""
    receptive_field = int(np.prod(shape[2:])) if len(shape) > 2 else 1
    fan_in, fan_out = shape[1] * receptive_field, shape[0] * receptive_field
    bound = math.sqrt(6.0 / (fan_in + fan_out))
    return jax.random.uniform(key, shape, jnp.float32, -bound, bound)


def dropout(x, prob, key, training):
    """nn.Dropout: in training, zero each entry with probability `prob` and scale the rest by 1 / (1 - prob)."""
    if not training or prob == 0.0:
        return x
    keep = jax.random.bernoulli(key, 1.0 - prob, x.shape)
    return jnp.where(keep, x / (1.0 - prob), 0.0)


class GATLayerImp3:
    """One GAT layer over an edge index (2, E) of source -> target edges."""

    src_nodes_dim = 0
    trg_nodes_dim = 1

    def __init__(self, num_in_features, num_out_features, num_of_heads, concat, activation, dropout_prob,
                 add_skip_connection, bias):
        self.num_in_features = num_in_features
        self.num_out_features = num_out_features
        self.num_of_heads = num_of_heads
        self.concat = concat
        self.activation = activation
        self.dropout_prob = dropout_prob
        self.add_skip_connection = add_skip_connection
        self.bias = bias

    def init_params(self, key):
        """Xavier-uniform projection and scoring vectors, zero bias (GATLayer.init_params)."""
        k_proj, k_trg, k_src, k_skip = jax.random.split(key, 4)
        nh, fout = self.num_of_heads, self.num_out_features
        params = {
            "linear_proj.weight": xavier_uniform(k_proj, (nh * fout, self.num_in_features)),
            "scoring_fn_target": xavier_uniform(k_trg, (1, nh, fout)),
            "scoring_fn_source": xavier_uniform(k_src, (1, nh, fout)),
        }
        if self.bias:
            params["bias"] = jnp.zeros((nh * fout,) if self.concat else (fout,), jnp.float32)
        if self.add_skip_connection:
            # nn.Linear's default init (kaiming_uniform with a = sqrt(5)): uniform in +-1/sqrt(fan_in).
            bound = 1.0 / math.sqrt(self.num_in_features)
            params["skip_proj.weight"] = jax.random.uniform(
                k_skip, (nh * fout, self.num_in_features), jnp.float32, -bound, bound)
        return params

    def __call__(self, params, in_nodes_features, edge_index, training, key):
        num_of_nodes = in_nodes_features.shape[0]
        nh, fout = self.num_of_heads, self.num_out_features
        k_in, k_proj, k_att = jax.random.split(key, 3)

        in_nodes_features = dropout(in_nodes_features, self.dropout_prob, k_in, training)
        nodes_features_proj = (in_nodes_features @ params["linear_proj.weight"].T).reshape(-1, nh, fout)
        nodes_features_proj = dropout(nodes_features_proj, self.dropout_prob, k_proj, training)

        scores_source = (nodes_features_proj * params["scoring_fn_source"]).sum(-1)
        scores_target = (nodes_features_proj * params["scoring_fn_target"]).sum(-1)

        src, trg = edge_index[self.src_nodes_dim], edge_index[self.trg_nodes_dim]
        scores_per_edge = jax.nn.leaky_relu(scores_source[src] + scores_target[trg], 0.2)

        # The neighbourhood-aware softmax: the global max subtracted, then each edge's exp over the
        # sum of the exps of the edges into the same target node.
        scores_per_edge = scores_per_edge - scores_per_edge.max()
        exp_scores_per_edge = jnp.exp(scores_per_edge)
        neighborhood_sums = jax.ops.segment_sum(exp_scores_per_edge, trg, num_segments=num_of_nodes)
        attentions_per_edge = (exp_scores_per_edge / (neighborhood_sums[trg] + 1e-16))[..., None]
        attentions_per_edge = dropout(attentions_per_edge, self.dropout_prob, k_att, training)

        weighted = nodes_features_proj[src] * attentions_per_edge
        out_nodes_features = jax.ops.segment_sum(weighted, trg, num_segments=num_of_nodes)

        if self.add_skip_connection:
            if out_nodes_features.shape[-1] == in_nodes_features.shape[-1]:
                out_nodes_features = out_nodes_features + in_nodes_features[:, None, :]
            else:
                skip = in_nodes_features @ params["skip_proj.weight"].T
                out_nodes_features = out_nodes_features + skip.reshape(-1, nh, fout)
        if self.concat:
            out_nodes_features = out_nodes_features.reshape(-1, nh * fout)
        else:
            out_nodes_features = out_nodes_features.mean(axis=1)
        if self.bias:
            out_nodes_features = out_nodes_features + params["bias"]
        if self.activation is not None:
            out_nodes_features = self.activation(out_nodes_features)
        return out_nodes_features


class GAT:
    """The stack of GAT layers: heads concatenated and ELU between layers, the last layer's heads
    averaged into raw class scores."""

    def __init__(self, num_of_layers, num_heads_per_layer, num_features_per_layer, add_skip_connection=True,
                 bias=True, dropout=0.6, layer_type=LayerType.IMP3, log_attention_weights=False, key=None):
        assert num_of_layers == len(num_heads_per_layer) == len(num_features_per_layer) - 1, 'Enter valid arch params.'
        if layer_type != LayerType.IMP3:
            raise Exception(f'Layer type {layer_type} is not ported (only {LayerType.IMP3.name}).')
        num_heads_per_layer = [1] + num_heads_per_layer
        self.layers = []
        for i in range(num_of_layers):
            self.layers.append(GATLayerImp3(
                num_in_features=num_features_per_layer[i] * num_heads_per_layer[i],
                num_out_features=num_features_per_layer[i + 1],
                num_of_heads=num_heads_per_layer[i + 1],
                concat=i < num_of_layers - 1,
                activation=jax.nn.elu if i < num_of_layers - 1 else None,
                dropout_prob=dropout,
                add_skip_connection=add_skip_connection,
                bias=bias,
            ))
        keys = jax.random.split(key, num_of_layers)
        self.params = [layer.init_params(k) for layer, k in zip(self.layers, keys)]

    def apply(self, params, node_features, edge_index, training, key):
        """The class scores (N, C); `key` draws the dropout masks when `training`."""
        keys = jax.random.split(key, len(self.layers))
        x = node_features
        for layer, p, k in zip(self.layers, params, keys):
            x = layer(p, x, edge_index, training, k)
        return x

    def state_dict(self):
        """The parameters as numpy arrays under the source's state_dict keys."""
        return {f'gat_net.{i}.{name}': np.asarray(value)
                for i, p in enumerate(self.params) for name, value in p.items()}
