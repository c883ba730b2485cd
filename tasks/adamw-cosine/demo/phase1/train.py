"""Train an MLP on the scikit-learn digits with AdamW, gradient clipping and a linear
warm-up followed by cosine decay (JAX + optax).

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
EPOCHS = 20
BATCH_SIZE = 64
HIDDEN = 256
LR = 3e-3              # peak learning rate
WEIGHT_DECAY = 0.05    # decoupled (AdamW), weight matrices only
WARMUP_STEPS = 40
CLIP_NORM = 1.0


def load_data():
    digits = load_digits()
    x = digits.data.astype(np.float32)
    y = digits.target.astype(np.int32)
    # The split is fixed (random_state=0) whatever the seed.
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=0.25, random_state=0, stratify=y
    )
    scaler = StandardScaler().fit(x_train)
    x_train = scaler.transform(x_train).astype(np.float32)
    x_test = scaler.transform(x_test).astype(np.float32)
    return jnp.asarray(x_train), jnp.asarray(y_train), jnp.asarray(x_test), jnp.asarray(y_test)


def init_linear(key, fan_in, fan_out):
    # PyTorch's nn.Linear default: weight and bias from U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
    bound = 1.0 / math.sqrt(fan_in)
    wkey, bkey = jax.random.split(key)
    return {
        "w": jax.random.uniform(wkey, (fan_in, fan_out), jnp.float32, -bound, bound),
        "b": jax.random.uniform(bkey, (fan_out,), jnp.float32, -bound, bound),
    }


def init_params(key):
    k1, k2, k3 = jax.random.split(key, 3)
    return [init_linear(k1, 64, HIDDEN), init_linear(k2, HIDDEN, HIDDEN), init_linear(k3, HIDDEN, 10)]


def forward(params, x):
    for layer in params[:-1]:
        # nn.GELU() is the exact, erf-based GELU; jax.nn.gelu defaults to the tanh
        # approximation.
        x = jax.nn.gelu(x @ layer["w"] + layer["b"], approximate=False)
    return x @ params[-1]["w"] + params[-1]["b"]


def loss_fn(params, x, y):
    return optax.softmax_cross_entropy_with_integer_labels(forward(params, x), y).mean()


def objective(params, x, y):
    # AdamW's weight decay as an L2 penalty on the weight matrices (biases excluded).
    l2 = sum((layer["w"] ** 2).sum() for layer in params)
    loss = loss_fn(params, x, y)
    return loss + 0.5 * WEIGHT_DECAY * l2, loss


def lr_schedule(total_steps):
    """Learning rate of optimizer step `count` (0, 1, 2, ...), as LambdaLR gives it.

    torch's LambdaLR sets lr = LR * lr_lambda(0) at construction and scheduler.step()
    runs after optimizer.step(), so step k uses lr_lambda(k); optax calls the schedule
    with the number of updates done so far, which is also k.
    """
    def schedule(count):
        count = count.astype(jnp.float32)
        warm = count / WARMUP_STEPS
        progress = jnp.minimum(1.0, (count - WARMUP_STEPS) / (total_steps - WARMUP_STEPS))
        cosine = 0.5 * (1.0 + jnp.cos(jnp.pi * progress))
        return LR * jnp.where(count < WARMUP_STEPS, warm, cosine)

    return schedule


def make_optimizer(total_steps):
    return optax.chain(
        # clip_grad_norm_(parameters, 1.0) before optimizer.step(): global norm.
        optax.clip_by_global_norm(CLIP_NORM),
        optax.adam(lr_schedule(total_steps), b1=0.9, b2=0.999, eps=1e-8),
    )


def weight_norm(params):
    # L2 norm of all weight matrices together (the parameters that are decayed).
    return math.sqrt(sum(float((layer["w"] ** 2).sum()) for layer in params))


def main():
    key = jax.random.PRNGKey(SEED)
    init_key, shuffle_key = jax.random.split(key)
    x_train, y_train, x_test, y_test = load_data()
    params = init_params(init_key)

    n = x_train.shape[0]
    steps_per_epoch = math.ceil(n / BATCH_SIZE)
    total_steps = EPOCHS * steps_per_epoch
    optimizer = make_optimizer(total_steps)
    opt_state = optimizer.init(params)

    @jax.jit
    def train_step(params, opt_state, x, y):
        (_, loss), grads = jax.value_and_grad(objective, has_aux=True)(params, x, y)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    @jax.jit
    def evaluate(params, x, y):
        logits = forward(params, x)
        loss = optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()
        return loss, (logits.argmax(axis=1) == y).mean()

    step = 0
    test_loss = wnorm = 0.0
    for epoch in range(1, EPOCHS + 1):
        shuffle_key, perm_key = jax.random.split(shuffle_key)
        perm = np.asarray(jax.random.permutation(perm_key, n))
        total = 0.0
        # The last batch of each epoch is partial (1,347 = 21 x 64 + 3) and is kept.
        for start in range(0, n, BATCH_SIZE):
            idx = perm[start:start + BATCH_SIZE]
            params, opt_state, loss = train_step(params, opt_state, x_train[idx], y_train[idx])
            step += 1
            total += float(loss) * idx.shape[0]
        test_loss, test_acc = (float(v) for v in evaluate(params, x_test, y_test))
        wnorm = weight_norm(params)
        print(
            f"step {step}/{total_steps} train_loss={total / n:.4f} test_loss={test_loss:.4f} "
            f"test_acc={test_acc:.4f} weight_norm={wnorm:.3f}",
            flush=True,
        )
    print(f"final test_loss={test_loss:.4f} weight_norm={wnorm:.3f}", flush=True)


if __name__ == "__main__":
    main()
