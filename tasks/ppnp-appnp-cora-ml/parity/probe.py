"""Numeric parity probe (`xstack parity`), the source's side (PyTorch): the code cells of
simple_example_pytorch.ipynb but the training cell (the data, the propagation, the model's
arguments, the split and optimiser settings), run in one namespace; then the pieces
train_model builds, one at a time, from the same inputs.

Records, in this order:
- `split.train`, `split.stopping`, `split.valtest`: gen_splits' node indices (integers);
- `attr.indices` (2 x nnz, row-major) and `attr.values`: the row-normalised attribute matrix;
- `A_hat.indices` and `A_hat.values`: the propagation's (1 - alpha) D^-1/2 (A + I) D^-1/2;
- `hparam.*`: alpha, niter, drop_prob, reg_lambda, learning_rate, the early stopping's
  patience and its maximum number of epochs;
- the initial parameters (`param.fcs.0.weight` [2879, 64] as MixedLinear keeps it,
  `param.fcs.1.weight` [7, 64] as nn.Linear does), drawn with torch.manual_seed(0); the port
  loads them (`xstack_parity.load_inputs()`);
- with dropout off: the log-probabilities on the training nodes (`eval.log_preds.train`),
  the training loss train_model minimises (mean NLL + reg_lambda / 2 * the sum of squares of
  `model.reg_params`: `eval.loss.train`), its gradients (`eval.grad.fcs.*`), and the
  log-probabilities on the early-stopping nodes (`eval.log_preds.stopping`);
- with dropout on (`model.train()`): on a probe input where every node has one attribute
  (value 1, attribute 0) and a first layer that maps it to 64 positive units, the share of
  nodes whose attribute survived the dropout of the attribute matrix
  (`train.dropout.attr_kept`: a node's local logits are all zero exactly when it was dropped)
  and, over the others, the share of hidden units kept (`train.dropout.hidden_kept`); each
  rounded to one decimal (0.5 for p = 0.5; the draw is random, the rounding makes it exact).
"""
import sys

import numpy as np
import scipy.sparse as sp
import xstack_parity as xp

sys.path.insert(0, ".")
nb = xp.notebook_namespace(
    "simple_example_pytorch.ipynb", lambda source: source.startswith("model, result = train_model("))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from ppnp.preprocessing import gen_splits, normalize_attributes  # noqa: E402
from ppnp.pytorch import PPNP, training  # noqa: E402
from ppnp.pytorch.utils import matrix_to_torch  # noqa: E402

torch.set_num_threads(1)
graph = nb["graph"]
labels = graph.labels
split = dict(zip(("train", "stopping", "valtest"),
                 gen_splits(labels, nb["idx_split_args"], test=nb["test"])))
for name, idx in split.items():
    xp.record(f"split.{name}", np.asarray(idx, dtype=np.int64), at=gen_splits)


def record_sparse(name, matrix, at):
    coo = sp.coo_matrix(matrix)
    order = np.lexsort((coo.col, coo.row))
    xp.record(f"{name}.indices", np.stack([coo.row[order], coo.col[order]]).astype(np.int64), at=at)
    xp.record(f"{name}.values", coo.data[order].astype(np.float32), at=at)


attr = normalize_attributes(graph.attr_matrix)
record_sparse("attr", attr, normalize_attributes)
prop = nb["prop_appnp"]
A_hat = prop.A_hat.coalesce()
record_sparse("A_hat", sp.coo_matrix((A_hat.values().numpy(), tuple(A_hat.indices().numpy())),
                                     shape=tuple(A_hat.shape)), type(prop).__init__)

stopping = nb["stopping_args"]
model_args = nb["model_args"]
for name, value in (("alpha", prop.alpha), ("niter", prop.niter),
                    ("drop_prob", model_args["drop_prob"]), ("reg_lambda", nb["reg_lambda"]),
                    ("learning_rate", nb["learning_rate"]), ("patience", stopping["patience"]),
                    ("max_epochs", stopping["max_epochs"])):
    xp.record(f"hparam.{name}", np.float64(value), at=training.train_model)

torch.manual_seed(0)
model = PPNP(attr.shape[1], int(max(labels)) + 1, **model_args)
weights = [model.fcs[0].weight, model.fcs[1].weight]
for i, w in enumerate(weights):
    xp.record(f"param.fcs.{i}.weight", w)

attr_t = matrix_to_torch(attr)
model.eval()
idx = {name: torch.LongTensor(ind) for name, ind in split.items()}
log_preds = model(attr_t, idx["train"])
loss = F.nll_loss(log_preds, torch.LongTensor(labels[split["train"]])) + nb["reg_lambda"] / 2 * sum(
    torch.sum(p ** 2) for p in model.reg_params)
loss.backward()
xp.record("eval.log_preds.train", log_preds, at=type(model).forward)
xp.record("eval.loss.train", loss, at=training.train_model)
for i, w in enumerate(weights):
    xp.record(f"eval.grad.fcs.{i}.weight", w.grad, at=training.train_model)
with torch.no_grad():
    xp.record("eval.log_preds.stopping", model(attr_t, idx["stopping"]), at=type(model).forward)

nnodes = attr.shape[0]
one_attribute = sp.csr_matrix((np.ones(nnodes, dtype=np.float32), (np.arange(nnodes), np.zeros(nnodes))),
                              shape=attr.shape)
model.train()
with torch.no_grad():
    model.fcs[0].weight.zero_()
    model.fcs[0].weight[0] = 1.0
    model.fcs[1].weight.fill_(1.0)
    local = model._transform_features(matrix_to_torch(one_attribute)).numpy()
kept = np.any(local != 0, axis=1)
xp.record("train.dropout.attr_kept", np.round(np.float64(kept.mean()), 1), at=type(model)._transform_features)
# a kept node's local logits are 1/(1-p) (attribute) * 1/(1-p) (hidden) * the number of kept units
hidden_kept = local[kept, 0] / ((1 / (1 - model_args["drop_prob"])) ** 2) / weights[0].shape[1]
xp.record("train.dropout.hidden_kept", np.round(np.float64(hidden_kept.mean()), 1),
          at=type(model)._transform_features)

# Early stopping and the weights evaluated after it: train_model itself on a short run
# (stopping on the accuracy alone, patience 5, at most 200 epochs, seed 0, every epoch logged),
# its log read back. `restore.best_minus_reported`: the best early-stopping accuracy an epoch
# logged less the one train_model reports for the weights it evaluates, rounded to 0.1: 0 when
# those are the best epoch's (each epoch's logged accuracy is computed as the report's is).
import logging  # noqa: E402
import re  # noqa: E402

from ppnp.pytorch.earlystopping import Best, StopVariable  # noqa: E402


class Collect(logging.Handler):
    def __init__(self):
        super().__init__()
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


collect = Collect()
logging.getLogger().addHandler(collect)
short = dict(stop_varnames=[StopVariable.ACCURACY], patience=5, max_epochs=200, remember=Best.RANKED)
_, result = training.train_model("cora_ml", PPNP, graph, model_args, nb["learning_rate"], nb["reg_lambda"],
                                 dict(nb["idx_split_args"]), short, False, "cpu", 0, 1)
logged = [float(m) for line in collect.lines for m in re.findall(r"early stopping acc = ([0-9.]+)", line)]
xp.record("restore.best_minus_reported",
          np.round(np.float64(max(logged) - result["early_stopping"]["accuracy"] * 100), 1),
          at=training.train_model)
