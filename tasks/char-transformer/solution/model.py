"""A small GPT-style character model in Flax: token + position embeddings, pre-norm
transformer blocks with causal self-attention, and an output head tied to the token
embedding."""
import flax.linen as nn
import jax.numpy as jnp

# PyTorch's model initialises every nn.Linear and nn.Embedding weight from N(0, 0.02)
# and every bias with zeros; LayerNorms start at weight 1, bias 0.
normal = nn.initializers.normal(stddev=0.02)
zeros = nn.initializers.zeros
LN_EPS = 1e-5  # torch.nn.LayerNorm's eps; flax.linen.LayerNorm's default is 1e-6


def gelu(x):
    # nn.GELU() is the exact, erf-based GELU; flax's nn.gelu defaults to the tanh form.
    return nn.gelu(x, approximate=False)


class Block(nn.Module):
    d_model: int
    n_head: int
    dropout: float

    @nn.compact
    def __call__(self, x, mask, train: bool):
        h = nn.LayerNorm(epsilon=LN_EPS)(x)
        # qkv projection, scaled dot-product attention, dropout on the attention
        # weights, output projection. PyTorch draws an independent dropout mask for
        # every attention weight, so the mask is not broadcast over batch and heads.
        h = nn.MultiHeadDotProductAttention(
            num_heads=self.n_head,
            kernel_init=normal,
            bias_init=zeros,
            dropout_rate=self.dropout,
            broadcast_dropout=False,
            deterministic=not train,
        )(h, mask=mask)
        x = x + nn.Dropout(self.dropout, deterministic=not train)(h)
        h = nn.LayerNorm(epsilon=LN_EPS)(x)
        h = nn.Dense(4 * self.d_model, kernel_init=normal, bias_init=zeros)(h)
        h = nn.Dense(self.d_model, kernel_init=normal, bias_init=zeros)(gelu(h))
        return x + nn.Dropout(self.dropout, deterministic=not train)(h)


class CharTransformer(nn.Module):
    vocab_size: int
    block_size: int = 32
    d_model: int = 64
    n_head: int = 4
    n_layer: int = 2
    dropout: float = 0.1

    @nn.compact
    def __call__(self, idx, train: bool):
        B, T = idx.shape
        tok_emb = nn.Embed(self.vocab_size, self.d_model, embedding_init=normal)
        pos_emb = nn.Embed(self.block_size, self.d_model, embedding_init=normal)
        x = tok_emb(idx) + pos_emb(jnp.arange(T))[None]
        x = nn.Dropout(self.dropout, deterministic=not train)(x)
        # Flax's attention mask marks the entries that MAY be attended (True = keep),
        # the opposite of the PyTorch model's buffer, which marks the hidden ones:
        # causal means position t sees positions 0..t.
        mask = nn.make_causal_mask(idx)  # (B, 1, T, T), lower triangle True
        for _ in range(self.n_layer):
            x = Block(self.d_model, self.n_head, self.dropout)(x, mask, train)
        x = nn.LayerNorm(epsilon=LN_EPS)(x)
        # Weight tying: the head is the token embedding matrix, transposed (no bias).
        return tok_emb.attend(x)  # (B, T, vocab) logits
