"""Train a small MLP on the scikit-learn digits data set (JAX + optax).

Usage: python train.py
The seed comes from the environment variable XSTACK_SEED (default 0).
"""
import math
import os

import jax
import jax.numpy as jnp
import numpy as np
import optax
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

SEED = int(os.environ.get("XSTACK_SEED", "0"))
EPOCHS = 30
BATCH_SIZE = 32
LR = 1e-3
HIDDEN = 128


def load_data():
    digits = load_digits()
    x = digits.data.astype(np.float32)
    y = digits.target.astype(np.int32)
    # The split is fixed (random_state=0) whatever the seed: the seed only
    # changes the initial weights and the order of the mini-batches.
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=0.25, random_state=0, stratify=y
    )
    scaler = StandardScaler().fit(x_train)
    x_train = scaler.transform(x_train).astype(np.float32)
    x_test = scaler.transform(x_test).astype(np.float32)
    return jnp.asarray(x_train), jnp.asarray(y_train), jnp.asarray(x_test), jnp.asarray(y_test)


def init_linear(key, fan_in, fan_out):
    # PyTorch's nn.Linear default: kaiming_uniform(a=sqrt(5)) for the weight,
    # which is U(-1/sqrt(fan_in), 1/sqrt(fan_in)), and the same bound for the bias.
    bound = 1.0 / math.sqrt(fan_in)
    wkey, bkey = jax.random.split(key)
    w = jax.random.uniform(wkey, (fan_in, fan_out), jnp.float32, -bound, bound)
    b = jax.random.uniform(bkey, (fan_out,), jnp.float32, -bound, bound)
    return {"w": w, "b": b}


def init_params(key, d_in=64, hidden=HIDDEN, n_classes=10):
    k1, k2 = jax.random.split(key)
    return {"fc1": init_linear(k1, d_in, hidden), "fc2": init_linear(k2, hidden, n_classes)}


def forward(params, x):
    h = jax.nn.relu(x @ params["fc1"]["w"] + params["fc1"]["b"])
    return h @ params["fc2"]["w"] + params["fc2"]["b"]


def loss_fn(params, x, y):
    logits = forward(params, x)
    return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()


optimizer = optax.sgd(LR)


@jax.jit
def train_step(params, opt_state, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    updates, opt_state = optimizer.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


@jax.jit
def accuracy(params, x, y):
    return (forward(params, x).argmax(axis=1) == y).mean()


def main():
    key = jax.random.PRNGKey(SEED)
    init_key, shuffle_key = jax.random.split(key)
    x_train, y_train, x_test, y_test = load_data()
    params = init_params(init_key)
    opt_state = optimizer.init(params)

    n = x_train.shape[0]
    test_acc = 0.0
    for epoch in range(1, EPOCHS + 1):
        shuffle_key, perm_key = jax.random.split(shuffle_key)
        perm = np.asarray(jax.random.permutation(perm_key, n))
        total = 0.0
        for start in range(0, n, BATCH_SIZE):
            idx = perm[start:start + BATCH_SIZE]
            params, opt_state, loss = train_step(params, opt_state, x_train[idx], y_train[idx])
            total += float(loss) * idx.shape[0]
        test_acc = float(accuracy(params, x_test, y_test))
        print(f"epoch {epoch}/{EPOCHS} train_loss={total / n:.4f} test_acc={test_acc:.4f}", flush=True)
    print(f"final test_acc={test_acc:.4f}", flush=True)


if __name__ == "__main__":
    main()
