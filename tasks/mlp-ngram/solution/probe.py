"""Numeric parity probe (`xstack parity`), the JAX side: mlp_pytorch.py itself run with
num_steps cut to K (1, then 3), recording the source probe's names in the source's layouts
(the port keeps MLPRaw's parameters as a dict with the same names and shapes). The learning
rate the optimizer applied at the last step is the one optax's inject_hyperparams state
holds after it."""
import contextlib
import io

import jax
import numpy as np
import xstack_parity as xp

from common import RNG

NAMES = ["wte", "fc1_weights", "fc1_bias", "fc2_weights", "fc2_bias"]
SOURCE = open("mlp_pytorch.py").read()
assert SOURCE.count("num_steps = 50000") == 1


def run_script(num_steps):
    """mlp_pytorch.py's globals after running it with num_steps steps (its output muted)."""
    code = compile(SOURCE.replace("num_steps = 50000", f"num_steps = {num_steps}"),
                   "mlp_pytorch.py", "exec")
    g = {"__name__": "__main__"}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(code, g)
    return g


for K in (1, 3):
    g = run_script(K)
    if K == 1:
        it = g["dataloader"](g["train_tokens"], g["context_length"], g["batch_size"])
        batches = [next(it) for _ in range(2)]
        for i, (x, y) in enumerate(batches):
            xp.record(f"batch.{i}.inputs", x.astype(np.int64), at=g["dataloader"])
            xp.record(f"batch.{i}.targets", y.astype(np.int64), at=g["dataloader"])
        model = g["MLPRaw"](g["vocab_size"], g["context_length"], g["embedding_size"],
                            g["hidden_size"], RNG(1337))
        params = model.parameters()
        for name in NAMES:
            xp.record(f"init.{name}", params[name], at=g["MLPRaw"].__init__)
        loss, grads = jax.jit(jax.value_and_grad(g["loss_fn"]))(params, *batches[0])
        xp.record("init.loss", loss)
        for name in NAMES:
            xp.record(f"init.grad.{name}", grads[name])
    lr = g["opt_state"].hyperparams["learning_rate"]
    xp.record(f"steps{K}.optimizer.lr", np.asarray(lr, np.float64), at=g["train_step"])
    params = g["model"].parameters()
    for name in NAMES:
        xp.record(f"steps{K}.param.{name}", params[name])
    xp.record(f"steps{K}.val_loss", np.float64(g["val_loss"]))
    xp.record(f"steps{K}.test_loss", np.float64(g["test_loss"]))
