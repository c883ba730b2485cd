"""
This training script is nanoGPT's train.py ported to JAX, for one process (CPU, or the first
accelerator JAX finds). The command line, the config files and configurator.py work as in
the original; so do the evaluation and logging lines.

To run on CPU, example:
$ python train.py config/train_shakespeare_char.py --device=cpu --compile=False
"""

import os
import time
import math
import pickle

import numpy as np
import jax
import jax.numpy as jnp
import optax

from model import GPTConfig, GPT

# -----------------------------------------------------------------------------
# default config values designed to train a gpt2 (124M) on OpenWebText
# I/O
out_dir = 'out'
eval_interval = 2000
log_interval = 1
eval_iters = 200
eval_only = False # if True, script exits right after the first eval
always_save_checkpoint = True # if True, always save a checkpoint after each eval
init_from = 'scratch' # 'scratch' or 'resume' or 'gpt2*'
# wandb logging
wandb_log = False # disabled by default
wandb_project = 'owt'
wandb_run_name = 'gpt2' # 'run' + str(time.time())
# data
dataset = 'openwebtext'
gradient_accumulation_steps = 5 * 8 # used to simulate larger batch sizes
batch_size = 12 # if gradient_accumulation_steps > 1, this is the micro-batch size
block_size = 1024
# model
n_layer = 12
n_head = 12
n_embd = 768
dropout = 0.0 # for pretraining 0 is good, for finetuning try 0.1+
bias = False # do we use bias inside LayerNorm and Linear layers?
# adamw optimizer
learning_rate = 6e-4 # max learning rate
max_iters = 600000 # total number of training iterations
weight_decay = 1e-1
beta1 = 0.9
beta2 = 0.95
grad_clip = 1.0 # clip gradients at this value, or disable if == 0.0
# learning rate decay settings
decay_lr = True # whether to decay the learning rate
warmup_iters = 2000 # how many steps to warm up for
lr_decay_iters = 600000 # should be ~= max_iters per Chinchilla
min_lr = 6e-5 # minimum learning rate, should be ~= learning_rate/10 per Chinchilla
# DDP settings
backend = 'nccl' # kept for the command line; this port runs one process
# system
device = 'cuda' # 'cpu', or 'cuda' / 'cuda:N' for an accelerator JAX finds
dtype = 'float32' # kept for the command line; the port computes in float32
compile = True # kept for the command line; the steps are always jax.jit-compiled
# -----------------------------------------------------------------------------
config_keys = [k for k,v in globals().items() if not k.startswith('_') and isinstance(v, (int, float, bool, str))]
exec(open('configurator.py').read()) # overrides from command line or config file
config = {k: globals()[k] for k in config_keys} # will be useful for logging
# -----------------------------------------------------------------------------

# various inits, derived attributes, I/O setup
if int(os.environ.get('RANK', -1)) != -1:
    raise SystemExit("this port runs one process: DDP (RANK set) is not supported")
master_process = True
seed_offset = 0
ddp_world_size = 1
tokens_per_iter = gradient_accumulation_steps * ddp_world_size * batch_size * block_size
print(f"tokens per iteration will be: {tokens_per_iter:,}")

if master_process:
    os.makedirs(out_dir, exist_ok=True)
device_type = 'cuda' if 'cuda' in device else 'cpu'
jax_device = jax.devices('cpu')[0] if device_type == 'cpu' else jax.devices()[0]
jax.config.update('jax_default_device', jax_device)
# one seed for everything, fixed as in the original: parameters and dropout from one JAX
# key, batch offsets from another
key = jax.random.PRNGKey(1337 + seed_offset)
data_key = jax.random.PRNGKey(1337 + seed_offset + 1)

# poor man's data loader
data_dir = os.path.join('data', dataset)
def get_batch(split):
    # recreate np.memmap every batch to avoid a memory leak, as the original does
    if split == 'train':
        data = np.memmap(os.path.join(data_dir, 'train.bin'), dtype=np.uint16, mode='r')
    else:
        data = np.memmap(os.path.join(data_dir, 'val.bin'), dtype=np.uint16, mode='r')
    ix = np.asarray(jax.random.randint(data_key, (batch_size,), 0, len(data) - block_size))
    x = np.stack([(data[i:i+block_size]).astype(np.int32) for i in ix])
    y = np.stack([(data[i+1:i+1+block_size]).astype(np.int32) for i in ix])
    return jnp.asarray(x), jnp.asarray(y)

# init these up here, can override if init_from='resume' (i.e. from a checkpoint)
iter_num = 0
best_val_loss = 1e9

# attempt to derive vocab_size from the dataset
meta_path = os.path.join(data_dir, 'meta.pkl')
meta_vocab_size = None
if os.path.exists(meta_path):
    with open(meta_path, 'rb') as f:
        meta = pickle.load(f)
    meta_vocab_size = meta['vocab_size']
    print(f"found vocab_size = {meta_vocab_size} (inside {meta_path})")

# model init
model_args = dict(n_layer=n_layer, n_head=n_head, n_embd=n_embd, block_size=block_size,
                  bias=bias, vocab_size=None, dropout=dropout) # start with model_args from command line
checkpoint = None
if init_from == 'scratch':
    # init a new model from scratch
    print("Initializing a new model from scratch")
    # determine the vocab size we'll use for from-scratch training
    if meta_vocab_size is None:
        print("defaulting to vocab_size of GPT-2 to 50304 (50257 rounded up for efficiency)")
    model_args['vocab_size'] = meta_vocab_size if meta_vocab_size is not None else 50304
    gptconf = GPTConfig(**model_args)
    model = GPT(gptconf)
    key, init_key = jax.random.split(key)
    params = model.init(init_key)
elif init_from == 'resume':
    print(f"Resuming training from {out_dir}")
    # resume training from a checkpoint.
    ckpt_path = os.path.join(out_dir, 'ckpt.pkl')
    with open(ckpt_path, 'rb') as f:
        checkpoint = pickle.load(f)
    checkpoint_model_args = checkpoint['model_args']
    # force these config attributes to be equal otherwise we can't even resume training
    # the rest of the attributes (e.g. dropout) can stay as desired from command line
    for k in ['n_layer', 'n_head', 'n_embd', 'block_size', 'bias', 'vocab_size']:
        model_args[k] = checkpoint_model_args[k]
    gptconf = GPTConfig(**model_args)
    model = GPT(gptconf)
    params = jax.tree_util.tree_map(jnp.asarray, checkpoint['model'])
    iter_num = checkpoint['iter_num']
    best_val_loss = checkpoint['best_val_loss']
elif init_from.startswith('gpt2'):
    print(f"Initializing from OpenAI GPT-2 weights: {init_from}")
    model = GPT.from_pretrained(init_from, dict(dropout=dropout))
# crop down the model block size if desired, using model surgery
if block_size < model.config.block_size:
    params = model.crop_block_size(params, block_size)
    model_args['block_size'] = block_size # so that the checkpoint will have the right value

# learning rate decay scheduler (cosine with warmup)
def get_lr(it):
    # 1) linear warmup for warmup_iters steps
    if it < warmup_iters:
        return learning_rate * (it + 1) / (warmup_iters + 1)
    # 2) if it > lr_decay_iters, return min learning rate
    if it > lr_decay_iters:
        return min_lr
    # 3) in between, use cosine decay down to min learning rate
    decay_ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
    assert 0 <= decay_ratio <= 1
    coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio)) # coeff ranges 0..1
    return min_lr + coeff * (learning_rate - min_lr)

# the same schedule as a function of the optimizer's update count (the update of iteration
# iter_num is update number iter_num), for optax
def lr_schedule(count):
    if not decay_lr:
        return jnp.full((), learning_rate, jnp.float32)
    warmup = learning_rate * (count + 1) / (warmup_iters + 1)
    decay_ratio = jnp.clip((count - warmup_iters) / max(lr_decay_iters - warmup_iters, 1), 0.0, 1.0)
    coeff = 0.5 * (1.0 + jnp.cos(math.pi * decay_ratio))
    cosine = min_lr + coeff * (learning_rate - min_lr)
    return jnp.where(count < warmup_iters, warmup, jnp.where(count > lr_decay_iters, min_lr, cosine))

# optimizer
optimizer = model.configure_optimizers(params, weight_decay, lr_schedule, (beta1, beta2), device_type, grad_clip)
opt_state = optimizer.init(params)
if init_from == 'resume':
    opt_state = jax.tree_util.tree_unflatten(
        jax.tree_util.tree_structure(opt_state),
        [jnp.asarray(x) for x in checkpoint['optimizer']])
checkpoint = None # free up memory

def loss_fn(params, X, Y, dropout_key):
    _, loss = model(params, X, Y, key=dropout_key if dropout > 0.0 else None)
    return loss

@jax.jit
def micro_step_grads(params, grads_acc, X, Y, dropout_key):
    """ the loss of one micro-batch and the gradients accumulated so far plus its share """
    loss, grads = jax.value_and_grad(loss_fn)(params, X, Y, dropout_key)
    grads = jax.tree_util.tree_map(lambda a, g: a + g / gradient_accumulation_steps, grads_acc, grads)
    return loss, grads

@jax.jit
def apply_update(params, opt_state, grads):
    updates, opt_state = optimizer.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state

@jax.jit
def eval_loss(params, X, Y):
    return model(params, X, Y)[1]

# helps estimate an arbitrarily accurate loss over either split using many batches
def estimate_loss():
    out = {}
    for split in ['train', 'val']:
        losses = np.zeros(eval_iters)
        for k in range(eval_iters):
            X, Y = get_batch(split)
            losses[k] = float(eval_loss(params, X, Y))
        out[split] = losses.mean()
    return out

# logging
if wandb_log and master_process:
    import wandb
    wandb.init(project=wandb_project, name=wandb_run_name, config=config)

# training loop
X, Y = get_batch('train') # fetch the very first batch
t0 = time.time()
local_iter_num = 0 # number of iterations in the lifetime of this process
running_mfu = -1.0
zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
while True:

    # determine the learning rate for this iteration
    lr = get_lr(iter_num) if decay_lr else learning_rate

    # evaluate the loss on train/val sets and write checkpoints
    if iter_num % eval_interval == 0 and master_process:
        losses = estimate_loss()
        print(f"step {iter_num}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
        if wandb_log:
            wandb.log({
                "iter": iter_num,
                "train/loss": losses['train'],
                "val/loss": losses['val'],
                "lr": lr,
                "mfu": running_mfu*100, # convert to percentage
            })
        if losses['val'] < best_val_loss or always_save_checkpoint:
            best_val_loss = losses['val']
            if iter_num > 0:
                checkpoint = {
                    'model': jax.tree_util.tree_map(np.asarray, params),
                    'optimizer': [np.asarray(x) for x in jax.tree_util.tree_leaves(opt_state)],
                    'model_args': model_args,
                    'iter_num': iter_num,
                    'best_val_loss': best_val_loss,
                    'config': config,
                }
                print(f"saving checkpoint to {out_dir}")
                with open(os.path.join(out_dir, 'ckpt.pkl'), 'wb') as f:
                    pickle.dump(checkpoint, f)
                checkpoint = None
    if iter_num == 0 and eval_only:
        break

    # forward backward update, with optional gradient accumulation to simulate larger batch size
    grads = zeros
    for micro_step in range(gradient_accumulation_steps):
        key, dropout_key = jax.random.split(key)
        loss, grads = micro_step_grads(params, grads, X, Y, dropout_key)
        loss = loss / gradient_accumulation_steps
        # fetch the next batch while the step runs (JAX dispatches asynchronously)
        X, Y = get_batch('train')
    # clip the gradient (inside the optimizer chain) and step the optimizer
    params, opt_state = apply_update(params, opt_state, grads)

    # timing and logging
    t1 = time.time()
    dt = t1 - t0
    t0 = t1
    if iter_num % log_interval == 0 and master_process:
        # scale up to undo the division above, approximating the true total loss (exact would have been a sum)
        lossf = float(loss) * gradient_accumulation_steps
        if local_iter_num >= 5: # let the training loop settle a bit
            mfu = model.estimate_mfu(params, batch_size * gradient_accumulation_steps, dt)
            running_mfu = mfu if running_mfu == -1.0 else 0.9*running_mfu + 0.1*mfu
        print(f"iter {iter_num}: loss {lossf:.4f}, time {dt*1000:.2f}ms, mfu {running_mfu*100:.2f}%")
    iter_num += 1
    local_iter_num += 1

    # termination conditions
    if iter_num > max_iters:
        break
