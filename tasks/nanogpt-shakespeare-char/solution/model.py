"""
Full definition of a GPT Language Model in JAX, all of it in this single file.
A port of nanoGPT's model.py: the same architecture, initialisation, weight tying and
optimizer parameter groups. Parameters are a plain pytree of arrays; linear weights are
stored (in, out), so `x @ w` is PyTorch's `x @ w.T`.
References:
1) the official GPT-2 TensorFlow implementation released by OpenAI:
https://github.com/openai/gpt-2/blob/master/src/model.py
2) huggingface/transformers PyTorch implementation:
https://github.com/huggingface/transformers/blob/main/src/transformers/models/gpt2/modeling_gpt2.py
"""

import math
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
import optax


def layer_norm(p, x):
    """ LayerNorm with an optional bias, eps 1e-5 and the biased variance, as F.layer_norm """
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    y = (x - mean) * jax.lax.rsqrt(var + 1e-5) * p['weight']
    if 'bias' in p:
        y = y + p['bias']
    return y


def linear(p, x):
    # as a 2-D matmul: XLA on CPU runs the gradient of a batched (B, T, C) x (C, D) product
    # many times slower
    y = (x.reshape(-1, x.shape[-1]) @ p['weight']).reshape(*x.shape[:-1], -1)
    if 'bias' in p:
        y = y + p['bias']
    return y


def dropout(x, rate, key):
    """ inverted dropout, as nn.Dropout; identity when rate is 0 or key is None (eval) """
    if rate == 0.0 or key is None:
        return x
    keep = jax.random.bernoulli(key, 1.0 - rate, x.shape)
    return jnp.where(keep, x / (1.0 - rate), 0.0)


@dataclass
class GPTConfig:
    block_size: int = 1024
    vocab_size: int = 50304 # GPT-2 vocab_size of 50257, padded up to nearest multiple of 64 for efficiency
    n_layer: int = 12
    n_head: int = 12
    n_embd: int = 768
    dropout: float = 0.0
    bias: bool = True # True: bias in Linears and LayerNorms, like GPT-2. False: a bit better and faster


class GPT:

    def __init__(self, config):
        assert config.vocab_size is not None
        assert config.block_size is not None
        self.config = config

    def init(self, key):
        """ the parameters: every Linear and Embedding weight N(0, 0.02), biases zero, LayerNorm
        weights one; the residual projections (c_proj) N(0, 0.02/sqrt(2 * n_layer)), per GPT-2.
        The token embedding is also the output head (weight tying): there is no lm_head. """
        cfg = self.config
        C = cfg.n_embd
        keys = iter(jax.random.split(key, 2 + 4 * cfg.n_layer))
        std = 0.02
        proj_std = 0.02 / math.sqrt(2 * cfg.n_layer)

        def lin(n_in, n_out, s):
            p = {'weight': s * jax.random.normal(next(keys), (n_in, n_out), jnp.float32)}
            if cfg.bias:
                p['bias'] = jnp.zeros((n_out,), jnp.float32)
            return p

        def ln():
            p = {'weight': jnp.ones((C,), jnp.float32)}
            if cfg.bias:
                p['bias'] = jnp.zeros((C,), jnp.float32)
            return p

        params = {
            'wte': std * jax.random.normal(next(keys), (cfg.vocab_size, C), jnp.float32),
            'wpe': std * jax.random.normal(next(keys), (cfg.block_size, C), jnp.float32),
            'h': [],
            'ln_f': ln(),
        }
        for _ in range(cfg.n_layer):
            params['h'].append({
                'ln_1': ln(),
                'attn': {'c_attn': lin(C, 3 * C, std), 'c_proj': lin(C, C, proj_std)},
                'ln_2': ln(),
                'mlp': {'c_fc': lin(C, 4 * C, std), 'c_proj': lin(4 * C, C, proj_std)},
            })
        # report number of parameters
        print("number of parameters: %.2fM" % (self.get_num_params(params)/1e6,))
        return params

    def get_num_params(self, params, non_embedding=True):
        """
        Return the number of parameters in the model.
        For non-embedding count (default), the position embeddings get subtracted.
        The token embeddings would too, except due to the parameter sharing these
        params are actually used as weights in the final layer, so we include them.
        """
        n_params = sum(x.size for x in jax.tree_util.tree_leaves(params))
        if non_embedding:
            n_params -= params['wpe'].size
        return n_params

    def attention(self, p, x, key):
        B, T, C = x.shape # batch size, sequence length, embedding dimensionality (n_embd)
        nh = self.config.n_head
        q, k, v = jnp.split(linear(p['c_attn'], x), 3, axis=2)
        # (B, T, C) -> (B, nh, T, hs)
        q = q.reshape(B, T, nh, C // nh).transpose(0, 2, 1, 3)
        k = k.reshape(B, T, nh, C // nh).transpose(0, 2, 1, 3)
        v = v.reshape(B, T, nh, C // nh).transpose(0, 2, 1, 3)
        # causal self-attention: position t attends to positions 0..t only
        att = (q @ k.transpose(0, 1, 3, 2)) * (1.0 / math.sqrt(k.shape[-1]))
        causal = jnp.tril(jnp.ones((T, T), dtype=bool))
        att = jnp.where(causal[None, None, :, :], att, -jnp.inf)
        att = jax.nn.softmax(att, axis=-1)
        k1, k2 = jax.random.split(key) if key is not None else (None, None)
        att = dropout(att, self.config.dropout, k1)
        y = att @ v # (B, nh, T, T) x (B, nh, T, hs) -> (B, nh, T, hs)
        y = y.transpose(0, 2, 1, 3).reshape(B, T, C) # re-assemble all head outputs side by side
        return dropout(linear(p['c_proj'], y), self.config.dropout, k2)

    def mlp(self, p, x, key):
        x = linear(p['c_fc'], x)
        x = jax.nn.gelu(x, approximate=False) # nn.GELU() is the exact erf form
        x = linear(p['c_proj'], x)
        return dropout(x, self.config.dropout, key)

    def __call__(self, params, idx, targets=None, key=None):
        """ logits and the mean cross-entropy (targets of -1 ignored); `key` turns dropout on
        (training), None is evaluation. Without targets only the last position's logits. """
        b, t = idx.shape
        assert t <= self.config.block_size, f"Cannot forward sequence of length {t}, block size is only {self.config.block_size}"
        keys = list(jax.random.split(key, 1 + 2 * self.config.n_layer)) if key is not None else [None] * (1 + 2 * self.config.n_layer)
        tok_emb = params['wte'][idx] # token embeddings of shape (b, t, n_embd)
        pos_emb = params['wpe'][:t] # position embeddings of shape (t, n_embd)
        x = dropout(tok_emb + pos_emb, self.config.dropout, keys[0])
        for i, block in enumerate(params['h']):
            x = x + self.attention(block['attn'], layer_norm(block['ln_1'], x), keys[1 + 2 * i])
            x = x + self.mlp(block['mlp'], layer_norm(block['ln_2'], x), keys[2 + 2 * i])
        x = layer_norm(params['ln_f'], x)
        if targets is not None:
            logits = x @ params['wte'].T # weight tying: the head is the token embedding
            logp = jax.nn.log_softmax(logits, axis=-1)
            valid = targets != -1
            nll = -jnp.take_along_axis(logp, jnp.where(valid, targets, 0)[..., None], axis=-1)[..., 0]
            loss = jnp.sum(jnp.where(valid, nll, 0.0)) / jnp.maximum(jnp.sum(valid), 1)
        else:
            # inference-time mini-optimization: only forward the head on the very last position
            logits = x[:, -1:, :] @ params['wte'].T
            loss = None
        return logits, loss

    def crop_block_size(self, params, block_size):
        # model surgery to decrease the block size if necessary
        assert block_size <= self.config.block_size
        self.config.block_size = block_size
        params['wpe'] = params['wpe'][:block_size]
        return params

    @classmethod
    def from_pretrained(cls, model_type, override_args=None):
        raise NotImplementedError(
            "loading OpenAI GPT-2 weights (init_from='gpt2*') needs the PyTorch checkpoint "
            "of transformers and is not part of this port")

    def configure_optimizers(self, params, weight_decay, learning_rate, betas, device_type, grad_clip=0.0):
        """ AdamW (optax) with decay only on the 2-D tensors (matmul weights and embeddings;
        biases and LayerNorm weights are not decayed), gradients clipped to a global norm of
        grad_clip first when it is not 0. `learning_rate` is a number or a schedule of the
        update count. """
        decay_mask = jax.tree_util.tree_map(lambda p: p.ndim >= 2, params)
        leaves = jax.tree_util.tree_leaves(params)
        decay_params = [p for p in leaves if p.ndim >= 2]
        nodecay_params = [p for p in leaves if p.ndim < 2]
        num_decay_params = sum(p.size for p in decay_params)
        num_nodecay_params = sum(p.size for p in nodecay_params)
        print(f"num decayed parameter tensors: {len(decay_params)}, with {num_decay_params:,} parameters")
        print(f"num non-decayed parameter tensors: {len(nodecay_params)}, with {num_nodecay_params:,} parameters")
        adamw = optax.adamw(learning_rate, b1=betas[0], b2=betas[1], eps=1e-8,
                            weight_decay=weight_decay, mask=decay_mask)
        print("using optax.adamw")
        if grad_clip != 0.0:
            return optax.chain(optax.clip_by_global_norm(grad_clip), adamw)
        return adamw

    def estimate_mfu(self, params, fwdbwd_per_iter, dt):
        """ estimate model flops utilization (MFU) in units of A100 bfloat16 peak FLOPS """
        # first estimate the number of flops we do per iteration.
        # see PaLM paper Appendix B as ref: https://arxiv.org/abs/2204.02311
        N = self.get_num_params(params)
        cfg = self.config
        L, H, Q, T = cfg.n_layer, cfg.n_head, cfg.n_embd//cfg.n_head, cfg.block_size
        flops_per_token = 6*N + 12*L*H*Q*T
        flops_per_fwdbwd = flops_per_token * T
        flops_per_iter = flops_per_fwdbwd * fwdbwd_per_iter
        # express our flops throughput as ratio of A100 bfloat16 peak flops
        flops_achieved = flops_per_iter * (1.0/dt) # per second
        flops_promised = 312e12 # A100 GPU bfloat16 peak flops is 312 TFLOPS
        mfu = flops_achieved / flops_promised
        return mfu

    def generate(self, params, idx, max_new_tokens, key, temperature=1.0, top_k=None):
        """
        Take a conditioning sequence of indices idx (int array of shape (b,t)) and complete
        the sequence max_new_tokens times, feeding the predictions back into the model each time.
        """
        forward = jax.jit(lambda p, x: self(p, x)[0])
        idx = np.asarray(idx)
        for _ in range(max_new_tokens):
            # if the sequence context is growing too long we must crop it at block_size
            idx_cond = idx if idx.shape[1] <= self.config.block_size else idx[:, -self.config.block_size:]
            logits = forward(params, jnp.asarray(idx_cond))
            # pluck the logits at the final step and scale by desired temperature
            logits = logits[:, -1, :] / temperature
            # optionally crop the logits to only the top k options
            if top_k is not None:
                v = jax.lax.top_k(logits, min(top_k, logits.shape[-1]))[0]
                logits = jnp.where(logits < v[:, [-1]], -jnp.inf, logits)
            key, sub = jax.random.split(key)
            idx_next = jax.random.categorical(sub, logits, axis=-1)
            idx = np.concatenate([idx, np.asarray(idx_next)[:, None]], axis=1)
        return idx
