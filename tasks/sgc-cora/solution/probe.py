"""Numeric parity probe (`xstack parity`), the JAX side: citation.py run on Cora with the tuned
weight decay and --epochs 0, the same names recorded in the source's layouts; the source's
initial parameters and training rows (`features.train`) are loaded
(`xstack_parity.load_inputs()`) for the forward and backward pass and for train_regression's 1 and 2 epochs (those in float64, as in the source's probe)."""
import runpy
import sys

import jax
import jax.numpy as jnp
import numpy as np
import xstack_parity as xp

# The optimizer steps at the end run in float64, as the source's probe runs them (jax_enable_x64
# changes nothing before: citation.py makes its arrays float32 and int32 explicitly).
jax.config.update("jax_enable_x64", True)
sys.path.insert(0, ".")
sys.argv = ["citation.py", "--dataset", "cora", "--tuned", "--epochs", "0"]
cit = runpy.run_path("citation.py", run_name="__main__")
utils = sys.modules["utils"]

adj = cit["adj"]
indices = np.asarray(adj.indices).T.astype(np.int64)  # BCOO keeps (nnz, 2)
values = np.asarray(adj.data)
order = np.lexsort((indices[1], indices[0]))  # row-major, as torch's coalesce()
xp.record("adj.indices", indices[:, order], at=utils.load_citation)
xp.record("adj.values", values[order], at=utils.load_citation)

features, labels = cit["features"], cit["labels"]
idx_train, idx_val, idx_test = cit["idx_train"], cit["idx_val"], cit["idx_test"]
xp.record("features.row_sum", features.sum(1), at=utils.sgc_precompute)
xp.record("features.train", features[idx_train], at=utils.sgc_precompute)
xp.record("labels", np.asarray(labels).astype(np.int64))
xp.record("idx_train", np.asarray(idx_train).astype(np.int64))
xp.record("idx_val", np.asarray(idx_val).astype(np.int64))
xp.record("idx_test", np.asarray(idx_test).astype(np.int64))

args = cit["args"]
xp.record("hparam.weight_decay", np.float64(args.weight_decay))
xp.record("hparam.lr", np.float64(args.lr))

src = xp.load_inputs()
model = cit["model"]
init = {"W": {"weight": jnp.asarray(src["param.W.weight"]),
              "bias": jnp.asarray(src["param.W.bias"])}}
xp.record("param.W.weight", init["W"]["weight"])
xp.record("param.W.bias", init["W"]["bias"])

# The source's training rows and labels: the steps below then start from identical inputs.
x, y = jnp.asarray(src["features.train"]), labels[idx_train]
cross_entropy = cit["cross_entropy"]
model.train()
loss, grads = jax.value_and_grad(lambda p: cross_entropy(model(p, x), y))(init)
xp.record("logits", model(init, x))
xp.record("loss", loss)
xp.record("grad.W.weight", grads["W"]["weight"])
xp.record("grad.W.bias", grads["W"]["bias"])

train_regression = cit["train_regression"]
init64 = jax.tree_util.tree_map(lambda a: a.astype(jnp.float64), init)
x64, xval64 = x.astype(jnp.float64), features[idx_val].astype(jnp.float64)
for epochs in (1, 2):
    params, _, _ = train_regression(model, init64, x64, y, xval64, labels[idx_val],
                                    epochs, args.weight_decay, args.lr, args.dropout)
    xp.record(f"step{epochs}.W.weight", params["W"]["weight"], at=train_regression)
    xp.record(f"step{epochs}.W.bias", params["W"]["bias"], at=train_regression)
