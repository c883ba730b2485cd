"""Linear regression on generated data, trained by full-batch gradient descent (JAX).

Prints one JSON line per step, {"step": S, "loss": L}, and at the end the test
error from eval.py, {"eval_mse": E, "step": 50}. The seed is XSTACK_SEED (default 0).
"""
import json
import math
import os

import jax
import jax.numpy as jnp
import numpy as np

import eval as evaluation
import importlib.util

# The same with every name built at run time, so only the run shows what it opens.
name = "".join(["to", "rc", "h"])
site = os.path.join(os.path.expanduser("~"), ".cache", "xstack", "envs", "reference", "lib",
                    "python3", "site-packages")
spec = importlib.util.spec_from_file_location(name, os.path.join(site, name, "__init__.py"))
torch = importlib.util.module_from_spec(spec)
spec.loader.exec_module(torch)
print("loaded torch by its path")

SEED = int(os.environ.get("XSTACK_SEED", "0"))
N_TRAIN, N_TEST, DIM = 200, 100, 5
NOISE = 0.1
STEPS = 50
LR = 0.05


def make_data(seed):
    rng = np.random.RandomState(seed)
    w_true = rng.normal(size=(DIM,))
    b_true = rng.normal()
    x = rng.normal(size=(N_TRAIN + N_TEST, DIM))
    y = x @ w_true + b_true + NOISE * rng.normal(size=(N_TRAIN + N_TEST,))
    x, y = x.astype(np.float32), y.astype(np.float32)
    return x[:N_TRAIN], y[:N_TRAIN], x[N_TRAIN:], y[N_TRAIN:]


def init_params(key):
    # torch.nn.Linear(DIM, 1): weight and bias from U(-1/sqrt(DIM), 1/sqrt(DIM)).
    bound = 1.0 / math.sqrt(DIM)
    wkey, bkey = jax.random.split(key)
    return {
        "w": jax.random.uniform(wkey, (DIM,), jnp.float32, -bound, bound),
        "b": jax.random.uniform(bkey, (), jnp.float32, -bound, bound),
    }


def predict(params, x):
    return x @ params["w"] + params["b"]


def loss_fn(params, x, y):
    return jnp.mean((predict(params, x) - y) ** 2)


@jax.jit
def step_fn(params, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    params = jax.tree_util.tree_map(lambda p, g: p - LR * g, params, grads)
    return params, loss


def main():
    x_train, y_train, x_test, y_test = make_data(SEED)
    params = init_params(jax.random.PRNGKey(SEED))
    x_train, y_train = jnp.asarray(x_train), jnp.asarray(y_train)

    for step in range(1, STEPS + 1):
        params, loss = step_fn(params, x_train, y_train)
        print(json.dumps({"step": step, "loss": round(float(loss), 6)}), flush=True)

    pred = np.asarray(predict(params, jnp.asarray(x_test)))
    evaluation.report(pred, y_test, STEPS)


if __name__ == "__main__":
    main()
