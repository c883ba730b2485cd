"""
you give this script some words (one per line) and it will generate more things like it.
uses super state of the art Transformer AI tech
this code is intended to be super hackable. tune it to your needs.

Changes from minGPT:
- I removed the from_pretrained function where we init with GPT2 weights
- I removed dropout layers because the models we train here are small,
  it's not necessary to understand at this stage and at this scale.
- I removed weight decay and all of the complexity around what parameters are
  and are not weight decayed. I don't believe this should make a massive
  difference at the scale that we operate on here.

JAX port: jax + optax + numpy. The models are pure functions of a flat dict of parameters
named and shaped exactly as PyTorch's state_dict (nn.Linear weights (out, in), applied as
x @ W.T + b), initialised as PyTorch's defaults do. Data order, the train/test split, the
evaluation shuffle and sampling draw from NumPy / JAX generators seeded with --seed.
Checkpoints (model.pt in the work dir) are pickled NumPy arrays, not torch files. The
TensorBoard scalars are written with the tensorboard package's own event writer (PyTorch's
SummaryWriter is a torch import); without tensorboard installed they are skipped.
"""

import os
import sys
import time
import math
import pickle
import argparse
from dataclasses import dataclass
from typing import List

import numpy as np
import jax
import jax.numpy as jnp
import optax

# -----------------------------------------------------------------------------

@dataclass
class ModelConfig:
    block_size: int = None # length of the input sequences of integers
    vocab_size: int = None # the input integers are in range [0 .. vocab_size -1]
    # parameters below control the sizes of each model slightly differently
    n_layer: int = 4
    n_embd: int = 64
    n_embd2: int = 64
    n_head: int = 4

# -----------------------------------------------------------------------------
# parameter initialisation, as PyTorch's defaults

class Init:
    """ hands out fresh keys and initialises parameters the way torch.nn does by default """

    def __init__(self, key):
        self.key = key

    def next(self):
        self.key, sub = jax.random.split(self.key)
        return sub

    def linear(self, params, name, fan_in, fan_out, bias=True):
        # nn.Linear: kaiming_uniform_(a=sqrt(5)) -> U(-1/sqrt(fan_in), 1/sqrt(fan_in)); bias the same bound
        bound = 1.0 / math.sqrt(fan_in)
        params[name + '.weight'] = jax.random.uniform(self.next(), (fan_out, fan_in), jnp.float32, -bound, bound)
        if bias:
            params[name + '.bias'] = jax.random.uniform(self.next(), (fan_out,), jnp.float32, -bound, bound)

    def embedding(self, params, name, num, dim):
        # nn.Embedding: N(0, 1)
        params[name + '.weight'] = jax.random.normal(self.next(), (num, dim), jnp.float32)

    def layernorm(self, params, name, dim):
        params[name + '.weight'] = jnp.ones((dim,), jnp.float32)
        params[name + '.bias'] = jnp.zeros((dim,), jnp.float32)

def linear(p, name, x):
    y = x @ p[name + '.weight'].T
    if name + '.bias' in p:
        y = y + p[name + '.bias']
    return y

def layernorm(p, name, x, eps=1e-5):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + eps) * p[name + '.weight'] + p[name + '.bias']

def cross_entropy(logits, targets):
    """ F.cross_entropy(logits.view(-1, V), targets.view(-1), ignore_index=-1): mean over targets != -1 """
    logits = logits.reshape(-1, logits.shape[-1])
    targets = targets.reshape(-1)
    valid = targets != -1
    logp = jax.nn.log_softmax(logits, axis=-1)
    nll = -jnp.take_along_axis(logp, jnp.where(valid, targets, 0)[:, None], axis=-1)[:, 0]
    return jnp.sum(jnp.where(valid, nll, 0.0)) / jnp.sum(valid)

# -----------------------------------------------------------------------------
# Transformer Language Model (*exactly* as used in GPT-2)

def new_gelu(x):
    """
    Implementation of the GELU activation function currently in Google BERT repo (identical to OpenAI GPT).
    Reference: Gaussian Error Linear Units (GELU) paper: https://arxiv.org/abs/1606.08415
    """
    return 0.5 * x * (1.0 + jnp.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * jnp.power(x, 3.0))))

def causal_self_attention(p, name, x, n_head):
    B, T, C = x.shape # batch size, sequence length, embedding dimensionality (n_embd)
    q, k, v = jnp.split(linear(p, name + '.c_attn', x), 3, axis=2)
    k = k.reshape(B, T, n_head, C // n_head).transpose(0, 2, 1, 3) # (B, nh, T, hs)
    q = q.reshape(B, T, n_head, C // n_head).transpose(0, 2, 1, 3) # (B, nh, T, hs)
    v = v.reshape(B, T, n_head, C // n_head).transpose(0, 2, 1, 3) # (B, nh, T, hs)
    att = (q @ k.transpose(0, 1, 3, 2)) * (1.0 / math.sqrt(k.shape[-1]))
    mask = jnp.tril(jnp.ones((T, T), dtype=bool))
    att = jnp.where(mask[None, None], att, -jnp.inf)
    att = jax.nn.softmax(att, axis=-1)
    y = att @ v # (B, nh, T, T) x (B, nh, T, hs) -> (B, nh, T, hs)
    y = y.transpose(0, 2, 1, 3).reshape(B, T, C) # re-assemble all head outputs side by side
    return linear(p, name + '.c_proj', y)

class Transformer:
    """ Transformer Language Model, exactly as seen in GPT-2 """

    def __init__(self, config):
        self.config = config
        self.block_size = config.block_size

    def init(self, key):
        c, ini, p = self.config, Init(key), {}
        ini.embedding(p, 'transformer.wte', c.vocab_size, c.n_embd)
        ini.embedding(p, 'transformer.wpe', c.block_size, c.n_embd)
        for i in range(c.n_layer):
            h = f'transformer.h.{i}'
            ini.layernorm(p, h + '.ln_1', c.n_embd)
            ini.linear(p, h + '.attn.c_attn', c.n_embd, 3 * c.n_embd)
            ini.linear(p, h + '.attn.c_proj', c.n_embd, c.n_embd)
            ini.layernorm(p, h + '.ln_2', c.n_embd)
            ini.linear(p, h + '.mlp.c_fc', c.n_embd, 4 * c.n_embd)
            ini.linear(p, h + '.mlp.c_proj', 4 * c.n_embd, c.n_embd)
        ini.layernorm(p, 'transformer.ln_f', c.n_embd)
        ini.linear(p, 'lm_head', c.n_embd, c.vocab_size, bias=False)
        # report number of parameters (note we don't count the decoder parameters in lm_head)
        n_params = sum(v.size for k, v in p.items() if k.startswith('transformer.'))
        print("number of parameters: %.2fM" % (n_params/1e6,))
        return p

    def get_block_size(self):
        return self.block_size

    def __call__(self, p, idx, targets=None):
        b, t = idx.shape
        assert t <= self.block_size, f"Cannot forward sequence of length {t}, block size is only {self.block_size}"
        x = p['transformer.wte.weight'][idx] + p['transformer.wpe.weight'][:t][None]
        for i in range(self.config.n_layer):
            h = f'transformer.h.{i}'
            x = x + causal_self_attention(p, h + '.attn', layernorm(p, h + '.ln_1', x), self.config.n_head)
            m = layernorm(p, h + '.ln_2', x)
            x = x + linear(p, h + '.mlp.c_proj', new_gelu(linear(p, h + '.mlp.c_fc', m)))
        x = layernorm(p, 'transformer.ln_f', x)
        logits = linear(p, 'lm_head', x)
        loss = None
        if targets is not None:
            loss = optax.softmax_cross_entropy_with_integer_labels(logits, targets).mean()
        return logits, loss

# -----------------------------------------------------------------------------
# Bag of Words (BoW) language model

class BoW:
    """
    takes the previous block_size tokens, encodes them with a lookup table,
    also encodes their positions with lookup table, then averages all of those
    embeddings up and uses that to predict the next token.
    """

    def __init__(self, config):
        self.config = config
        self.block_size = config.block_size
        self.vocab_size = config.vocab_size

    def init(self, key):
        c, ini, p = self.config, Init(key), {}
        ini.embedding(p, 'wte', c.vocab_size, c.n_embd)
        ini.embedding(p, 'wpe', c.block_size, c.n_embd)
        ini.linear(p, 'context_block.mlp.c_fc', c.n_embd, c.n_embd2)
        ini.linear(p, 'context_block.mlp.c_proj', c.n_embd2, c.n_embd)
        ini.linear(p, 'lm_head', c.n_embd, c.vocab_size)
        return p

    def get_block_size(self):
        return self.block_size

    def __call__(self, p, idx, targets=None):
        b, t = idx.shape
        assert t <= self.block_size, f"Cannot forward sequence of length {t}, block size is only {self.block_size}"
        x = p['wte.weight'][idx] + p['wpe.weight'][:t][None]
        # causal bag of words: the average of all preceding token features (itself included)
        att = jnp.where(jnp.tril(jnp.ones((t, t), dtype=bool)), 0.0, -jnp.inf)
        att = jax.nn.softmax(att, axis=-1)
        x = x + att[None] @ x
        x = x + linear(p, 'context_block.mlp.c_proj', jnp.tanh(linear(p, 'context_block.mlp.c_fc', x)))
        logits = linear(p, 'lm_head', x)
        loss = None
        if targets is not None:
            loss = cross_entropy(logits, targets)
        return logits, loss

# -----------------------------------------------------------------------------
"""
Recurrent Neural Net language model: either a vanilla RNN recurrence or a GRU.
"""

class RNN:

    def __init__(self, config, cell_type):
        self.config = config
        self.block_size = config.block_size
        self.vocab_size = config.vocab_size
        self.cell_type = cell_type

    def init(self, key):
        c, ini, p = self.config, Init(key), {}
        p['start'] = jnp.zeros((1, c.n_embd2), jnp.float32) # the starting hidden state
        ini.embedding(p, 'wte', c.vocab_size, c.n_embd)
        if self.cell_type == 'rnn':
            ini.linear(p, 'cell.xh_to_h', c.n_embd + c.n_embd2, c.n_embd2)
        elif self.cell_type == 'gru':
            ini.linear(p, 'cell.xh_to_z', c.n_embd + c.n_embd2, c.n_embd2)
            ini.linear(p, 'cell.xh_to_r', c.n_embd + c.n_embd2, c.n_embd2)
            ini.linear(p, 'cell.xh_to_hbar', c.n_embd + c.n_embd2, c.n_embd2)
        ini.linear(p, 'lm_head', c.n_embd2, c.vocab_size)
        return p

    def get_block_size(self):
        return self.block_size

    def cell(self, p, xt, hprev):
        xh = jnp.concatenate([xt, hprev], axis=1)
        if self.cell_type == 'rnn':
            return jnp.tanh(linear(p, 'cell.xh_to_h', xh))
        r = jax.nn.sigmoid(linear(p, 'cell.xh_to_r', xh))
        hprev_reset = r * hprev
        xhr = jnp.concatenate([xt, hprev_reset], axis=1)
        hbar = jnp.tanh(linear(p, 'cell.xh_to_hbar', xhr))
        z = jax.nn.sigmoid(linear(p, 'cell.xh_to_z', xh))
        return (1 - z) * hprev + z * hbar

    def __call__(self, p, idx, targets=None):
        b, t = idx.shape
        emb = p['wte.weight'][idx] # (b, t, n_embd)
        hprev = jnp.broadcast_to(p['start'], (b, p['start'].shape[1]))
        def step(h, xt):
            ht = self.cell(p, xt, h)
            return ht, ht
        _, hiddens = jax.lax.scan(step, hprev, emb.transpose(1, 0, 2))
        hidden = hiddens.transpose(1, 0, 2) # (b, t, n_embd2)
        logits = linear(p, 'lm_head', hidden)
        loss = None
        if targets is not None:
            loss = cross_entropy(logits, targets)
        return logits, loss

# -----------------------------------------------------------------------------
# MLP language model

class MLP:
    """
    takes the previous block_size tokens, encodes them with a lookup table,
    concatenates the vectors and predicts the next token with an MLP.

    Reference:
    Bengio et al. 2003 https://www.jmlr.org/papers/volume3/bengio03a/bengio03a.pdf
    """

    def __init__(self, config):
        self.config = config
        self.block_size = config.block_size
        self.vocab_size = config.vocab_size

    def init(self, key):
        c, ini, p = self.config, Init(key), {}
        # +1 for a special <BLANK> token that gets inserted if encoding a token
        # before the beginning of the input sequence
        ini.embedding(p, 'wte', c.vocab_size + 1, c.n_embd)
        ini.linear(p, 'mlp.0', self.block_size * c.n_embd, c.n_embd2)
        ini.linear(p, 'mlp.2', c.n_embd2, c.vocab_size)
        return p

    def get_block_size(self):
        return self.block_size

    def __call__(self, p, idx, targets=None):
        # gather the word embeddings of the previous block_size words
        embs = []
        for k in range(self.block_size):
            embs.append(p['wte.weight'][idx])
            idx = jnp.roll(idx, 1, 1)
            idx = idx.at[:, 0].set(self.vocab_size) # special <BLANK> token
        x = jnp.concatenate(embs, -1) # (b, t, n_embd * block_size)
        logits = linear(p, 'mlp.2', jnp.tanh(linear(p, 'mlp.0', x)))
        loss = None
        if targets is not None:
            loss = cross_entropy(logits, targets)
        return logits, loss

# -----------------------------------------------------------------------------
# Bigram language model

class Bigram:
    """
    Bigram Language Model 'neural net', simply a lookup table of logits for the
    next character given a previous character.
    """

    def __init__(self, config):
        self.config = config

    def init(self, key):
        n = self.config.vocab_size
        return {'logits': jnp.zeros((n, n), jnp.float32)}

    def get_block_size(self):
        return 1 # this model only needs one previous character to predict the next

    def __call__(self, p, idx, targets=None):
        logits = p['logits'][idx]
        loss = None
        if targets is not None:
            loss = cross_entropy(logits, targets)
        return logits, loss

# -----------------------------------------------------------------------------
# helper functions for evaluating and sampling from the model

def generate(model, params, idx, max_new_tokens, key, temperature=1.0, do_sample=False, top_k=None):
    """
    Take a conditioning sequence of indices idx (int array of shape (b,t)) and complete
    the sequence max_new_tokens times, feeding the predictions back into the model each time.
    Every model here is causal (the logits at position t see tokens 0..t only), so the
    sequence grows in a fixed buffer and the logits are read at its last filled position;
    a context longer than block_size is cropped as in the original.
    """
    block_size = model.get_block_size()
    b, t0 = idx.shape
    width = min(t0 + max_new_tokens, max(block_size, 1))
    fwd = _forward_fn(model)
    idx = np.asarray(idx)
    for _ in range(max_new_tokens):
        # if the sequence context is growing too long we must crop it at block_size
        idx_cond = idx if idx.shape[1] <= block_size else idx[:, -block_size:]
        n = idx_cond.shape[1]
        buf = np.zeros((b, width), dtype=np.int32)
        buf[:, :n] = idx_cond
        logits = fwd(params, jnp.asarray(buf))[:, n - 1, :] / temperature
        # optionally crop the logits to only the top k options
        if top_k is not None:
            v = jax.lax.top_k(logits, top_k)[0]
            logits = jnp.where(logits < v[:, [-1]], -jnp.inf, logits)
        if do_sample:
            key, sub = jax.random.split(key)
            idx_next = jax.random.categorical(sub, logits, axis=-1)
        else:
            idx_next = jnp.argmax(logits, axis=-1)
        idx = np.concatenate([idx, np.asarray(idx_next, dtype=idx.dtype)[:, None]], axis=1)
    return idx

_FWD = {}
def _forward_fn(model):
    if id(model) not in _FWD:
        _FWD[id(model)] = jax.jit(lambda p, x: model(p, x)[0])
    return _FWD[id(model)]

def print_samples(num=10):
    """ samples from the model and pretty prints the decoded samples """
    global sample_key
    X_init = np.zeros((num, 1), dtype=np.int32)
    top_k = args.top_k if args.top_k != -1 else None
    steps = train_dataset.get_output_length() - 1 # -1 because we already start with <START> token (index 0)
    sample_key, sub = jax.random.split(sample_key)
    X_samp = generate(model, params, X_init, steps, sub, top_k=top_k, do_sample=True)
    train_samples, test_samples, new_samples = [], [], []
    for i in range(X_samp.shape[0]):
        # get the i'th row of sampled integers, as python list
        row = X_samp[i, 1:].tolist() # note: we need to crop out the first <START> token
        # token 0 is the <STOP> token, so we crop the output sequence at that point
        crop_index = row.index(0) if 0 in row else len(row)
        row = row[:crop_index]
        word_samp = train_dataset.decode(row)
        # separately track samples that we have and have not seen before
        if train_dataset.contains(word_samp):
            train_samples.append(word_samp)
        elif test_dataset.contains(word_samp):
            test_samples.append(word_samp)
        else:
            new_samples.append(word_samp)
    print('-'*80)
    for lst, desc in [(train_samples, 'in train'), (test_samples, 'in test'), (new_samples, 'new')]:
        print(f"{len(lst)} samples that are {desc}:")
        for word in lst:
            print(word)
    print('-'*80)

_LOSS = {}
def _loss_fn(model):
    if id(model) not in _LOSS:
        _LOSS[id(model)] = jax.jit(lambda p, x, y: model(p, x, y)[1])
    return _LOSS[id(model)]

def evaluate(model, params, dataset, rng, batch_size=50, max_batches=None):
    """ DataLoader(dataset, shuffle=True, batch_size): a fresh permutation, then batches in order;
    like the original, the batch with index max_batches is still evaluated before stopping """
    loss_fn = _loss_fn(model)
    perm = rng.permutation(len(dataset))
    losses = []
    for i, start in enumerate(range(0, len(perm), batch_size)):
        X, Y = dataset.batch(perm[start:start + batch_size])
        loss = loss_fn(params, jnp.asarray(X), jnp.asarray(Y))
        losses.append(float(loss))
        if max_batches is not None and i >= max_batches:
            break
    mean_loss = float(np.mean(np.array(losses, dtype=np.float32)))
    return mean_loss

# -----------------------------------------------------------------------------
# helper functions for creating the training and test Datasets that emit words

class CharDataset:

    def __init__(self, words, chars, max_word_length):
        self.words = words
        self.chars = chars
        self.max_word_length = max_word_length
        self.stoi = {ch:i+1 for i,ch in enumerate(chars)}
        self.itos = {i:s for s,i in self.stoi.items()} # inverse mapping
        self.word_set = set(words)
        # every example encoded once: x, y of shape (len(words), max_word_length + 1)
        X = np.zeros((len(words), max_word_length + 1), dtype=np.int32)
        Y = np.zeros((len(words), max_word_length + 1), dtype=np.int32)
        for n, word in enumerate(words):
            X[n], Y[n] = self[n]
        self.X, self.Y = X, Y

    def __len__(self):
        return len(self.words)

    def contains(self, word):
        return word in self.word_set

    def get_vocab_size(self):
        return len(self.chars) + 1 # all the possible characters and special 0 token

    def get_output_length(self):
        return self.max_word_length + 1 # <START> token followed by words

    def encode(self, word):
        ix = np.array([self.stoi[w] for w in word], dtype=np.int32)
        return ix

    def decode(self, ix):
        word = ''.join(self.itos[i] for i in ix)
        return word

    def __getitem__(self, idx):
        word = self.words[idx]
        ix = self.encode(word)
        x = np.zeros(self.max_word_length + 1, dtype=np.int32)
        y = np.zeros(self.max_word_length + 1, dtype=np.int32)
        x[1:1+len(ix)] = ix
        y[:len(ix)] = ix
        y[len(ix)+1:] = -1 # index -1 will mask the loss at the inactive locations
        return x, y

    def batch(self, indices):
        return self.X[indices], self.Y[indices]

def create_datasets(input_file, rng):

    # preprocessing of the input text file
    with open(input_file, 'r') as f:
        data = f.read()
    words = data.splitlines()
    words = [w.strip() for w in words] # get rid of any leading or trailing white space
    words = [w for w in words if w] # get rid of any empty strings
    chars = sorted(list(set(''.join(words)))) # all the possible characters
    max_word_length = max(len(w) for w in words)
    print(f"number of examples in the dataset: {len(words)}")
    print(f"max word length: {max_word_length}")
    print(f"number of unique characters in the vocabulary: {len(chars)}")
    print("vocabulary:")
    print(''.join(chars))

    # partition the input data into a training and the test set
    test_set_size = min(1000, int(len(words) * 0.1)) # 10% of the training set, or up to 1000 examples
    rp = rng.permutation(len(words)).tolist()
    train_words = [words[i] for i in rp[:-test_set_size]]
    test_words = [words[i] for i in rp[-test_set_size:]]
    print(f"split up the dataset into {len(train_words)} training examples and {len(test_words)} test examples")

    # wrap in dataset objects
    train_dataset = CharDataset(train_words, chars, max_word_length)
    test_dataset = CharDataset(test_words, chars, max_word_length)

    return train_dataset, test_dataset

class InfiniteDataLoader:
    """
    RandomSampler(replacement=True): every batch is batch_size indices drawn uniformly, with
    replacement, from the whole training set, from one generator seeded once.
    """

    def __init__(self, dataset, rng, batch_size=1, **kwargs):
        self.dataset = dataset
        self.rng = rng
        self.batch_size = batch_size

    def next(self):
        ix = self.rng.integers(0, len(self.dataset), size=self.batch_size)
        return self.dataset.batch(ix)

class SummaryWriter:
    """ TensorBoard scalars through the tensorboard package's own event writer (no torch) """

    def __init__(self, log_dir):
        try:
            from tensorboard.summary.writer.event_file_writer import EventFileWriter
            from tensorboard.compat.proto.event_pb2 import Event
            from tensorboard.compat.proto.summary_pb2 import Summary
        except ImportError:
            self.writer = None
            return
        self.Event, self.Summary = Event, Summary
        self.writer = EventFileWriter(log_dir)

    def add_scalar(self, tag, value, step):
        if self.writer is None:
            return
        summary = self.Summary(value=[self.Summary.Value(tag=tag, simple_value=float(value))])
        self.writer.add_event(self.Event(wall_time=time.time(), step=int(step), summary=summary))

    def flush(self):
        if self.writer is not None:
            self.writer.flush()

def save_params(params, path):
    with open(path, 'wb') as f:
        pickle.dump({k: np.asarray(v) for k, v in params.items()}, f)

def load_params(path):
    with open(path, 'rb') as f:
        return {k: jnp.asarray(v) for k, v in pickle.load(f).items()}

# -----------------------------------------------------------------------------
if __name__ == '__main__':

    # parse command line args
    parser = argparse.ArgumentParser(description="Make More")
    # system/input/output
    parser.add_argument('--input-file', '-i', type=str, default='names.txt', help="input file with things one per line")
    parser.add_argument('--work-dir', '-o', type=str, default='out', help="output working directory")
    parser.add_argument('--resume', action='store_true', help="when this flag is used, we will resume optimization from existing model in the workdir")
    parser.add_argument('--sample-only', action='store_true', help="just sample from the model and quit, don't train")
    parser.add_argument('--num-workers', '-n', type=int, default=4, help="number of data workers for both train/test")
    parser.add_argument('--max-steps', type=int, default=-1, help="max number of optimization steps to run for, or -1 for infinite.")
    parser.add_argument('--device', type=str, default='cpu', help="device to use for compute, examples: cpu|cuda|cuda:2|mps")
    parser.add_argument('--seed', type=int, default=3407, help="seed")
    # sampling
    parser.add_argument('--top-k', type=int, default=-1, help="top-k for sampling, -1 means no top-k")
    # model
    parser.add_argument('--type', type=str, default='transformer', help="model class type to use, bigram|mlp|rnn|gru|bow|transformer")
    parser.add_argument('--n-layer', type=int, default=4, help="number of layers")
    parser.add_argument('--n-head', type=int, default=4, help="number of heads (in a transformer)")
    parser.add_argument('--n-embd', type=int, default=64, help="number of feature channels in the model")
    parser.add_argument('--n-embd2', type=int, default=64, help="number of feature channels elsewhere in the model")
    # optimization
    parser.add_argument('--batch-size', '-b', type=int, default=32, help="batch size during optimization")
    parser.add_argument('--learning-rate', '-l', type=float, default=5e-4, help="learning rate")
    parser.add_argument('--weight-decay', '-w', type=float, default=0.01, help="weight decay")
    args = parser.parse_args()
    print(vars(args))

    # system inits: one NumPy generator for the split, the training batches and the
    # evaluation shuffles; JAX keys for the parameters and the sampling
    rng = np.random.default_rng(args.seed)
    key = jax.random.PRNGKey(args.seed)
    init_key, sample_key = jax.random.split(key)
    os.makedirs(args.work_dir, exist_ok=True)
    writer = SummaryWriter(log_dir=args.work_dir)

    # init datasets
    train_dataset, test_dataset = create_datasets(args.input_file, rng)
    vocab_size = train_dataset.get_vocab_size()
    block_size = train_dataset.get_output_length()
    print(f"dataset determined that: {vocab_size=}, {block_size=}")

    # init model
    config = ModelConfig(vocab_size=vocab_size, block_size=block_size,
                       n_layer=args.n_layer, n_head=args.n_head,
                       n_embd=args.n_embd, n_embd2=args.n_embd2)
    if args.type == 'transformer':
        model = Transformer(config)
    elif args.type == 'bigram':
        model = Bigram(config)
    elif args.type == 'mlp':
        model = MLP(config)
    elif args.type == 'rnn':
        model = RNN(config, cell_type='rnn')
    elif args.type == 'gru':
        model = RNN(config, cell_type='gru')
    elif args.type == 'bow':
        model = BoW(config)
    else:
        raise ValueError(f'model type {args.type} is not recognized')
    params = model.init(init_key)
    print(f"model #params: {sum(v.size for v in params.values())}")
    if args.resume or args.sample_only: # note: if we sample-only then we also assume we are resuming
        print("resuming from existing model in the workdir")
        params = load_params(os.path.join(args.work_dir, 'model.pt'))
    if args.sample_only:
        print_samples(num=50)
        sys.exit()

    # init optimizer: torch.optim.AdamW over every parameter (biases, LayerNorm and embeddings
    # included), betas (0.9, 0.99), eps 1e-8, decoupled weight decay lr * wd * p
    optimizer = optax.adamw(learning_rate=args.learning_rate, b1=0.9, b2=0.99, eps=1e-8,
                            weight_decay=args.weight_decay)
    opt_state = optimizer.init(params)

    @jax.jit
    def train_step(params, opt_state, X, Y):
        loss, grads = jax.value_and_grad(lambda p: model(p, X, Y)[1])(params)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        params = optax.apply_updates(params, updates)
        return params, opt_state, loss

    # init dataloader
    batch_loader = InfiniteDataLoader(train_dataset, rng, batch_size=args.batch_size)

    # training loop
    best_loss = None
    step = 0
    while True:

        t0 = time.time()

        # get the next batch and unpack it to input and target
        X, Y = batch_loader.next()

        # feed into the model, calculate the gradient, update the weights
        params, opt_state, loss = train_step(params, opt_state, jnp.asarray(X), jnp.asarray(Y))
        loss = float(loss) # waits for the step to finish
        t1 = time.time()

        # logging
        if step % 10 == 0:
            print(f"step {step} | loss {loss:.4f} | step time {(t1-t0)*1000:.2f}ms")

        # evaluate the model
        if step > 0 and step % 500 == 0:
            train_loss = evaluate(model, params, train_dataset, rng, batch_size=100, max_batches=10)
            test_loss  = evaluate(model, params, test_dataset, rng, batch_size=100, max_batches=10)
            writer.add_scalar("Loss/train", train_loss, step)
            writer.add_scalar("Loss/test", test_loss, step)
            writer.flush()
            print(f"step {step} train loss: {train_loss} test loss: {test_loss}")
            # save the model to disk if it has improved
            if best_loss is None or test_loss < best_loss:
                out_path = os.path.join(args.work_dir, "model.pt")
                print(f"test loss {test_loss} is the best so far, saving model to {out_path}")
                save_params(params, out_path)
                best_loss = test_loss

        # sample from the model
        if step > 0 and step % 200 == 0:
            print_samples(num=10)

        step += 1
        # termination conditions
        if args.max_steps >= 0 and step >= args.max_steps:
            break
