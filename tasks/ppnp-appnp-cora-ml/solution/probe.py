"""Numeric parity probe (`xstack parity`), the JAX side: the code cells of
simple_example_pytorch.ipynb but the training cell, run in one namespace, then the same names
as the source's side (parity/probe.py) from the port's own functions: the split, the
normalised attributes, the propagation matrix, the hyper-parameters, the source's initial
parameters loaded (`xstack_parity.load_inputs()`), the loss, gradients and log-probabilities
with dropout off, and the dropout shares with dropout on."""
import sys

import numpy as np
import xstack_parity as xp

sys.path.insert(0, ".")
nb = xp.notebook_namespace(
    "simple_example_pytorch.ipynb", lambda source: source.startswith("model, result = train_model("))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from ppnp.preprocessing import gen_splits, normalize_attributes  # noqa: E402
from ppnp.jax import PPNP, training  # noqa: E402
from ppnp.jax.utils import matrix_to_jax  # noqa: E402

graph = nb["graph"]
labels = graph.labels
split = dict(zip(("train", "stopping", "valtest"),
                 gen_splits(labels, nb["idx_split_args"], test=nb["test"])))
for name, idx in split.items():
    xp.record(f"split.{name}", np.asarray(idx, dtype=np.int64), at=gen_splits)


def record_sparse(name, coo, at):
    order = np.lexsort((coo.col, coo.row))
    xp.record(f"{name}.indices", np.stack([coo.row[order], coo.col[order]]).astype(np.int64), at=at)
    xp.record(f"{name}.values", coo.data[order].astype(np.float32), at=at)


attr = normalize_attributes(graph.attr_matrix)
record_sparse("attr", sp.coo_matrix(attr), normalize_attributes)
prop = nb["prop_appnp"]
A = prop.A_hat
A_coo = sp.coo_matrix((np.asarray(A.values), (np.asarray(A.rows), np.asarray(A.cols))),
                      shape=(A.nrows, A.nrows))
A_coo.sum_duplicates()
record_sparse("A_hat", A_coo, type(prop).__init__)

stopping = nb["stopping_args"]
model_args = nb["model_args"]
for name, value in (("alpha", prop.alpha), ("niter", prop.niter),
                    ("drop_prob", model_args["drop_prob"]), ("reg_lambda", nb["reg_lambda"]),
                    ("learning_rate", nb["learning_rate"]), ("patience", stopping["patience"]),
                    ("max_epochs", stopping["max_epochs"])):
    xp.record(f"hparam.{name}", np.float64(value), at=training.train_model)

src = xp.load_inputs()
model = PPNP(attr.shape[1], int(max(labels)) + 1, **model_args)
params = {"fcs": [jnp.asarray(src["param.fcs.0.weight"]), jnp.asarray(src["param.fcs.1.weight"])]}
for i, w in enumerate(params["fcs"]):
    xp.record(f"param.fcs.{i}.weight", w)

attr_j = matrix_to_jax(attr)
idx = {name: jnp.asarray(ind) for name, ind in split.items()}
train_labels = jnp.asarray(labels[split["train"]])


def train_loss(params):
    log_preds = model.apply(params, attr_j, idx["train"], training=False)
    l2_reg = sum(jnp.sum(p ** 2) for p in model.reg_params(params))
    return training.nll_loss(log_preds, train_labels) + nb["reg_lambda"] / 2 * l2_reg, log_preds


(loss, log_preds), grads = jax.value_and_grad(train_loss, has_aux=True)(params)
xp.record("eval.log_preds.train", log_preds, at=PPNP.apply)
xp.record("eval.loss.train", loss, at=PPNP.reg_params)
for i, g in enumerate(grads["fcs"]):
    xp.record(f"eval.grad.fcs.{i}.weight", g, at=PPNP.reg_params)
xp.record("eval.log_preds.stopping", model.apply(params, attr_j, idx["stopping"], training=False),
          at=PPNP.apply)

nnodes = attr.shape[0]
one_attribute = sp.csr_matrix((np.ones(nnodes, dtype=np.float32), (np.arange(nnodes), np.zeros(nnodes))),
                              shape=attr.shape)
probe_params = {"fcs": [jnp.zeros_like(params["fcs"][0]).at[0].set(1.0), jnp.ones_like(params["fcs"][1])]}
local = np.asarray(model._transform_features(probe_params, matrix_to_jax(one_attribute),
                                             jax.random.PRNGKey(0), True))
kept = np.any(local != 0, axis=1)
xp.record("train.dropout.attr_kept", np.round(np.float64(kept.mean()), 1), at=PPNP._transform_features)
hidden_kept = local[kept, 0] / ((1 / (1 - model_args["drop_prob"])) ** 2) / params["fcs"][0].shape[1]
xp.record("train.dropout.hidden_kept", np.round(np.float64(hidden_kept.mean()), 1),
          at=PPNP._transform_features)

# Early stopping and the weights evaluated after it (parity/probe.py says how): train_model on a
# short run, its log read back; 0 when the weights evaluated are the best epoch's.
import logging  # noqa: E402
import re  # noqa: E402

from ppnp.jax.earlystopping import Best, StopVariable  # noqa: E402


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
                                 dict(nb["idx_split_args"]), short, False, 0, 1)
logged = [float(m) for line in collect.lines for m in re.findall(r"early stopping acc = ([0-9.]+)", line)]
xp.record("restore.best_minus_reported",
          np.round(np.float64(max(logged) - result["early_stopping"]["accuracy"] * 100), 1),
          at=training.train_model)
