"""Train a small character-level transformer on input.txt and report the validation loss
(JAX + Flax + optax).

Usage: python train.py
The seed comes from the environment variable XSTACK_SEED (default 0).
"""
import math
import os

import jax
import jax.numpy as jnp
import numpy as np
import optax

from model import CharTransformer

SEED = int(os.environ.get("XSTACK_SEED", "0"))
BLOCK_SIZE = 32
BATCH_SIZE = 32
STEPS = 300
EVAL_EVERY = 50
LR = 2e-3


def load_text(path="input.txt"):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    data = np.array([stoi[c] for c in text], dtype=np.int32)
    n_train = int(0.9 * len(data))  # first 90% train, last 10% validation
    return jnp.asarray(data[:n_train]), data[n_train:], len(chars)


def val_batches(val):
    # Every non-overlapping window of BLOCK_SIZE + 1 characters of the validation text:
    # the same windows for every seed and every evaluation.
    n = (len(val) - 1) // BLOCK_SIZE
    x = np.stack([val[i * BLOCK_SIZE:(i + 1) * BLOCK_SIZE] for i in range(n)])
    y = np.stack([val[i * BLOCK_SIZE + 1:(i + 1) * BLOCK_SIZE + 1] for i in range(n)])
    return jnp.asarray(x), jnp.asarray(y)


def get_batch(train, key):
    # BATCH_SIZE windows at random offsets of the training text.
    ix = jax.random.randint(key, (BATCH_SIZE,), 0, len(train) - BLOCK_SIZE)
    pos = ix[:, None] + jnp.arange(BLOCK_SIZE)[None, :]
    return train[pos], train[pos + 1]


def loss_of(logits, y):
    return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()


def main():
    key = jax.random.PRNGKey(SEED)
    init_key, dropout_key, batch_key = jax.random.split(key, 3)
    train, val, vocab_size = load_text()
    x_val, y_val = val_batches(val)
    model = CharTransformer(vocab_size, block_size=BLOCK_SIZE)
    params = jax.jit(lambda k, x: model.init(k, x, train=False))(init_key, x_val[:1])["params"]
    # torch.optim.Adam defaults: betas (0.9, 0.999), eps 1e-8, no weight decay.
    optimizer = optax.adam(LR, b1=0.9, b2=0.999, eps=1e-8)
    opt_state = optimizer.init(params)

    @jax.jit
    def train_step(params, opt_state, step):
        x, y = get_batch(train, jax.random.fold_in(batch_key, step))
        # model.train(): dropout on, a fresh dropout key for every step.
        rngs = {"dropout": jax.random.fold_in(dropout_key, step)}

        def loss_fn(p):
            return loss_of(model.apply({"params": p}, x, train=True, rngs=rngs), y)

        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    @jax.jit
    def evaluate(params):
        # model.eval(): no dropout.
        return loss_of(model.apply({"params": params}, x_val, train=False), y_val)

    running = 0.0
    val_loss = 0.0
    for step in range(1, STEPS + 1):
        params, opt_state, loss = train_step(params, opt_state, step)
        running += float(loss)
        if step % EVAL_EVERY == 0:
            val_loss = float(evaluate(params))
            print(
                f"step {step}/{STEPS} train_loss={running / EVAL_EVERY:.4f} "
                f"val_loss={val_loss:.4f} val_bpc={val_loss / math.log(2):.4f}",
                flush=True,
            )
            running = 0.0
    print(f"final val_loss={val_loss:.4f}", flush=True)


if __name__ == "__main__":
    main()
