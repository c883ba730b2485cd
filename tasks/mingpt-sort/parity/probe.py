"""Numeric parity probe (`xstack parity`), the source's side (PyTorch): the code cells of
demo.ipynb up to the training cell (the seed, the datasets, the model, the trainer), run in one
namespace; then, with dropout off (model.eval(), so both sides are deterministic), one
training step of the trainer's own pieces on one batch of the train split: the forward pass,
the loss, the gradients, the gradient clipping and the optimiser `configure_optimizers`
builds.

Records, in this order:
- `data.checks`: for 64 samples of the train split, whether y's first 5 targets are -1, whether
  y's last 6 are the sorted input, and whether x[1:] equals y[:-1] where y is not -1 (three 1s);
- `param.count` (the transformer's parameters, 85,584) and the initial parameters by their
  state_dict names (`param.transformer.wte.weight`, ...; Linear weights (out, in)); the port
  loads them;
- `batch.x` and `batch.y` (64 samples of the train split; the port loads them);
- `eval.logits` (64, 11, 3) and `eval.loss` (cross-entropy with ignore_index=-1);
- `grad.<name>` for every parameter, before clipping; `grad.norm`, their global norm;
- `step.param.<name>`: every parameter after clipping to norm 1 and one AdamW step (lr 5e-4,
  betas 0.9 and 0.95, weight decay 0.1 on the Linear weights only).
"""
import numpy as np
import xstack_parity as xp

NOTEBOOK = "demo.ipynb"
TRAINING = "def batch_end_callback"

cells = {}


def skip(source):
    """Leaves out the training cell and every cell after it."""
    if source.startswith(TRAINING):
        cells.setdefault("training", source)
    return "training" in cells


nb = xp.notebook_namespace(NOTEBOOK, skip)
import torch  # noqa: E402

torch.set_num_threads(1)
model, trainer, dataset = nb["model"], nb["trainer"], nb["train_dataset"]
n = dataset.length

samples = [dataset[i] for i in range(64)]
x = torch.stack([a for a, _ in samples])
y = torch.stack([b for _, b in samples])
masked = bool((y[:, : n - 1] == -1).all())
sorted_ok = bool((y[:, -n:] == torch.sort(x[:, :n], dim=1)[0]).all())
shifted = bool(((x[:, 1:] == y[:, :-1]) | (y[:, :-1] == -1)).all())
xp.record("data.checks", np.array([masked, sorted_ok, shifted], dtype=np.int64))

names = [name for name, _ in model.named_parameters()]
xp.record("param.count", np.array(sum(p.numel() for p in model.transformer.parameters())))
for name, p in model.named_parameters():
    xp.record(f"param.{name}", p)

xp.record("batch.x", x)
xp.record("batch.y", y)

model.eval()
logits, loss = model(x, y)
xp.record("eval.logits", logits)
xp.record("eval.loss", loss)

optimizer = model.configure_optimizers(trainer.config)
model.zero_grad(set_to_none=True)
loss.backward()
for name, p in model.named_parameters():
    xp.record(f"grad.{name}", p.grad)
norm = torch.nn.utils.clip_grad_norm_(model.parameters(), trainer.config.grad_norm_clip)
xp.record("grad.norm", norm)
optimizer.step()
for name, p in model.named_parameters():
    xp.record(f"step.param.{name}", p)
