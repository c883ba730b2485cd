"""
Implements a simple n-gram language model in JAX (ported from the PyTorch version).
Acts as the correctness reference for all the other versions.
"""
import math
from functools import partial

import numpy as np
import jax
import jax.numpy as jnp
import optax

from common import RNG, StepTimer

# -----------------------------------------------------------------------------
# JAX implementation of the MLP n-gram model: the parameters are a dict of arrays

class MLPRaw:
    """
    Takes the previous n tokens, encodes them with a lookup table,
    concatenates the vectors and predicts the next token with an MLP.

    Reference:
    Bengio et al. 2003 https://www.jmlr.org/papers/volume3/bengio03a/bengio03a.pdf
    """

    def __init__(self, vocab_size, context_length, embedding_size, hidden_size, rng):
        v, t, e, h = vocab_size, context_length, embedding_size, hidden_size
        self.embedding_size = embedding_size
        # the weights come from our own RNG, drawn in the same order as in the PyTorch
        # version (float32, like torch.tensor of a list of Python floats)
        f32 = lambda xs: np.asarray(xs, dtype=np.float32)
        wte = f32(rng.randn(v * e, mu=0, sigma=1.0)).reshape(v, e)
        scale = 1 / math.sqrt(e * t)
        fc1_weights = f32(rng.rand(t * e * h, -scale, scale)).reshape(h, t * e).T
        fc1_bias = f32(rng.rand(h, -scale, scale))
        scale = 1 / math.sqrt(h)
        fc2_weights = f32(rng.rand(v * h, -scale, scale)).reshape(v, h).T
        fc2_bias = f32(rng.rand(v, -scale, scale))
        self.params = {
            'wte': jnp.asarray(wte),
            'fc1_weights': jnp.asarray(fc1_weights),
            'fc1_bias': jnp.asarray(fc1_bias),
            'fc2_weights': jnp.asarray(fc2_weights),
            'fc2_bias': jnp.asarray(fc2_bias),
        }

    def parameters(self):
        return self.params

    def __call__(self, idx, targets=None):
        return self.forward(idx, targets)

    def forward(self, idx, targets=None):
        # idx are the input tokens, (B, T) array of integers
        # targets are the target tokens, (B, ) array of integers
        idx = jnp.asarray(idx)
        if targets is None:
            return _logits(self.params, idx), None
        return _logits_and_loss(self.params, idx, jnp.asarray(targets))

def forward(params, idx):
    B, T = idx.shape
    # encode all the tokens using the embedding table
    emb = params['wte'][idx] # (B, T, embedding_size)
    # concat all of the embeddings together
    emb = emb.reshape(B, -1) # (B, T * embedding_size)
    # forward through the MLP
    hidden = jnp.tanh(emb @ params['fc1_weights'] + params['fc1_bias'])
    logits = hidden @ params['fc2_weights'] + params['fc2_bias']
    return logits

def cross_entropy(logits, targets):
    # mean negative log-likelihood, F.cross_entropy in PyTorch
    return optax.softmax_cross_entropy_with_integer_labels(logits, targets).mean()

def loss_fn(params, idx, targets):
    return cross_entropy(forward(params, idx), targets)

_logits = jax.jit(forward)

@jax.jit
def _logits_and_loss(params, idx, targets):
    logits = forward(params, idx)
    return logits, cross_entropy(logits, targets)

# -----------------------------------------------------------------------------
# Equivalent implementation in the style of the nn.Module version: an embedding table and
# Linear(t * e, h) -> tanh -> Linear(h, v), re-initialized from our own RNG. It draws the same
# numbers in the same order and layouts as MLPRaw (N(0, 1) embedding, then U(-K, K) with
# K = 1/sqrt(fan_in) for each Linear weight, drawn (out, in), and its bias), so both
# classes produce the exact same results.

class MLP(MLPRaw):
    pass

# -----------------------------------------------------------------------------
# simple DataLoader that iterates over all the n-grams

def dataloader(tokens, context_length, batch_size):
    # returns inputs, targets as numpy arrays of shape (B, T), (B, )
    n = len(tokens)
    inputs, targets = [], []
    pos = 0
    while True:
        # simple sliding window over the tokens, of size context_length + 1
        window = tokens[pos:pos + context_length + 1]
        inputs.append(window[:-1])
        targets.append(window[-1])
        # once we've collected a batch, emit it
        if len(inputs) == batch_size:
            yield (np.array(inputs, dtype=np.int32), np.array(targets, dtype=np.int32))
            inputs, targets = [], []
        # advance the position and wrap around if we reach the end
        pos += 1
        if pos + context_length >= n:
            pos = 0

# -----------------------------------------------------------------------------
# evaluation function

def eval_split(model, tokens, max_batches=None):
    # calculate the loss on the given tokens
    total_loss = 0
    num_batches = len(tokens) // batch_size
    if max_batches is not None:
        num_batches = min(num_batches, max_batches)
    data_iter = dataloader(tokens, context_length, batch_size)
    for _ in range(num_batches):
        inputs, targets = next(data_iter)
        logits, loss = model(inputs, targets)
        total_loss += loss.item()
    mean_loss = total_loss / num_batches
    return mean_loss

# -----------------------------------------------------------------------------
# sampling from the model

def softmax(logits):
    # logits here is a (1D) numpy array of shape (V,)
    maxval = np.max(logits) # subtract max for numerical stability
    exps = np.exp(logits - maxval)
    probs = exps / np.sum(exps)
    return probs

def sample_discrete(probs, coinf):
    # sample from a discrete distribution
    # probs is a numpy array of shape (V,)
    cdf = 0.0
    for i, prob in enumerate(probs):
        cdf += prob
        if coinf < cdf:
            return i
    return len(probs) - 1  # in case of rounding errors

# -----------------------------------------------------------------------------
# let's train!

# "train" the Tokenizer, so we're able to map between characters and tokens
train_text = open('data/train.txt', 'r').read()
assert all(c == '\n' or ('a' <= c <= 'z') for c in train_text)
uchars = sorted(list(set(train_text))) # unique characters we see in the input
vocab_size = len(uchars)
char_to_token = {c: i for i, c in enumerate(uchars)}
token_to_char = {i: c for i, c in enumerate(uchars)}
EOT_TOKEN = char_to_token['\n'] # designate \n as the delimiting <|endoftext|> token
# pre-tokenize all the splits one time up here
test_tokens = [char_to_token[c] for c in open('data/test.txt', 'r').read()]
val_tokens = [char_to_token[c] for c in open('data/val.txt', 'r').read()]
train_tokens = [char_to_token[c] for c in open('data/train.txt', 'r').read()]

# create the model
context_length = 3 # if 3 tokens predict the 4th, this is a 4-gram model
embedding_size = 48
hidden_size = 512
init_rng = RNG(1337)
# these two classes both produce the exact same results. One is written as nn.Module would be.
model = MLPRaw(vocab_size, context_length, embedding_size, hidden_size, init_rng)
# model = MLP(vocab_size, context_length, embedding_size, hidden_size, init_rng)

# create the optimizer: torch.optim.AdamW (betas 0.9, 0.999, eps 1e-8), decoupled weight
# decay 1e-4 on every parameter; inject_hyperparams keeps the learning rate in the state
learning_rate = 7e-4
optimizer = optax.inject_hyperparams(optax.adamw)(
    learning_rate=learning_rate, b1=0.9, b2=0.999, eps=1e-8, weight_decay=1e-4)
opt_state = optimizer.init(model.params)

@partial(jax.jit, donate_argnums=(0, 1))
def train_step(params, opt_state, inputs, targets):
    loss, grads = jax.value_and_grad(loss_fn)(params, inputs, targets)
    updates, opt_state = optimizer.update(grads, opt_state, params)
    params = optax.apply_updates(params, updates)
    return params, opt_state, loss

# training loop
timer = StepTimer()
batch_size = 128
num_steps = 50000
print(f'num_steps {num_steps}, num_epochs {num_steps * batch_size / len(train_tokens):.2f}')
train_data_iter = dataloader(train_tokens, context_length, batch_size)
for step in range(num_steps):
    # cosine learning rate schedule, from max lr to 0
    lr = learning_rate * 0.5 * (1 + math.cos(math.pi * step / num_steps))
    # every now and then evaluate the validation loss
    last_step = step == num_steps - 1
    if step % 200 == 0 or last_step:
        train_loss = eval_split(model, train_tokens, max_batches=20)
        val_loss = eval_split(model, val_tokens)
        print(f'step {step:6d} | train_loss {train_loss:.6f} | val_loss {val_loss:.6f} | lr {lr:e} | time/step {timer.get_dt()*1000:.4f}ms')
    # training step
    with timer:
        # get the next batch of training data
        inputs, targets = next(train_data_iter)
        # forward, backward and the optimizer's update, one compiled step
        model.params, opt_state, loss = train_step(model.params, opt_state, inputs, targets)
        loss.block_until_ready()

# model inference
# hardcode a prompt from which we'll continue the text
sample_rng = RNG(42)
prompt = "\nrichard"
context = [char_to_token[c] for c in prompt]
assert len(context) >= context_length
context = context[-context_length:] # crop to context_length
print(prompt, end='', flush=True)
# now let's sample 200 more tokens that follow
for _ in range(200):
    # take the last context_length tokens and predict the next one
    context_array = np.array(context, dtype=np.int32).reshape(1, -1) # (1, T)
    logits, _ = model(context_array) # (1, V)
    probs = softmax(np.asarray(logits[0])) # (V, )
    coinf = sample_rng.random() # "coin flip", float32 in range [0, 1)
    next_token = sample_discrete(probs, coinf)
    context = context[1:] + [next_token] # update the token tape
    print(token_to_char[next_token], end='', flush=True)
print() # newline

# and finally report the test loss
test_loss = eval_split(model, test_tokens)
print(f'test_loss {test_loss}')
