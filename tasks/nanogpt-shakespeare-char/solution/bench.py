"""
A much shorter version of train.py for benchmarking (the JAX port)
"""
import os
import time
import numpy as np
import jax
import jax.numpy as jnp
import optax
from model import GPTConfig, GPT

# -----------------------------------------------------------------------------
batch_size = 12
block_size = 1024
bias = False
real_data = True
seed = 1337
device = 'cuda' # 'cpu', or 'cuda' / 'cuda:N' for an accelerator JAX finds
dtype = 'float32' # kept for the command line; the port computes in float32
compile = True # kept for the command line; the step is always jax.jit-compiled
profile = False # use the JAX profiler (a trace in ./bench_log), or just simple benchmarking?
exec(open('configurator.py').read()) # overrides from command line or config file
# -----------------------------------------------------------------------------

key = jax.random.PRNGKey(seed)
rng = np.random.default_rng(seed)
if 'cuda' not in device:
    jax.config.update('jax_default_device', jax.devices('cpu')[0])

# data loading init
if real_data:
    dataset = 'openwebtext'
    data_dir = os.path.join('data', dataset)
    train_data = np.memmap(os.path.join(data_dir, 'train.bin'), dtype=np.uint16, mode='r')
    def get_batch(split):
        data = train_data # note ignore split in benchmarking script
        ix = rng.integers(0, len(data) - block_size, size=(batch_size,))
        x = np.stack([(data[i:i+block_size]).astype(np.int32) for i in ix])
        y = np.stack([(data[i+1:i+1+block_size]).astype(np.int32) for i in ix])
        return jnp.asarray(x), jnp.asarray(y)
else:
    # alternatively, if fixed data is desired to not care about data loading
    kx, ky = jax.random.split(jax.random.PRNGKey(seed))
    x = jax.random.randint(kx, (batch_size, block_size), 0, 50304)
    y = jax.random.randint(ky, (batch_size, block_size), 0, 50304)
    get_batch = lambda split: (x, y)

# model init
gptconf = GPTConfig(
    block_size = block_size, # how far back does the model look? i.e. context size
    n_layer = 12, n_head = 12, n_embd = 768, # size of the model
    dropout = 0, # for determinism
    bias = bias,
)
model = GPT(gptconf)
params = model.init(key)

optimizer = model.configure_optimizers(params, weight_decay=1e-2, learning_rate=1e-4, betas=(0.9, 0.95), device_type='cpu' if 'cuda' not in device else 'cuda')
opt_state = optimizer.init(params)

@jax.jit
def step(params, opt_state, X, Y):
    loss, grads = jax.value_and_grad(lambda p: model(p, X, Y)[1])(params)
    updates, opt_state = optimizer.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss

def run(num_steps):
    global params, opt_state
    X, Y = get_batch('train')
    for k in range(num_steps):
        params, opt_state, loss = step(params, opt_state, X, Y)
        X, Y = get_batch('train')
        lossf = float(loss)
        print(f"{k}/{num_steps} loss: {lossf:.4f}")

if profile:
    run(5)
    with jax.profiler.trace('./bench_log'):
        run(10)
else:
    # simple benchmarking
    for stage, num_steps in enumerate([10, 20]): # burnin, then benchmark
        t0 = time.time()
        run(num_steps)
        jax.block_until_ready(params)
        t1 = time.time()
        dt = t1-t0
        mfu = model.estimate_mfu(params, batch_size * 1 * num_steps, dt)
        if stage == 1:
            print(f"time per iteration: {dt/num_steps*1000:.4f}ms, MFU: {mfu*100:.2f}%")
