"""
Simple training loop; Boilerplate that could apply to any arbitrary neural network,
so nothing in this file really has anything to do with GPT specifically. JAX + optax.
"""

import time
from collections import defaultdict

import jax
import jax.numpy as jnp
import numpy as np

from mingpt.utils import CfgNode as CN
from mingpt.utils import next_key

class Trainer:

    @staticmethod
    def get_default_config():
        C = CN()
        # device to train on
        C.device = 'auto'
        # dataloder parameters
        C.num_workers = 4
        # optimizer parameters
        C.max_iters = None
        C.batch_size = 64
        C.learning_rate = 3e-4
        C.betas = (0.9, 0.95)
        C.weight_decay = 0.1 # only applied on matmul weights
        C.grad_norm_clip = 1.0
        return C

    def __init__(self, config, model, train_dataset):
        self.config = config
        self.model = model
        self.optimizer = None
        self.train_dataset = train_dataset
        self.callbacks = defaultdict(list)

        # the run is on the CPU: JAX_PLATFORMS=cpu, or the first device JAX finds
        self.device = 'cpu' if config.device == 'auto' else config.device
        print("running on device", jax.devices()[0].platform)

        # variables that will be assigned to trainer class later for logging and etc
        self.iter_num = 0
        self.iter_time = 0.0
        self.iter_dt = 0.0

    def add_callback(self, onevent: str, callback):
        self.callbacks[onevent].append(callback)

    def set_callback(self, onevent: str, callback):
        self.callbacks[onevent] = [callback]

    def trigger_callbacks(self, onevent: str):
        for callback in self.callbacks.get(onevent, []):
            callback(self)

    def next_batch(self):
        """ batch_size examples drawn from the dataset (its __getitem__ samples, the index unused,
        as the source's RandomSampler with replacement) """
        n = len(self.train_dataset)
        items = [self.train_dataset[int(i)] for i in np.random.randint(n, size=self.config.batch_size)]
        x = np.stack([np.asarray(a) for a, _ in items])
        y = np.stack([np.asarray(b) for _, b in items])
        return x, y

    def run(self):
        model, config = self.model, self.config

        # setup the optimizer
        self.optimizer = model.configure_optimizers(config)
        opt_state = self.optimizer.init(model.params)
        optimizer, model_config = self.optimizer, model.config

        def loss_fn(params, x, y, key):
            from mingpt.model import cross_entropy_ignore, gpt_forward
            logits = gpt_forward(params, x, model_config, key, True)
            return cross_entropy_ignore(logits, y)

        @jax.jit
        def step(params, opt_state, x, y, key):
            loss, grads = jax.value_and_grad(loss_fn)(params, x, y, key)
            updates, opt_state = optimizer.update(grads, opt_state, params)
            params = jax.tree_util.tree_map(lambda p, u: p + u, params, updates)
            return params, opt_state, loss

        model.train()
        self.iter_num = 0
        self.iter_time = time.time()
        while True:
            x, y = self.next_batch()

            # forward, backprop and update the parameters
            model.params, opt_state, self.loss = step(model.params, opt_state, jnp.asarray(x), jnp.asarray(y), next_key())

            self.trigger_callbacks('on_batch_end')
            self.iter_num += 1
            tnow = time.time()
            self.iter_dt = tnow - self.iter_time
            self.iter_time = tnow

            # termination conditions
            if config.max_iters is not None and self.iter_num >= config.max_iters:
                break
