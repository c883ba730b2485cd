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

        def bn():
            # Same settings as nn.BatchNorm2d / nn.BatchNorm1d: momentum 0.1, eps 1e-5.
            return nn.BatchNorm(use_running_average=not train, momentum=0.1, epsilon=1e-5)

        x = nn.relu(bn()(conv(16, 1)(x)))                          # (N, 8, 8, 16)
        x = nn.relu(bn()(conv(32, 16)(x)))                         # (N, 8, 8, 32)
        x = nn.max_pool(x, (2, 2), strides=(2, 2))                 # (N, 4, 4, 32)
        # Flatten in PyTorch's channel-major order (C, H, W).
        x = jnp.transpose(x, (0, 3, 1, 2)).reshape(x.shape[0], -1)  # (N, 512)
        x = nn.relu(bn()(dense(64, 512)(x)))
        return dense(self.n_classes, 64)(x)
