"""twin_bf16.py: the twin's bfloat16 products, by hand (the C side's --precision bf16): every
product's inputs rounded to bfloat16 and summed in float32, forward and backward, and
nn.TransformerEncoderLayer's math written out with its products so rounded. scripts/twin.py
uses it for checkpoints whose metadata says precision bf16."""
import math

import torch
import torch.nn.functional as F


def bf16(t):
    """t rounded to bfloat16 (8 significant bits, to nearest, ties to even) and widened back."""
    return t.to(torch.bfloat16).to(t.dtype)


class RoundedMatmul(torch.autograd.Function):
    """a @ b with both inputs rounded to bfloat16 and the sums in float32 (each product of two
    bfloat16 is exact in float32); the backward's two products round their inputs too, as the C
    side's --precision bf16 does."""

    @staticmethod
    def forward(ctx, a, b):
        ra, rb = bf16(a), bf16(b)
        ctx.save_for_backward(ra, rb)
        return ra @ rb

    @staticmethod
    def backward(ctx, g):
        ra, rb = ctx.saved_tensors
        rg = bf16(g)
        return rg @ rb.transpose(-1, -2), ra.transpose(-1, -2) @ rg


def linear_bf16(x, weight, bias):
    """F.linear with bfloat16 products: rows of x (any leading shape) times weight^T, plus bias."""
    y = RoundedMatmul.apply(x.reshape(-1, x.shape[-1]), weight.t())
    y = y if bias is None else y + bias
    return y.reshape(*x.shape[:-1], weight.shape[0])


def encoder_layer_written_out(layer, x, pad, matmul=RoundedMatmul.apply, linear=linear_bf16):
    """nn.TransformerEncoderLayer's math written out with its products as matmul and linear
    (by default in bfloat16): packed q,k,v, scores = (q k^T) / sqrt(dh) with [PAD] keys at
    -inf, softmax, dropout, (p v), out_proj; then the FFN; post- or pre-norm. With torch.matmul
    and F.linear it is the layer itself to float32 rounding (twin.py check tests that)."""
    B, T, d = x.shape
    attn = layer.self_attn
    h = attn.num_heads
    dh = d // h
    act = layer.activation

    def self_attention(y):
        qkv = linear(y, attn.in_proj_weight, attn.in_proj_bias)
        q, k, v = (t.reshape(B, T, h, dh).transpose(1, 2) for t in qkv.split(d, -1))
        scores = matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(dh))
        scores = scores.masked_fill(pad[:, None, None, :], float("-inf"))
        p = F.dropout(torch.softmax(scores, -1), attn.dropout, layer.training)
        out = matmul(p, v).transpose(1, 2).reshape(B, T, d)
        return layer.dropout1(linear(out, attn.out_proj.weight, attn.out_proj.bias))

    def feed_forward(y):
        hidden = layer.dropout(act(linear(y, layer.linear1.weight, layer.linear1.bias)))
        return layer.dropout2(linear(hidden, layer.linear2.weight, layer.linear2.bias))

    if layer.norm_first:
        x = x + self_attention(layer.norm1(x))
        return x + feed_forward(layer.norm2(x))
    x = layer.norm1(x + self_attention(x))
    return layer.norm2(x + feed_forward(x))
