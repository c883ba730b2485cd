"""The models as pure functions of a parameter pytree (JAX). Parameters keep PyTorch's
names and layouts: a Linear is {"weight": (out, in), "bias": (out,)} and computes
x @ weight.T + bias."""
import math

import jax
import jax.numpy as jnp


def linear_init(key, in_features, out_features, bias=True):
    """torch.nn.Linear's default initialisation: kaiming_uniform_(a=sqrt(5)) on the weight,
    i.e. U(-1/sqrt(in), 1/sqrt(in)), and the bias U(-1/sqrt(in), 1/sqrt(in))."""
    wkey, bkey = jax.random.split(key)
    bound = 1. / math.sqrt(in_features)
    params = {"weight": jax.random.uniform(wkey, (out_features, in_features), jnp.float32,
                                           -bound, bound)}
    if bias:
        params["bias"] = jax.random.uniform(bkey, (out_features,), jnp.float32, -bound, bound)
    return params


def linear(params, x):
    out = x @ params["weight"].T
    if "bias" in params:
        out = out + params["bias"]
    return out


class SGC:
    """
    A Simple JAX Implementation of Logistic Regression.
    Assuming the features have been preprocessed with k-step graph propagation.
    """
    def __init__(self, nfeat, nclass):
        self.nfeat, self.nclass = nfeat, nclass
        self.training = True

    def init(self, key):
        return {"W": linear_init(key, self.nfeat, self.nclass)}

    def train(self):
        self.training = True

    def eval(self):
        self.training = False

    def __call__(self, params, x):
        return linear(params["W"], x)


class GraphConvolution:
    """
    A Graph Convolution Layer (GCN)
    """

    def __init__(self, in_features, out_features, bias=True):
        self.in_features = in_features
        self.out_features = out_features
        self.bias = bias

    def init(self, key):
        # nn.Linear's default init, then the weight redrawn U(-stdv, stdv), stdv = 1/sqrt(in).
        params = linear_init(key, self.in_features, self.out_features, self.bias)
        stdv = 1. / math.sqrt(self.in_features)
        params["weight"] = jax.random.uniform(jax.random.fold_in(key, 1), params["weight"].shape,
                                              jnp.float32, -stdv, stdv)
        return params

    def __call__(self, params, input, adj):
        support = linear(params, input)
        output = adj @ support
        # As in the source, the layer returns nothing (GCN is not run by citation.py).


class GCN:
    """
    A Two-layer GCN.
    """
    def __init__(self, nfeat, nhid, nclass, dropout):
        self.gc1 = GraphConvolution(nfeat, nhid)
        self.gc2 = GraphConvolution(nhid, nclass)
        self.dropout = dropout
        self.training = True

    def init(self, key):
        k1, k2 = jax.random.split(key)
        return {"gc1": {"W": self.gc1.init(k1)}, "gc2": {"W": self.gc2.init(k2)}}

    def train(self):
        self.training = True

    def eval(self):
        self.training = False

    def __call__(self, params, x, adj, use_relu=True, key=None):
        x = self.gc1(params["gc1"]["W"], x, adj)
        if use_relu:
            x = jax.nn.relu(x)
        if self.training and self.dropout > 0:
            keep = jax.random.bernoulli(key, 1. - self.dropout, x.shape)
            x = jnp.where(keep, x / (1. - self.dropout), 0.)
        x = self.gc2(params["gc2"]["W"], x, adj)
        return x


def get_model(model_opt, nfeat, nclass, nhid=0, dropout=0, cuda=True):
    if model_opt == "GCN":
        model = GCN(nfeat=nfeat,
                    nhid=nhid,
                    nclass=nclass,
                    dropout=dropout)
    elif model_opt == "SGC":
        model = SGC(nfeat=nfeat,
                    nclass=nclass)
    else:
        raise NotImplementedError('model:{} is not implemented!'.format(model_opt))

    # JAX keeps arrays on its default device: nothing to move when cuda is set.
    return model
