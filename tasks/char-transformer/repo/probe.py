"""Numeric parity probe (`xstack parity`): one eval-mode forward pass of CharTransformer on
one batch of the training text.

Records, in this order: the batch, the parameters (the output head is the token embedding),
the first block's attention output (`block0.attn`, the output projection included), the
first block's output, the logits and the loss. A port loads the batch and the parameters
(`xstack_parity.load_inputs()`) and records the same names in these layouts ((out, in)
weights; `attn.qkv` stacks the query, key and value projections, head h's features at
h * head_size .. (h + 1) * head_size).
"""
import torch
import xstack_parity as xp

from model import CharTransformer
from train import BLOCK_SIZE, load_text, loss_of

torch.set_num_threads(1)
torch.manual_seed(0)
train, _, vocab_size = load_text()
# Four windows of the training text, as get_batch draws them.
ix = torch.randint(len(train) - BLOCK_SIZE, (4,))
x = torch.stack([train[i:i + BLOCK_SIZE] for i in ix])
y = torch.stack([train[i + 1:i + 1 + BLOCK_SIZE] for i in ix])
xp.record("input.x", x)
xp.record("input.y", y)

model = CharTransformer(vocab_size, block_size=BLOCK_SIZE)
model.eval()  # no dropout: both sides compute the same function
for name, p in model.named_parameters():
    xp.record(f"param.{name}", p)

seen = {}
model.blocks[0].attn.register_forward_hook(lambda m, i, out: seen.__setitem__("attn", out))
model.blocks[0].register_forward_hook(lambda m, i, out: seen.__setitem__("block", out))
with torch.no_grad():
    logits = model(x)
xp.record("block0.attn", seen["attn"])
xp.record("block0.out", seen["block"])
xp.record("logits", logits)
xp.record("loss", loss_of(logits, y))
