"""The convolutional network in Flax: two 3x3 convolutions with batch normalisation, then
two fully connected layers, the first also batch-normalised. Inputs are NHWC (N, 8, 8, 1)."""
import math

import flax.linen as nn
import jax
import jax.numpy as jnp


def torch_uniform(fan_in):
    # PyTorch's default for nn.Conv2d / nn.Linear weights (kaiming_uniform, a=sqrt(5))
    # and biases: U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
    bound = 1.0 / math.sqrt(fan_in)

    def init(key, shape, dtype=jnp.float32):
        return jax.random.uniform(key, shape, dtype, -bound, bound)

    return init


class TorchBatchNorm(nn.Module):
    """BatchNorm with PyTorch's conventions.

    - momentum weights the new batch: running = (1 - momentum) * running + momentum * batch
      (torch momentum=0.1; flax.linen.BatchNorm would need momentum=0.9 for the same thing);
    - the running variance is updated with the unbiased batch variance (n / (n - 1)),
      while the batch itself is normalised with the biased one;
    - eval mode (train=False) normalises with the running statistics.
    Normalises over every axis but the last (NHWC or NC).
    """
    momentum: float = 0.1
    epsilon: float = 1e-5

    @nn.compact
    def __call__(self, x, train: bool):
        features = x.shape[-1]
        axes = tuple(range(x.ndim - 1))
        scale = self.param("scale", nn.initializers.ones, (features,))
        bias = self.param("bias", nn.initializers.zeros, (features,))
        ra_mean = self.variable("batch_stats", "mean", jnp.zeros, (features,))
        ra_var = self.variable("batch_stats", "var", jnp.ones, (features,))
        if train:
            mean = x.mean(axis=axes)
            var = x.var(axis=axes)
            n = x.size // features
            if not self.is_initializing():
                m = self.momentum
                ra_mean.value = (1 - m) * ra_mean.value + m * mean
                ra_var.value = (1 - m) * ra_var.value + m * var * (n / (n - 1))
        else:
            mean, var = ra_mean.value, ra_var.value
        y = (x - mean) * jax.lax.rsqrt(var + self.epsilon)
        return y * scale + bias


class ConvNet(nn.Module):
    n_classes: int = 10

    @nn.compact
    def __call__(self, x, train: bool):
        def conv(features, in_ch):
            fan_in = in_ch * 3 * 3
            return nn.Conv(features, (3, 3), padding=1, kernel_init=torch_uniform(fan_in),
                           bias_init=torch_uniform(fan_in))

        def dense(features, fan_in):
            return nn.Dense(features, kernel_init=torch_uniform(fan_in),
                            bias_init=torch_uniform(fan_in))

        x = nn.relu(TorchBatchNorm()(conv(16, 1)(x), train))       # (N, 8, 8, 16)
        x = nn.relu(TorchBatchNorm()(conv(32, 16)(x), train))      # (N, 8, 8, 32)
        x = nn.max_pool(x, (2, 2), strides=(2, 2))                 # (N, 4, 4, 32)
        # Flatten in PyTorch's channel-major order (C, H, W), so that fc1's weight
        # rows line up with the original's.
        x = jnp.transpose(x, (0, 3, 1, 2)).reshape(x.shape[0], -1)  # (N, 512)
        x = nn.relu(TorchBatchNorm()(dense(64, 512)(x), train))
        return dense(self.n_classes, 64)(x)
