"""Train a small convolutional network with batch normalisation on the scikit-learn digits
(JAX + Flax + optax).

Usage: python train.py
The seed comes from the environment variable XSTACK_SEED (default 0).
"""
import os

import jax
import jax.numpy as jnp
import numpy as np
import optax
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

from model import ConvNet

SEED = int(os.environ.get("XSTACK_SEED", "0"))
EPOCHS = 8
BATCH_SIZE = 32
LR = 0.01
MOMENTUM = 0.9


def load_data():
    digits = load_digits()
    # images: (1797, 8, 8), grey levels 0..16 -> float32 in [0, 1]. Flax convolutions
    # take NHWC, so the channel axis goes last (PyTorch's source uses NCHW).
    x = (digits.images / 16.0).astype(np.float32)[:, :, :, None]
    y = digits.target.astype(np.int32)
    # The split is fixed (random_state=0) whatever the seed.
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=0.25, random_state=0, stratify=y
    )
    return jnp.asarray(x_train), jnp.asarray(y_train), jnp.asarray(x_test), jnp.asarray(y_test)


model = ConvNet()
# torch.optim.SGD(lr, momentum=0.9): v = 0.9 v + g; p -= lr v (no dampening, not Nesterov),
# which is optax.sgd's trace form.
optimizer = optax.sgd(LR, momentum=MOMENTUM)


def loss_fn(params, batch_stats, x, y):
    logits, updates = model.apply(
        {"params": params, "batch_stats": batch_stats}, x, train=True, mutable=["batch_stats"]
    )
    loss = optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()
    return loss, updates["batch_stats"]


@jax.jit
def train_step(params, batch_stats, opt_state, x, y):
    (loss, batch_stats), grads = jax.value_and_grad(loss_fn, has_aux=True)(
        params, batch_stats, x, y
    )
    updates, opt_state = optimizer.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), batch_stats, opt_state, loss


@jax.jit
def evaluate(params, batch_stats, x, y):
    # eval mode: BatchNorm normalises with its running statistics.
    logits = model.apply({"params": params, "batch_stats": batch_stats}, x, train=False)
    loss = optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()
    acc = (logits.argmax(axis=1) == y).mean()
    return loss, acc


def main():
    key = jax.random.PRNGKey(SEED)
    init_key, shuffle_key = jax.random.split(key)
    x_train, y_train, x_test, y_test = load_data()
    variables = jax.jit(lambda k, x: model.init(k, x, train=True))(init_key, x_train[:2])
    params, batch_stats = variables["params"], variables["batch_stats"]
    opt_state = optimizer.init(params)

    n = x_train.shape[0]
    test_acc = 0.0
    for epoch in range(1, EPOCHS + 1):
        shuffle_key, perm_key = jax.random.split(shuffle_key)
        perm = np.asarray(jax.random.permutation(perm_key, n))
        total = 0.0
        # The last batch of each epoch is partial (1,347 = 42 x 32 + 3) and is kept,
        # as the PyTorch loop keeps it: it also updates the running statistics.
        for start in range(0, n, BATCH_SIZE):
            idx = perm[start:start + BATCH_SIZE]
            params, batch_stats, opt_state, loss = train_step(
                params, batch_stats, opt_state, x_train[idx], y_train[idx]
            )
            total += float(loss) * idx.shape[0]
        test_loss, test_acc = evaluate(params, batch_stats, x_test, y_test)
        test_loss, test_acc = float(test_loss), float(test_acc)
        print(
            f"epoch {epoch}/{EPOCHS} train_loss={total / n:.4f} "
            f"test_loss={test_loss:.4f} test_acc={test_acc:.4f}",
            flush=True,
        )
    print(f"final test_acc={test_acc:.4f}", flush=True)


if __name__ == "__main__":
    main()
