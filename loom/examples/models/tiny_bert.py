"""A TinyBERT-shaped transformer encoder (BERT layout: post-norm, GELU FFN) in plain torch.nn.

Defaults are TinyBERT-4L-312D: 4 layers, hidden 312, 12 heads, FFN 1200, vocabulary 30522; the
input is a (batch, sequence) int64 tensor of token ids. No attention mask (all tokens valid).
"""

from __future__ import annotations

import math

import torch
from torch import nn


class SelfAttention(nn.Module):
    def __init__(self, hidden: int, heads: int):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.output = nn.Linear(hidden, hidden)

    def _split(self, x):
        b, t, _ = x.shape
        return x.view(b, t, self.heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, x):
        b, t, h = x.shape
        q, k, v = self._split(self.query(x)), self._split(self.key(x)), self._split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        context = torch.matmul(torch.softmax(scores, dim=-1), v)
        return self.output(context.permute(0, 2, 1, 3).reshape(b, t, h))


class EncoderLayer(nn.Module):
    def __init__(self, hidden: int, heads: int, ffn: int):
        super().__init__()
        self.attention = SelfAttention(hidden, heads)
        self.norm1 = nn.LayerNorm(hidden, eps=1e-12)
        self.intermediate = nn.Linear(hidden, ffn)
        self.gelu = nn.GELU()
        self.ffn_out = nn.Linear(ffn, hidden)
        self.norm2 = nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, x):
        x = self.norm1(x + self.attention(x))
        return self.norm2(x + self.ffn_out(self.gelu(self.intermediate(x))))


class TinyBertEncoder(nn.Module):
    def __init__(self, layers: int = 4, hidden: int = 312, heads: int = 12, ffn: int = 1200,
                 vocab: int = 30522, max_positions: int = 512):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, hidden)
        self.position_embeddings = nn.Embedding(max_positions, hidden)
        self.norm = nn.LayerNorm(hidden, eps=1e-12)
        self.layers = nn.ModuleList(EncoderLayer(hidden, heads, ffn) for _ in range(layers))
        self.register_buffer("position_ids", torch.arange(max_positions), persistent=False)

    def forward(self, token_ids):
        positions = self.position_ids[: token_ids.shape[1]]
        x = self.norm(self.word_embeddings(token_ids) + self.position_embeddings(positions))
        for layer in self.layers:
            x = layer(x)
        return x


def tiny_bert_encoder(seed: int = 0, **shape) -> TinyBertEncoder:
    """The encoder in eval mode with weights drawn from ``seed``; ``shape`` overrides layers, hidden,
    heads, ffn, vocab, max_positions (smaller ones for quick tests)."""
    torch.manual_seed(seed)
    return TinyBertEncoder(**shape).eval()
