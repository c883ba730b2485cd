"""Numeric parity probe (`xstack parity`), the JAX side: the port's own pieces on Cora, recorded
under the source's names (parity/probe.py says what each is), from the source's initial
parameters (`xstack_parity.load_inputs()`); the optimizer steps in float64, as the source's."""
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
import optax
import xstack_parity as xp

jax.config.update("jax_enable_x64", True)  # the port makes its arrays float32 and int32 explicitly
sys.path.insert(0, ".")
sys.argv = ["training_script_cora.py", "--should_test"]
import training_script_cora as ts  # noqa: E402
from models.definitions.GAT import GAT  # noqa: E402
from utils.constants import LoopPhase  # noqa: E402
from utils.data_loading import load_graph_data  # noqa: E402

config = ts.get_training_args()
features, labels, edge_index, idx_train, idx_val, idx_test = load_graph_data(config)
xp.record("data.features.row_sum", features.sum(1), at=load_graph_data)
xp.record("data.edge_index", np.asarray(edge_index).astype(np.int64), at=load_graph_data)
xp.record("data.labels", np.asarray(labels).astype(np.int64))
xp.record("data.idx_train", np.asarray(idx_train).astype(np.int64))
xp.record("data.idx_val", np.asarray(idx_val).astype(np.int64))
xp.record("data.idx_test", np.asarray(idx_test).astype(np.int64))

gat = GAT(
    num_of_layers=config['num_of_layers'],
    num_heads_per_layer=config['num_heads_per_layer'],
    num_features_per_layer=config['num_features_per_layer'],
    add_skip_connection=config['add_skip_connection'],
    bias=config['bias'],
    dropout=config['dropout'],
    layer_type=config['layer_type'],
    log_attention_weights=False,
    key=jax.random.PRNGKey(0),
)
src = xp.load_inputs()
init = [{name: jnp.asarray(src[f"param.gat_net.{i}.{name}"]) for name in p} for i, p in enumerate(gat.params)]
gat.params = init
for name, value in gat.state_dict().items():
    xp.record(f"param.{name}", value)


def train_loss(params, x):
    scores = gat.apply(params, x, edge_index, False, jax.random.PRNGKey(0))
    return ts.cross_entropy_loss(scores[idx_train], labels[idx_train]), scores


(loss, scores), grads = jax.value_and_grad(train_loss, has_aux=True)(init, features)
xp.record("eval.scores", scores, at=GAT.apply)
xp.record("eval.train_loss", loss)
for i, g in enumerate(grads):
    for name in ("scoring_fn_target", "scoring_fn_source", "bias", "linear_proj.weight"):
        xp.record(f"grad.gat_net.{i}.{name}", g[name])

optimizer = ts.make_optimizer(config)
main_loop = ts.get_main_loop(config, gat, optimizer, features, labels, edge_index, idx_train, idx_val, idx_test,
                             config['patience_period'], time.time(), jax.random.PRNGKey(0))
ts.BEST_VAL_PERF, ts.BEST_VAL_LOSS = 0, 0
main_loop(phase=LoopPhase.VAL, epoch=1)
xp.record("loop.val_acc", np.float64(ts.BEST_VAL_PERF), at=ts.get_main_loop)
xp.record("loop.test_acc", np.float64(main_loop(phase=LoopPhase.TEST)), at=ts.get_main_loop)

params = jax.tree_util.tree_map(lambda a: a.astype(jnp.float64), init)
features64 = features.astype(jnp.float64)
opt_state = optimizer.init(params)
for step in (1, 2):
    grads = jax.grad(lambda p: train_loss(p, features64)[0])(params)
    updates, opt_state = optimizer.update(grads, opt_state, params)
    params = optax.apply_updates(params, updates)
    for i, p in enumerate(params):
        for name in ("scoring_fn_target", "scoring_fn_source", "bias", "linear_proj.weight"):
            xp.record(f"step{step}.gat_net.{i}.{name}", p[name], at=ts.make_optimizer)
