"""Numeric parity probe (`xstack parity`): training_script_cora.py's own pieces on Cora, from
one set of initial weights, without dropout's randomness.

Records, in this order:
- the data as load_graph_data gives it: `data.features.row_sum` (each row normalised to sum 1,
  or 0 for an empty row), `data.edge_index` (2 x 13,264, self-loops last), `data.labels` and the
  three index ranges (integers compared exactly);
- the initial parameters (`param.gat_net.L.NAME`, the state_dict's keys and layouts, drawn
  after torch.manual_seed(0)): a port loads them (`xstack_parity.load_inputs()`);
- the model in evaluation mode (no dropout) on every node: `eval.scores` (2708 x 7), the mean
  cross-entropy on the 140 training nodes `eval.train_loss`, and its gradients `grad.*`;
- the training loop's own evaluation from those weights: main_loop's VAL phase (the accuracy
  it keeps as BEST_VAL_PERF, `loop.val_acc`) and its TEST phase (`loop.test_acc`);
- two steps of the script's optimizer (Adam, lr 5e-3, weight_decay 5e-4) on the evaluation-mode
  loss, in float64 (Adam's first step is nearly lr * sign(g): in float32 the rounding of
  near-zero gradients moves a weight by up to lr between faithful implementations):
  `step1.*`, `step2.*`.
"""
import copy
import sys
import time

import numpy as np
import torch
import torch.nn as nn
from torch.optim import Adam
import xstack_parity as xp

torch.set_num_threads(1)
sys.path.insert(0, ".")
sys.argv = ["training_script_cora.py", "--should_test"]
import training_script_cora as ts  # noqa: E402
from models.definitions.GAT import GAT  # noqa: E402
from utils.constants import LoopPhase  # noqa: E402
from utils.data_loading import load_graph_data  # noqa: E402

config = ts.get_training_args()
device = torch.device("cpu")
features, labels, edge_index, idx_train, idx_val, idx_test = load_graph_data(config, device)
xp.record("data.features.row_sum", features.sum(1), at=load_graph_data)
xp.record("data.edge_index", edge_index.numpy().astype(np.int64), at=load_graph_data)
xp.record("data.labels", labels.numpy().astype(np.int64))
xp.record("data.idx_train", idx_train.numpy().astype(np.int64))
xp.record("data.idx_val", idx_val.numpy().astype(np.int64))
xp.record("data.idx_test", idx_test.numpy().astype(np.int64))


def new_gat():
    return GAT(
        num_of_layers=config['num_of_layers'],
        num_heads_per_layer=config['num_heads_per_layer'],
        num_features_per_layer=config['num_features_per_layer'],
        add_skip_connection=config['add_skip_connection'],
        bias=config['bias'],
        dropout=config['dropout'],
        layer_type=config['layer_type'],
        log_attention_weights=False,
    )


torch.manual_seed(0)
gat = new_gat()
init = copy.deepcopy(gat.state_dict())
for name, p in init.items():
    xp.record(f"param.{name}", p)

loss_fn = nn.CrossEntropyLoss(reduction='mean')
gat.eval()
scores = gat((features, edge_index))[0]
xp.record("eval.scores", scores, at=GAT.forward)
loss = loss_fn(scores[idx_train], labels[idx_train])
xp.record("eval.train_loss", loss)
loss.backward()
for name, p in gat.named_parameters():
    xp.record(f"grad.{name}", p.grad)

gat.zero_grad()
optimizer = Adam(gat.parameters(), lr=config['lr'], weight_decay=config['weight_decay'])
main_loop = ts.get_main_loop(config, gat, loss_fn, optimizer, features, labels, edge_index, idx_train, idx_val,
                             idx_test, config['patience_period'], time.time())
ts.BEST_VAL_PERF, ts.BEST_VAL_LOSS = 0, 0
with torch.no_grad():
    main_loop(phase=LoopPhase.VAL, epoch=1)
    xp.record("loop.val_acc", np.float64(ts.BEST_VAL_PERF), at=ts.get_main_loop)
    xp.record("loop.test_acc", np.float64(main_loop(phase=LoopPhase.TEST)), at=ts.get_main_loop)

gat = new_gat().double()
gat.load_state_dict(init)
gat.eval()
features64 = features.double()
optimizer = Adam(gat.parameters(), lr=config['lr'], weight_decay=config['weight_decay'])
for step in (1, 2):
    optimizer.zero_grad()
    loss = loss_fn(gat((features64, edge_index))[0][idx_train], labels[idx_train])
    loss.backward()
    optimizer.step()
    for name, p in gat.named_parameters():
        xp.record(f"step{step}.{name}", p, at=ts.train_gat_cora)
