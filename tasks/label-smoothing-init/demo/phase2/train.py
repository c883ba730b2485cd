"""Train an MLP on an imbalanced subset of the scikit-learn digits with a class-weighted,
label-smoothed cross-entropy (JAX + Flax + optax).

Usage: python train.py
The seed comes from the environment variable XSTACK_SEED (default 0).
"""
import math
import os

import jax
import jax.numpy as jnp
import flax.linen as nn
import numpy as np
import optax
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

SEED = int(os.environ.get("XSTACK_SEED", "0"))
EPOCHS = 15
BATCH_SIZE = 32
LR = 0.05
MOMENTUM = 0.9
HIDDEN = 128
LABEL_SMOOTHING = 0.1
# Training images kept per digit: 120, 96, 77, 61, 49, 39, 31, 25, 20, 16.
KEEP = [round(120 * 0.8 ** c) for c in range(10)]


def load_data():
    digits = load_digits()
    x = digits.data.astype(np.float32)
    y = digits.target.astype(np.int32)
    # The split is fixed (random_state=0) whatever the seed.
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=0.25, random_state=0, stratify=y
    )
    # Imbalanced training set: the first KEEP[c] training images of digit c, in their
    # original order. The test set stays balanced (45 images per digit).
    keep = np.sort(np.concatenate([np.flatnonzero(y_train == c)[:KEEP[c]] for c in range(10)]))
    x_train, y_train = x_train[keep], y_train[keep]
    scaler = StandardScaler().fit(x_train)
    x_train = scaler.transform(x_train).astype(np.float32)
    x_test = scaler.transform(x_test).astype(np.float32)
    return x_train, y_train, x_test, y_test


def torch_uniform(fan_in):
    # PyTorch's nn.Linear default: kaiming_uniform(a=sqrt(5)) for the weight, which is
    # U(-1/sqrt(fan_in), 1/sqrt(fan_in)), and the same bound for the bias. Flax's
    # nn.Dense default is different: lecun_normal weights (std 1/sqrt(fan_in), three
    # times the variance) and zero biases.
    bound = 1.0 / math.sqrt(fan_in)

    def init(key, shape, dtype=jnp.float32):
        return jax.random.uniform(key, shape, dtype, -bound, bound)

    return init


class MLP(nn.Module):
    @nn.compact
    def __call__(self, x):
        fan_in = x.shape[-1]
        for features in (HIDDEN, HIDDEN, 10):
            x = nn.Dense(features, kernel_init=torch_uniform(fan_in), bias_init=torch_uniform(fan_in))(x)
            if features != 10:
                x = nn.relu(x)
            fan_in = features
        return x


model = MLP()


def forward(params, x):
    return model.apply({"params": params}, x)


def weighted_smoothed_ce(logits, y, class_weights, smoothing=LABEL_SMOOTHING):
    """nn.CrossEntropyLoss(weight=class_weights, label_smoothing=smoothing), reduction 'mean'.

    PyTorch computes (1 - s) * NLL + s / C * smooth, where
      NLL    = sum_i w[y_i] * -log p_i[y_i]         / sum_i w[y_i]
      smooth = sum_i sum_c w[c] * -log p_i[c]       / sum_i w[y_i]
    The smoothing term weights each class c by its own weight w[c] (not by the target's
    weight), and both terms are normalised by the total weight of the batch's targets,
    not by the batch size.
    """
    n_classes = logits.shape[-1]
    logp = jax.nn.log_softmax(logits, axis=-1)
    w_y = class_weights[y]
    nll = -(w_y * jnp.take_along_axis(logp, y[:, None], axis=-1)[:, 0]).sum() / w_y.sum()
    smooth = -(logp * class_weights[None, :]).sum() / w_y.sum()
    return (1.0 - smoothing) * nll + smoothing / n_classes * smooth


# torch.optim.SGD(lr, momentum=0.9): v = 0.9 v + g; p -= lr v (no dampening, not Nesterov).
optimizer = optax.sgd(LR, momentum=MOMENTUM)


@jax.jit
def train_step(params, opt_state, x, y, class_weights):
    loss, grads = jax.value_and_grad(
        lambda p: weighted_smoothed_ce(forward(p, x), y, class_weights)
    )(params)
    updates, opt_state = optimizer.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


@jax.jit
def evaluate(params, x, y):
    logits = forward(params, x)
    # Plain, unweighted and unsmoothed cross-entropy on the balanced test set.
    nll = optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()
    return nll, (logits.argmax(axis=1) == y).mean()


def main():
    key = jax.random.PRNGKey(SEED)
    init_key, shuffle_key = jax.random.split(key)
    x_train, y_train, x_test, y_test = load_data()
    # "Balanced" class weights: n_samples / (n_classes * count of the class).
    counts = np.bincount(y_train, minlength=10).astype(np.float32)
    class_weights = jnp.asarray(counts.sum() / (10 * counts))
    x_train, y_train = jnp.asarray(x_train), jnp.asarray(y_train)
    x_test, y_test = jnp.asarray(x_test), jnp.asarray(y_test)
    params = jax.jit(model.init)(init_key, x_train[:1])["params"]
    opt_state = optimizer.init(params)

    n = x_train.shape[0]
    test_nll = 0.0
    for epoch in range(1, EPOCHS + 1):
        shuffle_key, perm_key = jax.random.split(shuffle_key)
        perm = np.asarray(jax.random.permutation(perm_key, n))
        total = 0.0
        # The last batch of each epoch is partial (534 = 16 x 32 + 22) and is kept.
        for start in range(0, n, BATCH_SIZE):
            idx = perm[start:start + BATCH_SIZE]
            params, opt_state, loss = train_step(
                params, opt_state, x_train[idx], y_train[idx], class_weights
            )
            total += float(loss) * idx.shape[0]
        test_nll, test_acc = (float(v) for v in evaluate(params, x_test, y_test))
        print(
            f"epoch {epoch}/{EPOCHS} train_loss={total / n:.4f} "
            f"test_nll={test_nll:.4f} test_acc={test_acc:.4f}",
            flush=True,
        )
    print(f"final test_nll={test_nll:.4f}", flush=True)


if __name__ == "__main__":
    main()
