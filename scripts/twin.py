#!/usr/bin/env python3
"""twin.py: the C model's twin in PyTorch and its cross-check against the C side (PyTorch timings: twin_bench.py).

  twin.py check DIR [--dtype float32|float64]   compare every DIR/CASE written by tool_torch_check
  twin.py saliency MODEL --ids 2,7,3 --label K  per-token gradient x input by autograd (trace --backward's test)
  twin.py selftest                              checks of the twin against itself
  twin.py bench --vocab V --seq T ...           ms per training step of the same model in PyTorch
                [--idiomatic] [--inference]     ... or of the idiomatic model; or forward passes only
                [--autocast]                    ... under torch.autocast("cpu", dtype=torch.bfloat16)
  twin.py matmul-peak --threads N               best float32 matrix-product GFLOP/s
                [--dtype bfloat16]              ... or bfloat16 (torch.mm on bfloat16 tensors)

The state_dict names are those of docs/DESIGN.md §5, so load_state_dict works on
the C checkpoint directly. The file format is read and written here by hand
(no safetensors package): u64 LE header size, JSON header, raw LE data.
"""
import argparse
import json
import math
import os
import struct
import sys
import tempfile


def _threads_from_argv(argv):
    """--threads N, read before torch loads so its BLAS starts with N threads."""
    for i, a in enumerate(argv):
        if a == "--threads" and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith("--threads="):
            return a.split("=", 1)[1]
    return None


if _threads_from_argv(sys.argv) is not None:
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(_var, _threads_from_argv(sys.argv))


def _use_openblas_if_found(argv):
    """For the timings: Debian's torch calls whatever libblas.so.3 is, by default
    netlib's unoptimised reference BLAS. If an OpenBLAS libblas.so.3 is unpacked
    under build/openblas (or named by TWIN_BLAS_DIR), re-run this script with it
    first on LD_LIBRARY_PATH. TWIN_BLAS_DIR=system keeps the system one."""
    if not argv or argv[0] not in ("bench", "matmul-peak") or os.environ.get("TWIN_BLAS_REEXEC"):
        return
    system = os.path.realpath("/usr/lib/x86_64-linux-gnu/libblas.so.3")
    wanted = os.environ.get("TWIN_BLAS_DIR", "")
    if wanted == "system" or (not wanted and "openblas" in system):
        return
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    dirs = [wanted] if wanted else [
        os.path.join(root, "build/openblas/usr/lib/x86_64-linux-gnu", sub)
        for sub in ("openblas-openmp", "openblas-pthread")]
    for d in dirs:
        if os.path.isfile(os.path.join(d, "libblas.so.3")):
            env = dict(os.environ, TWIN_BLAS_REEXEC="1")
            env["LD_LIBRARY_PATH"] = d + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
            os.execve(sys.executable, [sys.executable, os.path.abspath(__file__)] + argv, env)


_use_openblas_if_found(sys.argv[1:])

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from twin_bf16 import encoder_layer_written_out, linear_bf16

PAD, UNK, CLS, SEP, MASK = 0, 1, 2, 3, 4
N_SPECIAL = 5

# ---------------------------------------------------------------- safetensors

ST_DTYPES = {"F32": "<f4", "F64": "<f8", "I32": "<i4", "I64": "<i8", "U8": "u1"}


def st_read(path):
    """Returns ({name: numpy array}, {metadata key: str})."""
    with open(path, "rb") as f:
        buf = f.read()
    if len(buf) < 8:
        raise ValueError(f"{path}: too short for a safetensors file")
    (hlen,) = struct.unpack("<Q", buf[:8])
    if hlen > len(buf) - 8:
        raise ValueError(f"{path}: header size {hlen} past the end of the file")
    header = json.loads(buf[8:8 + hlen].decode("utf-8"))
    data = memoryview(buf)[8 + hlen:]
    meta = header.pop("__metadata__", None) or {}
    tensors = {}
    for name, info in header.items():
        dt = np.dtype(ST_DTYPES[info["dtype"]])
        begin, end = info["data_offsets"]
        shape = tuple(info["shape"])
        count = int(np.prod(shape)) if shape else 1
        if end - begin != count * dt.itemsize or end > len(data):
            raise ValueError(f"{path}: tensor {name}: bad data_offsets {begin},{end}")
        arr = np.frombuffer(data[begin:end], dtype=dt).reshape(shape).copy()
        tensors[name] = arr
    return tensors, meta


def st_write(path, tensors, meta=None):
    """Writes {name: numpy array} (F32/I32/I64/U8) with string metadata."""
    names = {np.dtype("<f4"): "F32", np.dtype("<f8"): "F64", np.dtype("<i4"): "I32",
             np.dtype("<i8"): "I64", np.dtype("u1"): "U8"}
    header, chunks, offset = {}, [], 0
    if meta:
        header["__metadata__"] = {str(k): str(v) for k, v in meta.items()}
    for name, arr in tensors.items():
        arr = np.ascontiguousarray(arr)
        arr = arr.astype(arr.dtype.newbyteorder("<"), copy=False)
        raw = arr.tobytes()
        header[name] = {"dtype": names[arr.dtype], "shape": list(arr.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    hjson = json.dumps(header, separators=(",", ":")).encode("utf-8")
    hjson += b" " * (-len(hjson) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hjson)))
        f.write(hjson)
        for c in chunks:
            f.write(c)


# ---------------------------------------------------------------- the model

def config_from_metadata(meta, tensors=None):
    """The model config from a checkpoint's __metadata__ (all strings); tensor
    shapes fill in what the metadata leaves out."""
    tensors = tensors or {}

    def get(key, conv, fallback=None):
        if key in meta:
            return conv(meta[key])
        if fallback is not None:
            return fallback()
        raise KeyError(f"checkpoint metadata has no '{key}'")

    def n_classes():
        if "labels" in meta:
            return len(json.loads(meta["labels"]))
        return int(tensors["head.weight"].shape[0])

    cfg = {
        "vocab_size": get("vocab_size", int, lambda: int(tensors["embedding.weight"].shape[0])),
        "d_model": get("d_model", int, lambda: int(tensors["embedding.weight"].shape[1])),
        "heads": get("heads", int),
        "layers": get("layers", int),
        "d_ff": get("d_ff", int, lambda: int(tensors["encoder.layers.0.linear1.weight"].shape[0])),
        "n_classes": get("n_classes", int, n_classes),
        "dropout": get("dropout", float, lambda: 0.0),
        "activation": get("activation", str, lambda: "relu"),
        "norm": get("norm", str, lambda: "post"),
        "pool": get("pool", str, lambda: "mean"),
        "pe": get("pe", str, lambda: "sinusoidal"),
    }
    cfg["max_len"] = get("max_len", int, lambda: int(tensors["pos_embedding.weight"].shape[0]))
    cfg["emb_scale"] = get("emb_scale", float, lambda: math.sqrt(cfg["d_model"]))
    cfg["precision"] = get("precision", str, lambda: "fp32")   # absent: float32 (docs/DESIGN.md §4)
    if cfg["precision"] not in ("fp32", "bf16", "amx"):
        raise ValueError(f"unknown precision {cfg['precision']!r}")
    return cfg


def sinusoidal_table(max_len, d):
    """PE[pos,2i] = sin(pos*10000^(-2i/d)), PE[pos,2i+1] = cos(...), in double, stored as float."""
    pos = np.arange(max_len, dtype=np.float64)[:, None]
    two_i = np.arange(0, d, 2, dtype=np.float64)[None, :]
    angle = pos * np.power(10000.0, -two_i / d)
    pe = np.zeros((max_len, d), dtype=np.float64)
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle)
    return torch.from_numpy(pe.astype(np.float32))


def masked_dropout(x, tokens, p, training):
    """docs/DESIGN.md §4.2: [CLS]/[SEP]/[MASK] kept unscaled, [PAD] zeroed, the rest inverted dropout.
    Identity in eval mode."""
    if not training:
        return x
    keep = ((tokens == CLS) | (tokens == SEP) | (tokens == MASK)).unsqueeze(-1)
    pad = (tokens == PAD).unsqueeze(-1)
    dropped = F.dropout(x, p, True) if p > 0 else x
    out = torch.where(keep, x, dropped)
    return out.masked_fill(pad, 0.0)


class MlmHead(nn.Module):
    """docs/DESIGN.md §4b: h' = LayerNorm(gelu(W h + b)), logits = h' E^T + bias with E the
    (unscaled) input embedding table, tied."""

    def __init__(self, d, vocab_size):
        super().__init__()
        self.dense = nn.Linear(d, d)
        self.norm = nn.LayerNorm(d, eps=1e-5)
        self.bias = nn.Parameter(torch.zeros(vocab_size))

    def forward(self, h, embedding_weight, linear=F.linear):
        return linear(self.norm(F.gelu(linear(h, self.dense.weight, self.dense.bias))), embedding_weight, self.bias)


class Twin(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = dict(cfg)
        d = cfg["d_model"]
        self.embedding = nn.Embedding(cfg["vocab_size"], d)
        nn.init.normal_(self.embedding.weight, 0.0, 1.0 / math.sqrt(d))
        if cfg["pe"] == "learned":
            self.pos_embedding = nn.Embedding(cfg["max_len"], d)
        elif cfg["pe"] == "sinusoidal":
            self.register_buffer("pe_table", sinusoidal_table(cfg["max_len"], d), persistent=False)
        elif cfg["pe"] != "none":
            raise ValueError(f"unknown pe {cfg['pe']!r}")
        if cfg["norm"] not in ("post", "pre"):
            raise ValueError(f"unknown norm {cfg['norm']!r}")
        if cfg["activation"] not in ("relu", "gelu"):
            raise ValueError(f"unknown activation {cfg['activation']!r}")
        if cfg["pool"] not in ("mean", "cls"):
            raise ValueError(f"unknown pool {cfg['pool']!r}")
        pre = cfg["norm"] == "pre"
        layer = nn.TransformerEncoderLayer(d, cfg["heads"], cfg["d_ff"], cfg["dropout"],
                                           activation=cfg["activation"], layer_norm_eps=1e-5,
                                           batch_first=True, norm_first=pre)
        self.encoder = nn.TransformerEncoder(layer, cfg["layers"],
                                             norm=nn.LayerNorm(d, eps=1e-5) if pre else None,
                                             enable_nested_tensor=False)
        if cfg["n_classes"] == 0:  # a pretraining model: the MLM head instead of the classifier's
            self.mlm = MlmHead(d, cfg["vocab_size"])
        else:
            self.head = nn.Linear(d, cfg["n_classes"])

    def embed(self, tokens):
        """The embedding sum E[token] * emb_scale + PE, (B, T, d): the encoder's input before dropout."""
        B, T = tokens.shape
        x = self.embedding(tokens) * self.cfg["emb_scale"]
        if self.cfg["pe"] == "sinusoidal":
            x = x + self.pe_table[:T].to(x.dtype)
        elif self.cfg["pe"] == "learned":
            x = x + self.pos_embedding(torch.arange(T, device=tokens.device))
        return x

    def encode(self, tokens, x=None):
        """The encoder's output (B, T, d); x, when given, replaces the embedding sum
        (a leaf to differentiate against)."""
        x = self.embed(tokens) if x is None else x
        x = masked_dropout(x, tokens, self.cfg["dropout"], self.training)
        pad = tokens == PAD
        if self.cfg.get("precision") in ROUNDED:
            return self.encode_written_out(x, pad)
        return self.encoder(x, src_key_padding_mask=pad)

    def encode_written_out(self, x, pad, **products):
        """The encoder through encoder_layer_written_out (bfloat16 products unless given others)."""
        for layer in self.encoder.layers:
            x = encoder_layer_written_out(layer, x, pad, **products)
        return x if self.encoder.norm is None else self.encoder.norm(x)

    def linear(self, x, weight, bias):
        """F.linear, or with bfloat16 products in a bf16 model."""
        return linear_bf16(x, weight, bias) if self.cfg.get("precision") in ROUNDED else F.linear(x, weight, bias)

    def mlm_logits(self, tokens, targets):
        """Vocabulary logits at the selected positions (targets >= 0), row-major order."""
        h = self.encode(tokens)
        return self.mlm(h[targets >= 0], self.embedding.weight, self.linear)

    def forward(self, tokens, x=None):
        """Logits; x, when given, replaces the embedding sum."""
        pad = tokens == PAD
        h = self.encode(tokens, x)
        if self.cfg["pool"] == "cls":
            pooled = h[:, 0]
        else:
            keep = (~pad).to(h.dtype).unsqueeze(-1)
            pooled = (h * keep).sum(1) / keep.sum(1)
        return self.linear(pooled, self.head.weight, self.head.bias)


def loss_fn(logits, labels, class_weights=None):
    return F.cross_entropy(logits, labels, weight=class_weights)


def mlm_loss(model, tokens, targets):
    """Mean cross-entropy over the selected positions (docs/DESIGN.md §4b)."""
    return F.cross_entropy(model.mlm_logits(tokens, targets), targets[targets >= 0])


def mlm_train_step(model, opt, tokens, targets, clip):
    opt.zero_grad(set_to_none=False)
    loss = mlm_loss(model, tokens, targets)
    loss.backward()
    if clip > 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
    opt.step()
    return loss.item()


def make_adamw(model, lr, weight_decay):
    """AdamW with decay on matrices and embeddings (dim >= 2), none on biases and LayerNorm."""
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": weight_decay},
              {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.999), eps=1e-8)


def train_step(model, opt, tokens, labels, class_weights, clip):
    opt.zero_grad(set_to_none=False)
    loss = loss_fn(model(tokens), labels, class_weights)
    loss.backward()
    if clip > 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
    opt.step()
    return loss.item()


def load_twin(path, dtype=torch.float32):
    tensors, meta = st_read(path)
    cfg = config_from_metadata(meta, tensors)
    model = Twin(cfg)
    state = {k: torch.from_numpy(v) for k, v in tensors.items()}
    model.load_state_dict(state, strict=True)
    return model.to(dtype), cfg


# ---------------------------------------------------------------- check against C

def rel_err(a, b):
    """||a - b|| / max(||b||, 1e-12), in double."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-12))


def compare_grads(case_dir, model, batch):
    grads = []
    for name, p in model.named_parameters():
        key = "grad." + name
        if key not in batch:
            raise KeyError(f"{case_dir}: batch file has no {key}")
        grads.append((name, rel_err(batch[key], p.grad.numpy())))
    missing = set(k[5:] for k in batch if k.startswith("grad.")) - set(n for n, _ in grads)
    if missing:
        raise KeyError(f"{case_dir}: C gradients for unknown tensors {sorted(missing)}")
    return grads


def check_mlm_case(case_dir, model_path, batch, bmeta, dtype, tol):
    """A pretraining case: the same corrupted tokens and targets through the MLM
    head; the C side wrote the probabilities at the selected positions."""
    tokens = torch.from_numpy(batch["tokens"].astype(np.int64))
    targets = torch.from_numpy(batch["targets"].astype(np.int64))
    lr, wd, clip, steps = (float(bmeta["lr"]), float(bmeta["weight_decay"]), float(bmeta["clip"]),
                           int(bmeta["steps"]))
    model, cfg = load_twin(model_path, dtype)
    tol = tol[cfg["precision"]]
    model.train()
    logits = model.mlm_logits(tokens, targets)
    loss = F.cross_entropy(logits, targets[targets >= 0])
    loss.backward()
    probs = torch.softmax(logits.detach().double(), -1).numpy()
    logits_diff = float(np.max(np.abs(probs - batch["mlm_probs"])))
    loss_diff = abs(loss.item() - float(batch["loss"].reshape(-1)[0]))
    grads = compare_grads(case_dir, model, batch)
    model, _ = load_twin(model_path, dtype)
    model.train()
    opt = make_adamw(model, lr, wd)
    losses = [mlm_train_step(model, opt, tokens, targets, clip) for _ in range(steps)]
    adamw_diff = float(np.max(np.abs(np.array(losses) - batch["adamw_losses"].astype(np.float64))))
    worst = max(grads, key=lambda g: g[1])
    ok = (logits_diff <= tol["logits"] and loss_diff <= tol["loss"] and worst[1] <= tol["grad"]
          and adamw_diff <= tol["adamw"])
    summary = {"logits": logits_diff, "loss": loss_diff, "eval": None, "adamw": adamw_diff,
               "worst": worst, "cfg": cfg, "losses": losses}
    if cfg["precision"] in ROUNDED:
        def c_distance(twin):
            p = torch.softmax(twin.mlm_logits(tokens, targets).detach().double(), -1).numpy()
            return float(np.max(np.abs(p - batch["mlm_probs"])))
        ok = bf16_evidence(model_path, dtype, tokens, c_distance, summary) and ok
    return ok, summary, grads


def bf16_evidence(model_path, dtype, tokens, c_distance, summary):
    """For a bf16 case: the written-out layers with float32 products against nn.TransformerEncoder
    (the twin's bf16 path is that code), and how far from the C side the same twin lands without
    the rounding, which must be several times farther than with it. Adds both to summary."""
    twin, _ = load_twin(model_path, dtype)
    twin.train()
    pad = tokens == PAD
    with torch.no_grad():
        x = twin.embed(tokens)
        own = twin.encoder(x, src_key_padding_mask=pad)
        written = twin.encode_written_out(x, pad, matmul=torch.matmul, linear=F.linear)
        keep = ~pad
        summary["written_out"] = float((own - written)[keep].abs().max())
    twin.cfg["precision"] = "fp32"
    summary["fp32_twin"] = c_distance(twin)
    return (summary["written_out"] <= BF16_WRITTEN_OUT_TOL
            and summary["logits"] * BF16_EVIDENCE_RATIO <= summary["fp32_twin"])


def check_case(case_dir, dtype, tol):
    """Compares one case; returns (ok, summary dict, per-tensor [(name, rel_err)])."""
    model_path = os.path.join(case_dir, "model.safetensors")
    batch, bmeta = st_read(os.path.join(case_dir, "batch.safetensors"))
    if "targets" in batch:
        return check_mlm_case(case_dir, model_path, batch, bmeta, dtype, tol)
    tokens = torch.from_numpy(batch["tokens"].astype(np.int64))
    labels = torch.from_numpy(batch["labels"].astype(np.int64))
    cw = batch.get("class_weights")
    cw = torch.from_numpy(cw).to(dtype) if cw is not None else None
    lr = float(bmeta["lr"])
    wd = float(bmeta["weight_decay"])
    clip = float(bmeta["clip"])
    steps = int(bmeta["steps"])

    model, cfg = load_twin(model_path, dtype)
    tol = tol[cfg["precision"]]
    eval_only = bmeta.get("eval_only", "0") == "1"
    if cfg["dropout"] != 0 and not eval_only:
        raise ValueError(f"{case_dir}: the check needs dropout 0, checkpoint has {cfg['dropout']}")

    # Eval mode: the slow path (grad enabled) and PyTorch's fast path (no_grad).
    model.eval()
    eval_diff = 0.0
    if "eval_logits" in batch:
        slow = model(tokens).detach().double().numpy()
        with torch.no_grad():
            fast = model(tokens).double().numpy()
        eval_diff = max(float(np.max(np.abs(slow - batch["eval_logits"]))),
                        float(np.max(np.abs(fast - batch["eval_logits"]))))
    if eval_only:  # dropout > 0: training-mode results depend on the random masks
        ok = eval_diff <= tol["logits"]
        return ok, {"logits": None, "loss": None, "eval": eval_diff, "adamw": None,
                    "worst": None, "cfg": cfg, "losses": []}, []

    # Training-mode forward and backward (dropout 0, so PAD zeroing is the only effect).
    model.train()
    logits = model(tokens)
    loss = loss_fn(logits, labels, cw)
    loss.backward()
    logits_diff = float(np.max(np.abs(logits.detach().double().numpy() - batch["logits"])))
    loss_diff = abs(loss.item() - float(batch["loss"].reshape(-1)[0]))

    grads = compare_grads(case_dir, model, batch)

    # AdamW from fresh weights, same lr/wd/clip; loss recorded before each update.
    # Stochastic weight averaging (--swa) as PyTorch's AveragedModel does it:
    # the weights after each step from swa_from on join the average.
    model, _ = load_twin(model_path, dtype)
    model.train()
    opt = make_adamw(model, lr, wd)
    swa_from = int(bmeta.get("swa_from", steps))
    swa_model = torch.optim.swa_utils.AveragedModel(model)
    losses = []
    for step in range(steps):
        losses.append(train_step(model, opt, tokens, labels, cw, clip))
        if step >= swa_from:
            swa_model.update_parameters(model)
    adamw_diff = float(np.max(np.abs(np.array(losses) - batch["adamw_losses"].astype(np.float64))))
    swa_diff = 0.0
    if "swa_logits" in batch:
        swa_model.eval()
        with torch.no_grad():
            swa_logits = swa_model(tokens).double().numpy()
        swa_diff = float(np.max(np.abs(swa_logits - batch["swa_logits"])))

    worst = max(grads, key=lambda g: g[1])
    ok = (logits_diff <= tol["logits"] and loss_diff <= tol["loss"] and eval_diff <= tol["logits"]
          and worst[1] <= tol["grad"] and adamw_diff <= tol["adamw"] and swa_diff <= tol.get("swa", tol["logits"]))
    summary = {"logits": logits_diff, "loss": loss_diff, "eval": eval_diff, "adamw": adamw_diff,
               "swa": swa_diff, "worst": worst, "cfg": cfg, "losses": losses}
    if cfg["precision"] in ROUNDED:
        def c_distance(twin):
            return float(np.max(np.abs(twin(tokens).detach().double().numpy() - batch["logits"])))
        ok = bf16_evidence(model_path, dtype, tokens, c_distance, summary) and ok
    return ok, summary, grads


# The bf16_ cases: both sides round every product's inputs to bfloat16 and sum in float32.
# bfloat16 keeps 8 significant bits, so its unit roundoff is u = 2^-8 = 0.0039: a product of two
# rounded inputs is off by up to (1+u)^2 - 1 ~ 2u relative, a dot product of K terms by up to
# 2u * sum|a_k b_k| (float32's own K * 2^-24 is negligible). That is how far bf16 moves a result
# from float32, and it compounds through the layers and the AdamW steps. The C side and the twin,
# though, round the same values: they differ where float32's other order of sums (about 2^-24
# relative) moves a value across a bfloat16 rounding midpoint, a chance of about 2^-24 / 2^-8 = 2^-16
# per rounded value, and then by one bfloat16 step (up to 2u relative) in that value. Over the
# check's ~10^4 rounded values a step, a few such steps are expected, each diluted in its dot
# product. The tolerances allow one full step, 2u = 2^-7, on results of order one, divided by 8,
# as the step is one term among many (K >= 16 here): logits and loss 2^-10 ~ 1e-3 absolute,
# gradients 2^-10 relative by norm (seen: logits 3e-8, gradients up to 5e-4, one flip; the twin
# without the rounding lands 7e-4..4e-3 and 7e-3..5e-2 away). The ten AdamW steps give no such
# bound: Adam's first steps move a weight by about lr whatever its gradient's size, so a flip
# in a gradient near zero moves it by up to 2 lr, and both trajectories drift apart as far as
# bf16 and float32 do (seen: 1e-3 in the losses, 9e-3 in the SWA logits; without the rounding
# 6e-3 and 2e-2). They are held to 8u = 2^-5, which catches a wrong update, not the rounding.
# So that the check sees the rounding itself, the twin with it must also land at least
# BF16_EVIDENCE_RATIO times closer to the C side's logits than the same twin without it.
# The amx_ cases: the same rounded inputs, summed on the C side as AMX's tile product sums them
# (two chains per 32 k, then added; docs/DESIGN.md §4): another order of float32 sums, as far from
# the twin's order as bf16's, so the same tolerances and the same argument hold.
ROUNDED = ("bf16", "amx")
BF16_TOL = {"logits": 2.0 ** -10, "loss": 2.0 ** -10, "grad": 2.0 ** -10, "adamw": 2.0 ** -5, "swa": 2.0 ** -5}
BF16_EVIDENCE_RATIO = 4
BF16_WRITTEN_OUT_TOL = 1e-5   # float32 rounding: the written-out layers are the layer itself


def cmd_check(args):
    dtype = {"float32": torch.float32, "float64": torch.float64}[args.dtype]
    # 10-30x the float32 rounding seen (logits 4e-7, gradients 2e-6): a planted tanh GELU or LayerNorm eps
    # fails here (README, How it is tested); AdamW keeps 1e-4, as ten pretraining steps drift by 1.5e-5.
    tol = {"fp32": {"logits": 1e-5, "loss": 1e-5, "grad": 2e-5, "adamw": 1e-4}, "bf16": BF16_TOL, "amx": BF16_TOL}
    cases = sorted(c for c in os.listdir(args.dir)
                   if os.path.isfile(os.path.join(args.dir, c, "batch.safetensors")))
    if not cases:
        print(f"twin.py: no cases in {args.dir}", file=sys.stderr)
        return 1
    torch.manual_seed(0)
    n_fail = 0
    rows = []
    print(f"twin check: {len(cases)} cases, twin in {args.dtype}; tolerances: logits/loss/adamw "
          f"{tol['fp32']['logits']:g} abs, gradients {tol['fp32']['grad']:g} relative; bf16_ and amx_ cases (bfloat16 "
          f"products on both sides): logits/loss {BF16_TOL['logits']:g}, adamw/swa {BF16_TOL['adamw']:g} abs, "
          f"gradients {BF16_TOL['grad']:g} relative, and the twin without the rounding at least "
          f"{BF16_EVIDENCE_RATIO}x farther from the C side")
    for case in cases:
        try:
            ok, s, grads = check_case(os.path.join(args.dir, case), dtype, tol)
        except Exception as e:  # a broken file fails its case; the others still run
            ok, s, grads = False, {"error": f"{type(e).__name__}: {e}"}, []
        n_fail += 0 if ok else 1
        limit = tol["fp32" if not case.startswith(("bf16_", "amx_")) else "bf16"]["grad"]
        for name, err in grads:
            flag = "" if err <= limit else "  <-- FAIL"
            print(f"  grad {case:<16} {name:<42} {err:.3e}{flag}")
        rows.append((case, ok, s))

    def num(v, width):
        return f"{'-':>{width}}" if v is None else f"{v:{width}.2e}"
    print(f"REPORT {'case':<16} {'logits_maxabs':>13} {'loss_diff':>10} {'eval_maxabs':>11} "
          f"{'adamw_maxdiff':>13} {'swa_maxabs':>10} {'worst_grad_rel':>14}  result  worst gradient")
    for case, ok, s in rows:
        if "error" in s:
            print(f"REPORT {case:<16} ERROR {s['error']}")
            continue
        worst = (s["worst"][1], s["worst"][0]) if s["worst"] else (None, "(eval only: dropout > 0)")
        print(f"REPORT {case:<16} {num(s['logits'], 13)} {num(s['loss'], 10)} {num(s['eval'], 11)} "
              f"{num(s['adamw'], 13)} {num(s.get('swa'), 10)} {num(worst[0], 14)}  {'PASS' if ok else 'FAIL'}    "
              f"{worst[1]}")
        if "fp32_twin" in s:
            farther = (f"{s['fp32_twin'] / s['logits']:.0f}x farther" if s['logits'] > 0
                       else "the twin with it lands exactly on the C side")
            print(f"REPORT {case:<16} {s['cfg']['precision']}: the twin without the rounding lands {s['fp32_twin']:.2e} "
                  f"from the C side ({farther}); written-out layers vs "
                  f"nn.TransformerEncoder {s['written_out']:.1e}")
    print(f"REPORT twin check ({args.dtype}): {len(cases) - n_fail}/{len(cases)} cases pass")
    return 1 if n_fail else 0


# ---------------------------------------------------------------- saliency

def cmd_saliency(args):
    """trace --backward's saliency by autograd: s_t = -sum_j x[t,j] dloss/dx[t,j] at the embedding
    sum x, for the loss of one label, in eval mode; one value a line, in position order."""
    dtype = {"float32": torch.float32, "float64": torch.float64}[args.dtype]
    model, _ = load_twin(args.model, dtype)
    model.eval()
    tokens = torch.tensor([[int(i) for i in args.ids.split(",")]])
    x = model.embed(tokens).detach().requires_grad_(True)
    loss = loss_fn(model(tokens, x), torch.tensor([args.label]))
    loss.backward()
    for s in (-(x * x.grad).sum(-1))[0].tolist():
        print(f"{s:.9e}")
    return 0


# ---------------------------------------------------------------- self test

def cmd_selftest(args):
    torch.manual_seed(1)
    failures = 0

    def expect(cond, what):
        nonlocal failures
        print(("ok   " if cond else "FAIL ") + what)
        failures += 0 if cond else 1

    base = {"vocab_size": 23, "max_len": 12, "d_model": 16, "heads": 4, "layers": 2, "d_ff": 40,
            "n_classes": 3, "dropout": 0.0, "activation": "relu", "norm": "post", "pool": "mean",
            "pe": "sinusoidal", "emb_scale": 4.0, "precision": "fp32"}
    tokens = torch.tensor([[2, 7, 8, 9, 3, 0, 0],
                           [2, 10, 4, 11, 12, 13, 3]])
    for norm in ("post", "pre"):
        for pool in ("mean", "cls"):
            for pe in ("sinusoidal", "learned", "none"):
                cfg = dict(base, norm=norm, pool=pool, pe=pe)
                m = Twin(cfg)
                for mode in ("train", "eval"):
                    m.train(mode == "train")
                    a = m(tokens).detach()
                    # More padding must not change the logits.
                    more = torch.cat([tokens, torch.zeros(2, 3, dtype=torch.long)], 1)
                    b = m(more).detach()
                    # Row 0 alone, cut right after [SEP], must give its logits too.
                    c = m(tokens[:1, :5]).detach()
                    expect(torch.allclose(a, b, atol=1e-5) and torch.allclose(a[:1], c, atol=1e-5),
                           f"padding-invariant logits {norm}/{pool}/{pe}/{mode}")
                names = set(m.state_dict().keys())
                expect(("encoder.norm.weight" in names) == (norm == "pre")
                       and ("pos_embedding.weight" in names) == (pe == "learned")
                       and "head.weight" in names and "embedding.weight" in names
                       and "encoder.layers.1.self_attn.in_proj_weight" in names,
                       f"state_dict names {norm}/{pe}")
                # Round trip through a safetensors file written here.
                with tempfile.TemporaryDirectory() as tmp:
                    path = os.path.join(tmp, "m.safetensors")
                    meta = {k: str(v) for k, v in cfg.items() if k != "n_classes"}
                    meta["format"] = "pt"
                    meta["labels"] = json.dumps(["a", "b", "c"])
                    st_write(path, {k: v.numpy() for k, v in m.state_dict().items()}, meta)
                    m2, cfg2 = load_twin(path)
                    m.eval(); m2.eval()
                    expect(cfg2 == cfg and torch.equal(m(tokens), m2(tokens)),
                           f"safetensors round trip {norm}/{pool}/{pe}")

    # Mean pooling: PAD positions are ignored, the mean is over the others.
    m = Twin(base).eval()
    with torch.no_grad():
        x = m.embedding(tokens) * base["emb_scale"] + m.pe_table[:tokens.shape[1]]
        h = m.encoder(x, src_key_padding_mask=tokens == 0)
        manual = torch.stack([h[0, :5].mean(0), h[1].mean(0)])
        expect(torch.allclose(m(tokens), m.head(manual), atol=1e-6), "mean pooling over non-PAD")

    # Sinusoidal table against the tutorial's exp/log form.
    pe = sinusoidal_table(12, 16)
    pos = torch.arange(12, dtype=torch.float64)[:, None]
    div = torch.exp(torch.arange(0, 16, 2, dtype=torch.float64) * (-math.log(10000.0) / 16))
    ref = torch.zeros(12, 16, dtype=torch.float64)
    ref[:, 0::2] = torch.sin(pos * div)
    ref[:, 1::2] = torch.cos(pos * div)
    expect(torch.allclose(pe.double(), ref, atol=1e-7), "sinusoidal table")

    # Masked dropout: specials kept unscaled, PAD zeroed, others dropped or scaled 1/(1-p).
    x = torch.ones(2, 7, 16)
    y = masked_dropout(x, tokens, 0.5, True)
    sp = (tokens >= 2) & (tokens <= 4)
    expect(bool((y[sp] == 1).all()) and bool((y[tokens == 0] == 0).all())
           and set(y[(tokens > 4)].unique().tolist()) <= {0.0, 2.0}, "masked dropout")
    expect(torch.equal(masked_dropout(x, tokens, 0.5, False), x), "masked dropout is identity in eval")

    # Weighted cross-entropy is sum(w_y * nll) / sum(w_y).
    lg = torch.randn(4, 3)
    lb = torch.tensor([0, 2, 2, 1])
    w = torch.tensor([0.5, 2.0, 1.25])
    nll = -F.log_softmax(lg, 1)[torch.arange(4), lb]
    expect(abs(loss_fn(lg, lb, w).item() - ((w[lb] * nll).sum() / w[lb].sum()).item()) < 1e-6,
           "weighted cross-entropy")

    # Parameter groups: decay exactly on the >= 2-dim tensors.
    m = Twin(dict(base, norm="pre", pe="learned"))
    opt = make_adamw(m, 1e-3, 0.1)
    named = dict(m.named_parameters())
    decayed = {n for n, p in named.items() if any(p is q for q in opt.param_groups[0]["params"])}
    expect(decayed == {n for n in named if n.endswith("weight") and "norm" not in n},
           "weight decay on matrices and embeddings only")
    print(f"selftest: {failures} failed")
    return 1 if failures else 0


# ---------------------------------------------------------------- tokenizers end to end

def cmd_tokenizer_check(args):
    """A bpe or ngram run of ./train against this side: scripts/bpe_ref.py
    (the tokenizers written from their descriptions) learns from the same
    training texts and must give the checkpoint's vocabulary (and merges);
    then every text is encoded in Python, run through the twin, and the
    probabilities compared with what ./train predict --probs printed."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import bpe_ref
    tensors, meta = st_read(os.path.join(args.run, "model.safetensors"))
    kind = meta.get("tokenizer")
    if kind not in ("bpe", "ngram"):
        print(f"tokenizer-check: {args.run} is neither a bpe nor an ngram run"); return 1
    train_texts = [t for t in bpe_ref.read_examples(args.train) if not t.startswith("#")]
    vocab_c = json.loads(meta["vocab"])
    if kind == "bpe":
        merges_c = [tuple(p) for p in json.loads(meta["merges"])]
        vocab_py, merges_py = bpe_ref.learn(train_texts, args.vocab_size, args.min_freq)
        same = vocab_py == vocab_c and [tuple(p) for p in merges_py] == merges_c
        encode = lambda text: bpe_ref.encode(vocab_c, merges_c, text)
        print(f"tokenizer-check: bpe vocabulary {len(vocab_c)} symbols, {len(merges_c)} merges; "
              f"identical to the Python reference: {same}")
    else:
        vocab_py = bpe_ref.ngram_learn(train_texts, args.vocab_size, args.min_freq)
        same = vocab_py == vocab_c
        encode = lambda text: bpe_ref.ngram_encode(vocab_c, text)
        print(f"tokenizer-check: ngram vocabulary {len(vocab_c)} tokens; identical to the Python reference: {same}")
    model, cfg = load_twin(os.path.join(args.run, "model.safetensors"))
    model.eval()
    texts = bpe_ref.read_examples(args.texts)
    with open(args.probs, encoding="utf-8") as f:
        rows = [line.rstrip("\n").split("\t") for line in f if line.strip()]
    labels = json.loads(meta["labels"])
    worst, pred_mismatch = 0.0, 0
    with torch.no_grad():
        for text, row in zip(texts, rows):
            ids = [CLS] + encode(text)[:cfg["max_len"] - 2] + [SEP]
            probs = torch.softmax(model(torch.tensor([ids])), dim=-1)[0].double().numpy()
            c_probs = np.array([float(x) for x in row[1:]])
            worst = max(worst, float(np.max(np.abs(probs - c_probs))))
            pred_mismatch += labels[int(np.argmax(c_probs))] != row[0]
    ok = same and len(rows) == len(texts) and worst <= args.tol and pred_mismatch == 0
    print(f"tokenizer-check: {len(texts)} texts encoded in Python and run through the twin: largest probability "
          f"difference from ./train predict --probs {worst:.2e} (tolerance {args.tol:g}); {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


def main(argv):
    ap = argparse.ArgumentParser(description="PyTorch twin of the C transformer")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("check", help="compare the C side's dumps in DIR/CASE")
    p.add_argument("dir")
    p.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    sub.add_parser("selftest", help="check the twin against itself")
    p = sub.add_parser("saliency", help="per-token gradient x input at the embedding sum, by autograd")
    p.add_argument("model", help="a model.safetensors")
    p.add_argument("--ids", required=True, help="the token ids, comma-separated, [CLS] and [SEP] included")
    p.add_argument("--label", type=int, required=True, help="the class index whose loss is differentiated")
    p.add_argument("--dtype", choices=["float32", "float64"], default="float64")
    p = sub.add_parser("bench", help="time training steps of the same model in PyTorch")
    for name, default in (("vocab", 1000), ("seq", 64), ("d-model", 128), ("heads", 4),
                          ("d-ff", 512), ("layers", 2), ("classes", 2), ("batch", 32),
                          ("threads", 1), ("steps", 20), ("warmup", 3), ("seed", 0)):
        p.add_argument("--" + name, type=int, default=default)
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--mlm", action="store_true", help="pretraining steps: masked batches, the tied MLM head")
    p.add_argument("--activation", choices=["relu", "gelu"], default="relu")
    p.add_argument("--norm", choices=["post", "pre"], default="post")
    p.add_argument("--pool", choices=["mean", "cls"], default="mean")
    p.add_argument("--pe", choices=["sinusoidal", "learned", "none"], default="sinusoidal")
    p.add_argument("--idiomatic", action="store_true",
                   help="time the model as a PyTorch user writes it (class Idiomatic), not the twin")
    p.add_argument("--inference", action="store_true", help="time forward passes under torch.no_grad")
    p.add_argument("--autocast", action="store_true", help="under torch.autocast(\"cpu\", dtype=torch.bfloat16)")
    p = sub.add_parser("tokenizer-check", help="a bpe or ngram run's tokenizer and probabilities against the Python side")
    p.add_argument("run")
    p.add_argument("train", help="the training file the run learned its vocabulary from (all of it: --val FILE)")
    p.add_argument("texts", help="one text a line (a TSV's text after the TAB)")
    p.add_argument("probs", help="./train predict --probs output for those texts")
    p.add_argument("--vocab-size", type=int, required=True)
    p.add_argument("--min-freq", type=int, default=1)
    p.add_argument("--tol", type=float, default=2e-6)
    p = sub.add_parser("matmul-peak", help="best float32 matrix-product GFLOP/s")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--sizes", type=int, nargs="+", default=[1024, 1536, 2048])
    p.add_argument("--reps", type=int, default=4)
    p.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32")
    args = ap.parse_args(argv)
    if args.cmd in ("bench", "matmul-peak"):   # the timings live in twin_bench.py
        import twin_bench
        return {"bench": twin_bench.cmd_bench, "matmul-peak": twin_bench.cmd_matmul_peak}[args.cmd](args)
    return {"check": cmd_check, "selftest": cmd_selftest, "saliency": cmd_saliency,
            "tokenizer-check": cmd_tokenizer_check}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
