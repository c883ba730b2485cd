"""Numeric parity probe (`xstack parity`): mlp_pytorch.py itself, its code run unchanged but
for one number, num_steps, cut from 50,000 to a few steps so that the whole script (init,
dataloader, the evaluation at the first and the last step, the cosine schedule over
num_steps, AdamW, sampling, the test loss) runs in a second.

Records, in this order:
- `batch.{0,1}.inputs` / `batch.{0,1}.targets`: the first two training batches of the
  script's dataloader (integers, compared exactly: the sliding window, in order);
- `init.{name}`: a fresh MLPRaw drawn from common.RNG(1337), the names and layouts of
  MLPRaw.parameters() (wte (27, 48), fc1_weights (144, 512), fc1_bias (512,), fc2_weights
  (512, 27), fc2_bias (27,));
- `init.loss`, `init.grad.{name}`: one forward and backward pass of that model on batch 0;
- `steps{K}.optimizer.lr`, `steps{K}.param.{name}`, `steps{K}.val_loss`,
  `steps{K}.test_loss`, for the script run with num_steps = K (K = 1, then 3): the learning
  rate the optimizer applied at the last step (K = 1: 7e-4; K = 3: the cosine schedule's
  7e-4 * 0.5 * (1 + cos(pi * 2 / 3)) = 1.75e-4), the weights after the K updates, the last
  val loss the script evaluated (before the last update) and its test loss.
A port loads nothing: the data and common.RNG make the same inputs on both sides.
"""
import contextlib
import io

import torch
import xstack_parity as xp

from common import RNG

torch.set_num_threads(1)
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
            xp.record(f"batch.{i}.inputs", x, at=g["dataloader"])
            xp.record(f"batch.{i}.targets", y, at=g["dataloader"])
        model = g["MLPRaw"](g["vocab_size"], g["context_length"], g["embedding_size"],
                            g["hidden_size"], RNG(1337))
        for name, p in zip(NAMES, model.parameters()):
            xp.record(f"init.{name}", p, at=g["MLPRaw"].__init__)
        _, loss = model(*batches[0])
        loss.backward()
        xp.record("init.loss", loss)
        for name, p in zip(NAMES, model.parameters()):
            xp.record(f"init.grad.{name}", p.grad)
    lr = g["optimizer"].param_groups[0]["lr"]
    xp.record(f"steps{K}.optimizer.lr", torch.tensor(lr, dtype=torch.float64))
    for name, p in zip(NAMES, g["model"].parameters()):
        xp.record(f"steps{K}.param.{name}", p)
    xp.record(f"steps{K}.val_loss", torch.tensor(g["val_loss"], dtype=torch.float64))
    xp.record(f"steps{K}.test_loss", torch.tensor(g["test_loss"], dtype=torch.float64))
