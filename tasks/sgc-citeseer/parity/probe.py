"""Numeric parity probe (`xstack parity`): citation.py itself, run on Citeseer with the tuned
weight decay and --epochs 0 (data loading, normalisation, the SGC pre-computation, the model's
init; no training), then one forward and backward pass of its model on the 120 training nodes
and its train_regression for 1 and for 2 epochs, each from the same initial weights.

Records, in this order:
- the normalised adjacency S = (D + I)^-1/2 (A + I) (D + I)^-1/2 in a canonical form:
  `adj.indices` (2 x nnz, row-major order, integers compared exactly) and `adj.values`;
- the pre-computed features S^2 X: `features.row_sum` (every node) and `features.train`
  (the 120 training rows), then `labels` and the three index sets (integers);
- the hyper-parameters train_regression gets (`hparam.weight_decay`, `hparam.lr`);
- the initial parameters (`param.W.weight` (6, 3703) as nn.Linear keeps it, `param.W.bias`):
  a port loads them (`xstack_parity.load_inputs()`) instead of drawing its own, and runs
  what follows on the source's `features.train`;
- the logits and the mean cross-entropy on the training nodes, and its gradients
  (`grad.W.weight`, `grad.W.bias`; the loss alone, no weight decay);
- the parameters after train_regression's optimizer ran 1 epoch (`step1.W.*`) and 2 epochs
  (`step2.W.*`), each run from the initial parameters, in float64 (model, features and
  labels as citation.py made them, the model and the features cast to float64): Adam's first
  step is lr * g / (|g| + eps), nearly lr * sign(g), and in float32 the rounding of the
  near-zero gradients moved a few weights by up to 7e-5 between two faithful
  implementations (measured on Cora).
"""
import copy
import runpy
import sys

import numpy as np
import torch
import torch.nn.functional as F
import xstack_parity as xp

torch.set_num_threads(1)
sys.path.insert(0, ".")
sys.argv = ["citation.py", "--dataset", "citeseer", "--tuned", "--epochs", "0"]
cit = runpy.run_path("citation.py", run_name="__main__")
utils = sys.modules["utils"]

adj = cit["adj"].coalesce()  # coalesce() sorts the indices row-major
xp.record("adj.indices", adj.indices().numpy().astype(np.int64), at=utils.load_citation)
xp.record("adj.values", adj.values(), at=utils.load_citation)

features, labels = cit["features"], cit["labels"]
idx_train, idx_val, idx_test = cit["idx_train"], cit["idx_val"], cit["idx_test"]
xp.record("features.row_sum", features.sum(1), at=utils.sgc_precompute)
xp.record("features.train", features[idx_train], at=utils.sgc_precompute)
xp.record("labels", labels.numpy().astype(np.int64))
xp.record("idx_train", idx_train.numpy().astype(np.int64))
xp.record("idx_val", idx_val.numpy().astype(np.int64))
xp.record("idx_test", idx_test.numpy().astype(np.int64))

args = cit["args"]
xp.record("hparam.weight_decay", np.float64(args.weight_decay))
xp.record("hparam.lr", np.float64(args.lr))

model = cit["model"]
init = copy.deepcopy(model.state_dict())
for name, p in model.named_parameters():
    xp.record(f"param.{name}", p)

x, y = features[idx_train], labels[idx_train]
model.train()
model.zero_grad()
logits = model(x)
loss = F.cross_entropy(logits, y)
xp.record("logits", logits)
xp.record("loss", loss)
loss.backward()
for name, p in model.named_parameters():
    xp.record(f"grad.{name}", p.grad)

train_regression = cit["train_regression"]
model.double()
x64, xval64 = x.double(), features[idx_val].double()
for epochs in (1, 2):
    model.load_state_dict(init)  # copies the float32 initial values into the float64 model
    model, _, _ = train_regression(model, x64, y, xval64, labels[idx_val],
                                   epochs, args.weight_decay, args.lr, args.dropout)
    for name, p in model.named_parameters():
        xp.record(f"step{epochs}.{name}", p, at=train_regression)
