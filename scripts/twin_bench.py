"""twin_bench.py: PyTorch timings beside the C model's, for scripts/bench.sh
(run through twin.py bench and twin.py matmul-peak, which load the BLAS first):
the twin and the idiomatic nn.TransformerEncoder model, float32 or under
torch.autocast bfloat16, and the best matrix-product GFLOP/s."""
import contextlib
import json
import math
import os
import sys
import time

import torch
import torch.nn as nn

from twin import MASK, N_SPECIAL, PAD, Twin, make_adamw, mlm_train_step, sinusoidal_table, train_step


class Idiomatic(nn.Module):
    """The model as a PyTorch user writes it: embedding plus positions,
    nn.TransformerEncoder (batch_first, the library's own init and fast
    paths), mean pooling over non-[PAD] tokens, a linear head. The bench's
    yardstick: the twin is written to match the C side bit for bit, not for
    speed."""

    def __init__(self, cfg):
        super().__init__()
        d = cfg["d_model"]
        self.scale = cfg["emb_scale"]
        self.embedding = nn.Embedding(cfg["vocab_size"], d)
        self.register_buffer("pe_table", sinusoidal_table(cfg["max_len"], d), persistent=False)
        layer = nn.TransformerEncoderLayer(d, cfg["heads"], cfg["d_ff"], cfg["dropout"], batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, cfg["layers"])
        self.head = nn.Linear(d, cfg["n_classes"])

    def forward(self, tokens):
        pad = tokens == PAD
        x = self.embedding(tokens) * self.scale + self.pe_table[:tokens.shape[1]]
        h = self.encoder(x, src_key_padding_mask=pad)
        keep = (~pad).to(h.dtype).unsqueeze(-1)
        return self.head((h * keep).sum(1) / keep.sum(1))


def cmd_bench(args):
    """Tokens/s of training steps (or, with --inference, of forward passes
    under torch.no_grad in eval mode) on random ordinary tokens."""
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    if args.d_model % args.heads:
        print("twin.py bench: d-model must be a multiple of heads", file=sys.stderr)
        return 2
    cfg = {"vocab_size": args.vocab, "max_len": args.seq, "d_model": args.d_model,
           "heads": args.heads, "layers": args.layers, "d_ff": args.d_ff,
           "n_classes": 0 if args.mlm else args.classes,
           "dropout": args.dropout, "activation": args.activation, "norm": args.norm,
           "pool": args.pool, "pe": args.pe, "emb_scale": math.sqrt(args.d_model)}
    if args.idiomatic:
        model = Idiomatic(cfg).train()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    else:
        model = Twin(cfg).train()
        opt = make_adamw(model, 1e-3, 0.01)
    low = min(N_SPECIAL, args.vocab - 1)
    tokens = torch.randint(low, args.vocab, (args.batch, args.seq))
    labels = torch.randint(0, args.classes, (args.batch,))
    # PyTorch's own mixed precision: products in bfloat16, the rest as autocast decides
    precision = (lambda: torch.autocast("cpu", dtype=torch.bfloat16)) if args.autocast else contextlib.nullcontext
    if args.inference:
        # PyTorch 1.13's fused inference path (eval mode, no_grad) refuses autocast ("expected scalar
        # type BFloat16"): under autocast the layers take their ordinary path, in train mode, which
        # is eval mode's math when dropout is 0, as the inference runs have it
        model.train(args.autocast and args.dropout == 0)

        def step():
            with torch.no_grad(), precision():
                model(tokens).argmax(1)
    else:
        def step():
            with precision():
                return one_step()

        def one_step():
            if not args.mlm:
                return train_step(model, opt, tokens, labels, None, 1.0)
            # docs/DESIGN.md §4b masking, drawn afresh each step as the C side does; the head
            # runs on the selected positions only (the fastest form)
            select = torch.rand(tokens.shape) < 0.15
            kind = torch.rand(tokens.shape)
            masked = torch.where(select & (kind < 0.8), torch.full_like(tokens, MASK), tokens)
            masked = torch.where(select & (kind >= 0.8) & (kind < 0.9),
                                 torch.randint(low, args.vocab, tokens.shape), masked)
            targets = torch.where(select, tokens, torch.full_like(tokens, -1))
            return mlm_train_step(model, opt, masked, targets, 1.0)
    for _ in range(args.warmup):
        step()
    times = []
    for _ in range(args.steps):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    elapsed = sum(times)
    print(json.dumps({"ms_per_step": 1000.0 * elapsed / args.steps, "autocast": args.autocast,
                      "tokens_per_s": args.batch * args.seq * args.steps / elapsed,
                      "ms_per_step_min": 1000.0 * min(times),
                      "blas": blas_library(), "threads": args.threads}))
    return 0


def blas_library():
    """Which BLAS torch's libblas.so.3 resolved to (Debian switches it by alternatives)."""
    try:
        with open("/proc/self/maps") as f:
            paths = {line.split()[-1] for line in f if "blas" in line.split()[-1]}
    except OSError:
        return "unknown"
    for path in sorted(paths):
        real = os.path.realpath(path)
        for name in ("openblas", "blis", "mkl", "atlas"):
            if name in real:
                return name
    return "netlib (reference, unoptimised)" if paths else "unknown"


def best_gflops(n, reps, product):
    product()  # warm-up
    best = 0.0
    for _ in range(reps):
        start = time.perf_counter()
        product()
        best = max(best, 2.0 * n ** 3 / (time.perf_counter() - start) / 1e9)
    return best


def cmd_matmul_peak(args):
    """Best float32 n x n product rate: torch.mm (through the system BLAS) and,
    where torch has it, oneDNN's JIT kernels; the larger is the machine's peak."""
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    mm = onednn = 0.0
    dtype = getattr(torch, args.dtype)
    for n in args.sizes:
        a, b, c = (torch.randn(n, n).to(dtype) for _ in range(3))
        mm = max(mm, best_gflops(n, args.reps, lambda: torch.mm(a, b, out=c)))
        if torch.backends.mkldnn.is_available() and dtype == torch.float32:
            try:
                am = a.to_mkldnn()
                onednn = max(onednn, best_gflops(n, args.reps,
                                                 lambda: torch._C._nn.mkldnn_linear(am, b, None)))
            except (RuntimeError, AttributeError):
                pass
    best, method = max((mm, "torch.mm"), (onednn, "onednn"))
    print(json.dumps({"gflops": best, "method": method, "dtype": args.dtype, "torch_mm_gflops": mm,
                      "onednn_gflops": onednn, "blas": blas_library(), "threads": args.threads}))
    return 0
