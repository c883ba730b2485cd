"""
Full definition of a GPT Language Model, all of it in this single file, in JAX.

The parameters are a flat dict keyed by the PyTorch module's state_dict names
(transformer.h.0.attn.c_attn.weight, ...), each Linear weight stored (out, in) as
nn.Linear stores it, so y = x @ W.T + b.

References:
1) the official GPT-2 TensorFlow implementation released by OpenAI:
https://github.com/openai/gpt-2/blob/master/src/model.py
2) huggingface/transformers PyTorch implementation:
https://github.com/huggingface/transformers/blob/main/src/transformers/models/gpt2/modeling_gpt2.py
"""

import math
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import optax

from mingpt.utils import CfgNode as CN
from mingpt.utils import next_key

# -----------------------------------------------------------------------------

def new_gelu(x):
    """ the tanh approximation of GELU (Google BERT's, OpenAI GPT's) """
    return 0.5 * x * (1.0 + jnp.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * jnp.power(x, 3.0))))

def linear(params, name, x):
    y = x @ params[name + '.weight'].T
    if name + '.bias' in params:
        y = y + params[name + '.bias']
    return y

def layer_norm(params, name, x, eps=1e-5):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + eps) * params[name + '.weight'] + params[name + '.bias']

def dropout(x, rate, key, train):
    """ inverted dropout as nn.Dropout: zero with probability rate, scale the rest by 1/(1-rate) """
    if not train or rate == 0.0:
        return x
    keep = jax.random.bernoulli(key, 1.0 - rate, x.shape)
    return jnp.where(keep, x / (1.0 - rate), 0.0)

def causal_self_attention(params, name, x, config, keys, train):
    B, T, C = x.shape
    nh = config.n_head
    qkv = linear(params, name + '.c_attn', x)
    q, k, v = jnp.split(qkv, 3, axis=2)
    k = k.reshape(B, T, nh, C // nh).transpose(0, 2, 1, 3) # (B, nh, T, hs)
    q = q.reshape(B, T, nh, C // nh).transpose(0, 2, 1, 3)
    v = v.reshape(B, T, nh, C // nh).transpose(0, 2, 1, 3)
    att = (q @ k.transpose(0, 1, 3, 2)) * (1.0 / math.sqrt(k.shape[-1]))
    mask = jnp.tril(jnp.ones((T, T), dtype=bool))
    att = jnp.where(mask[None, None], att, -jnp.inf)
    att = jax.nn.softmax(att, axis=-1)
    att = dropout(att, config.attn_pdrop, keys[0], train)
    y = att @ v
    y = y.transpose(0, 2, 1, 3).reshape(B, T, C)
    return dropout(linear(params, name + '.c_proj', y), config.resid_pdrop, keys[1], train)

def block(params, name, x, config, keys, train):
    x = x + causal_self_attention(params, name + '.attn', layer_norm(params, name + '.ln_1', x), config, keys[:2], train)
    h = linear(params, name + '.mlp.c_proj', new_gelu(linear(params, name + '.mlp.c_fc', layer_norm(params, name + '.ln_2', x))))
    return x + dropout(h, config.resid_pdrop, keys[2], train)

def gpt_forward(params, idx, config, key, train):
    """ logits (b, t, vocab_size) for token ids idx (b, t); key draws the dropout masks """
    b, t = idx.shape
    keys = jax.random.split(key, 1 + 3 * config.n_layer)
    x = params['transformer.wte.weight'][idx] + params['transformer.wpe.weight'][jnp.arange(t)][None]
    x = dropout(x, config.embd_pdrop, keys[0], train)
    for i in range(config.n_layer):
        x = block(params, 'transformer.h.%d' % i, x, config, keys[1 + 3 * i: 4 + 3 * i], train)
    x = layer_norm(params, 'transformer.ln_f', x)
    return x @ params['lm_head.weight'].T

def cross_entropy_ignore(logits, targets):
    """ F.cross_entropy(..., ignore_index=-1): the targets that are -1 masked out """
    logp = jax.nn.log_softmax(logits, axis=-1)
    valid = targets != -1
    nll = -jnp.take_along_axis(logp, jnp.where(valid, targets, 0)[..., None], axis=-1)[..., 0]
    return jnp.sum(jnp.where(valid, nll, 0.0))

class GPT:
    """ GPT Language Model """

    @staticmethod
    def get_default_config():
        C = CN()
        # either model_type or (n_layer, n_head, n_embd) must be given in the config
        C.model_type = 'gpt'
        C.n_layer = None
        C.n_head = None
        C.n_embd =  None
        # these options must be filled in externally
        C.vocab_size = None
        C.block_size = None
        # dropout hyperparameters
        C.embd_pdrop = 0.1
        C.resid_pdrop = 0.1
        C.attn_pdrop = 0.1
        return C

    def __init__(self, config):
        assert config.vocab_size is not None
        assert config.block_size is not None
        self.block_size = config.block_size

        type_given = config.model_type is not None
        params_given = all([config.n_layer is not None, config.n_head is not None, config.n_embd is not None])
        assert type_given ^ params_given # exactly one of these (XOR)
        if type_given:
            config.merge_from_dict({
                'openai-gpt':   dict(n_layer=12, n_head=12, n_embd=768),  # 117M params
                'gpt2':         dict(n_layer=12, n_head=12, n_embd=768),  # 124M params
                'gpt2-medium':  dict(n_layer=24, n_head=16, n_embd=1024), # 350M params
                'gpt2-large':   dict(n_layer=36, n_head=20, n_embd=1280), # 774M params
                'gpt2-xl':      dict(n_layer=48, n_head=25, n_embd=1600), # 1558M params
                'gopher-44m':   dict(n_layer=8, n_head=16, n_embd=512),
                'gpt-mini':     dict(n_layer=6, n_head=6, n_embd=192),
                'gpt-micro':    dict(n_layer=4, n_head=4, n_embd=128),
                'gpt-nano':     dict(n_layer=3, n_head=3, n_embd=48),
            }[config.model_type])
        self.config = config
        self.training = True
        self.params = self.init_params(config, next_key())

        # report number of parameters (note we don't count the decoder parameters in lm_head)
        n_params = sum(int(np.prod(p.shape)) for k, p in self.params.items() if k.startswith('transformer.'))
        print("number of parameters: %.2fM" % (n_params/1e6,))

    @staticmethod
    def init_params(config, key):
        """ normal(0, 0.02) for Linear and Embedding weights, the residual projections (c_proj)
        normal(0, 0.02/sqrt(2 * n_layer)), biases zero, LayerNorm weight 1 and bias 0 """
        C, V = config.n_embd, config.vocab_size
        shapes = {'transformer.wte.weight': (V, C), 'transformer.wpe.weight': (config.block_size, C)}
        for i in range(config.n_layer):
            h = 'transformer.h.%d' % i
            shapes.update({
                h + '.ln_1.weight': (C,), h + '.ln_1.bias': (C,),
                h + '.attn.c_attn.weight': (3 * C, C), h + '.attn.c_attn.bias': (3 * C,),
                h + '.attn.c_proj.weight': (C, C), h + '.attn.c_proj.bias': (C,),
                h + '.ln_2.weight': (C,), h + '.ln_2.bias': (C,),
                h + '.mlp.c_fc.weight': (4 * C, C), h + '.mlp.c_fc.bias': (4 * C,),
                h + '.mlp.c_proj.weight': (C, 4 * C), h + '.mlp.c_proj.bias': (C,),
            })
        shapes.update({'transformer.ln_f.weight': (C,), 'transformer.ln_f.bias': (C,), 'lm_head.weight': (V, C)})
        keys = jax.random.split(key, len(shapes))
        params = {}
        for k_, (name, shape) in zip(keys, shapes.items()):
            if name.endswith('bias'):
                params[name] = jnp.zeros(shape)
            elif '.ln_' in name:
                params[name] = jnp.ones(shape)
            elif name.endswith('c_proj.weight'):
                params[name] = jax.random.normal(k_, shape) * (0.02 / math.sqrt(2 * config.n_layer))
            else:
                params[name] = jax.random.normal(k_, shape) * 0.02
        return params

    @staticmethod
    def decay_mask(params):
        """ which parameters get weight decay: the Linear weights only (c_attn, c_proj, c_fc,
        lm_head); biases, LayerNorm weights and the embeddings get none """
        linear_weights = ('c_attn.weight', 'c_proj.weight', 'c_fc.weight', 'lm_head.weight')
        return {name: name.endswith(linear_weights) for name in params}

    def configure_optimizers(self, train_config):
        """ AdamW (decoupled weight decay only on the Linear weights) after clipping the
        gradient's global norm """
        return optax.chain(
            optax.clip_by_global_norm(train_config.grad_norm_clip),
            optax.adamw(train_config.learning_rate, b1=train_config.betas[0], b2=train_config.betas[1],
                        eps=1e-8, weight_decay=train_config.weight_decay, mask=self.decay_mask),
        )

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def __call__(self, idx, targets=None):
        idx = jnp.asarray(idx)
        assert idx.shape[1] <= self.block_size, f"Cannot forward sequence of length {idx.shape[1]}, block size is only {self.block_size}"
        logits = _forward(self.params, idx, self.config, next_key(), self.training)
        loss = None
        if targets is not None:
            loss = cross_entropy_ignore(logits, jnp.asarray(targets))
        return logits, loss

    def generate(self, idx, max_new_tokens, temperature=1.0, do_sample=False, top_k=None):
        """
        Take a conditioning sequence of indices idx (shape (b,t)) and complete the sequence
        max_new_tokens times, feeding the predictions back into the model each time.
        """
        idx = jnp.asarray(idx)
        for _ in range(max_new_tokens):
            idx_cond = idx if idx.shape[1] <= self.block_size else idx[:, -self.block_size:]
            logits, _ = self(idx_cond)
            logits = logits[:, -1, :] / temperature
            if top_k is not None:
                v = jax.lax.top_k(logits, top_k)[0]
                logits = jnp.where(logits < v[:, [-1]], -jnp.inf, logits)
            if do_sample:
                idx_next = jax.random.categorical(next_key(), logits, axis=-1)[:, None]
            else:
                idx_next = jnp.argmax(logits, axis=-1)[:, None]
            idx = jnp.concatenate((idx, idx_next.astype(idx.dtype)), axis=1)
        return idx

_forward = jax.jit(gpt_forward, static_argnums=(2, 4))
