#!/usr/bin/python3
"""Reference implementation of the example GPT character model in PyTorch.

An independent implementation of what FORMATS.md describes -- the model,
the loss and the optimizer (in float64), and how the trainer makes its
batches and initial parameters -- used to check the C trainer
(train_gpt.c).

Subcommands:

  batches TEXT OUT --steps S --batch B --seq T [--seed N] [--lr LR]
                   [--warmup W]
      The training batches and learning rates of S steps, as the trainer
      makes them from TEXT ("-": the generated corpus), written to OUT in
      the batch format.

  init TEXT OUT --layers L --embd C --heads H --seq T [--seed N]
      The initial parameters of a model on TEXT's vocabulary ("-": the
      generated corpus), written to OUT as a checkpoint of 0 steps.

  grads CKPT BATCH OUT
      Loss and gradient of every parameter for the first step of BATCH at
      the parameters of CKPT, written to OUT in the gradient format.

  train CKPT BATCH OUT [--steps N] [--beta1 B1] [--beta2 B2] [--eps E]
                       [--weight-decay WD] [--clip MAXNORM]
      Train from CKPT on the steps of BATCH (or the first N), with gradient
      clipping and AdamW; OUT gets one line per step, the loss before that
      step's update ("%.9g").

  compare CKPT REF_GRAD TEST_GRAD [--rtol R] [--loss-tol LT]
      Compare two gradient files tensor by tensor (relative L2 error) and
      their losses; exit status 1 on any failure.

  compare-losses REF_TXT TEST_TXT [--rtol R]
      Compare two loss files line by line; exit status 1 on any failure.

Any unreadable or malformed input file is reported in one line on stderr
and gives exit status 2.
"""

import argparse
import math
import struct
import sys
from array import array

import torch
import torch.nn.functional as F

CKPT_MAGIC = b"CCGPTCK1"
CKPT_VERSION = 1
BATCH_MAGIC = b"CCGPTBT1"
GRAD_MAGIC = b"CCGPTGR1"

CKPT_HEADER = struct.Struct("<8s8IQ")   # magic, version, V C L H T, steps, reserved, P
BATCH_HEADER = struct.Struct("<8s4I")   # magic, S, B, T, reserved
GRAD_HEADER = struct.Struct("<8sdQ")    # magic, loss, P

LN_EPS = 1e-5

# The 12 tensors of one block, in file order, with their shapes in terms of C.
BLOCK_TENSORS = (
    ("ln1_w", lambda C: (C,)),
    ("ln1_b", lambda C: (C,)),
    ("attn_w", lambda C: (3 * C, C)),
    ("attn_b", lambda C: (3 * C,)),
    ("proj_w", lambda C: (C, C)),
    ("proj_b", lambda C: (C,)),
    ("ln2_w", lambda C: (C,)),
    ("ln2_b", lambda C: (C,)),
    ("fc_w", lambda C: (4 * C, C)),
    ("fc_b", lambda C: (4 * C,)),
    ("fcproj_w", lambda C: (C, 4 * C)),
    ("fcproj_b", lambda C: (C,)),
)


class InputError(Exception):
    """A problem with an input or output file: reported in one line, exit 2."""

    def __init__(self, path, what):
        super().__init__(f"{path}: {what}")


# ---------------------------------------------------------------------------
# Binary helpers (little-endian on disk, whatever the host's byte order)
# ---------------------------------------------------------------------------

def fnv1a64(data):
    """FNV-1a 64-bit hash of a bytes-like object."""
    h = 0xCBF29CE484222325
    prime = 0x100000001B3
    mask = 0xFFFFFFFFFFFFFFFF
    for byte in data:
        h = ((h ^ byte) * prime) & mask
    return h


def tensor_from_le_bytes(data, typecode, torch_dtype):
    """Little-endian values of array typecode (f32 "f", f64 "d", i32 "i") as a new tensor."""
    arr = array(typecode)
    assert arr.itemsize == {"f": 4, "d": 8, "i": 4}[typecode]
    arr.frombytes(data)
    if sys.byteorder != "little":
        arr.byteswap()
    if len(arr) == 0:
        return torch.zeros(0, dtype=torch_dtype)
    return torch.frombuffer(arr, dtype=torch_dtype).clone()


def f32_bytes(tensor):
    """A tensor's values as little-endian float32 bytes, flattened."""
    flat = tensor.detach().reshape(-1).to(torch.float32)
    arr = array("f", bytes(4 * flat.numel()))
    if flat.numel():
        torch.frombuffer(arr, dtype=torch.float32).copy_(flat)
    if sys.byteorder != "little":
        arr.byteswap()
    return arr.tobytes()


def read_file(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise InputError(path, f"cannot read: {e.strerror}") from None


def write_file(path, data):
    try:
        with open(path, "wb") as f:
            f.write(data)
    except OSError as e:
        raise InputError(path, f"cannot write: {e.strerror}") from None


def f32(x):
    """x rounded to float32, as a Python float."""
    return array("f", [x])[0]


# ---------------------------------------------------------------------------
# Model configuration and parameters
# ---------------------------------------------------------------------------

class Config:
    def __init__(self, V, C, L, H, T):
        self.V, self.C, self.L, self.H, self.T = V, C, L, H, T
        self.hs = C // H

    def param_specs(self):
        """(name, shape) of every parameter tensor, in file order."""
        C = self.C
        specs = [("wte", (self.V, C)), ("wpe", (self.T, C))]
        for layer in range(self.L):
            specs += [(f"l{layer}.{name}", shape(C)) for name, shape in BLOCK_TENSORS]
        specs += [("lnf_w", (C,)), ("lnf_b", (C,))]
        return specs

    def num_params(self):
        return sum(math.prod(shape) for _, shape in self.param_specs())


class Checkpoint:
    def __init__(self, path, config, steps, vocab, params):
        self.path = path
        self.config = config
        self.steps = steps      # training steps done (informational)
        self.vocab = vocab      # byte value of each token
        self.params = params    # float32 tensors, in file order


def load_checkpoint(path):
    data = read_file(path)
    if len(data) < CKPT_HEADER.size:
        raise InputError(path, f"truncated: {len(data)} bytes, shorter than the "
                               f"{CKPT_HEADER.size}-byte checkpoint header")
    magic, version, V, C, L, H, T, steps, _reserved, P = CKPT_HEADER.unpack_from(data)
    if magic != CKPT_MAGIC:
        raise InputError(path, f"bad magic {magic!r}, expected {CKPT_MAGIC!r} (not a checkpoint)")
    if version != CKPT_VERSION:
        raise InputError(path, f"unsupported checkpoint version {version}, expected {CKPT_VERSION}")
    if min(V, C, L, H, T) == 0:
        raise InputError(path, f"bad configuration V={V} C={C} L={L} H={H} T={T}: "
                               "every size must be positive")
    if C % H:
        raise InputError(path, f"bad configuration: C={C} not divisible by H={H}")
    config = Config(V, C, L, H, T)
    expected_p = config.num_params()
    if P != expected_p:
        raise InputError(path, f"size mismatch: header says P={P} parameters, "
                               f"V={V} C={C} L={L} H={H} T={T} needs {expected_p}")
    vocab_bytes = (V + 3) // 4 * 4
    params_off = CKPT_HEADER.size + vocab_bytes
    hash_off = params_off + 4 * P
    expected_len = hash_off + 8
    if len(data) != expected_len:
        what = "truncated" if len(data) < expected_len else "size mismatch"
        raise InputError(path, f"{what}: {len(data)} bytes, expected {expected_len} "
                               f"for V={V} and P={P}")
    (stored_hash,) = struct.unpack_from("<Q", data, hash_off)
    actual_hash = fnv1a64(memoryview(data)[:hash_off])
    if stored_hash != actual_hash:
        raise InputError(path, f"bad hash: stored {stored_hash:016x}, "
                               f"contents hash to {actual_hash:016x} (corrupt file)")
    vocab = bytes(data[CKPT_HEADER.size:CKPT_HEADER.size + V])
    flat = tensor_from_le_bytes(data[params_off:hash_off], "f", torch.float32)
    params, off = [], 0
    for _, shape in config.param_specs():
        n = math.prod(shape)
        params.append(flat[off:off + n].reshape(shape).clone())
        off += n
    return Checkpoint(path, config, steps, vocab, params)


def write_checkpoint(path, config, steps, vocab, flat_params):
    """A checkpoint of float32 values flat_params (an array("f"), file order)."""
    P = config.num_params()
    assert len(flat_params) == P and len(vocab) == config.V
    header = CKPT_HEADER.pack(CKPT_MAGIC, CKPT_VERSION, config.V, config.C, config.L, config.H,
                              config.T, steps, 0, P)
    values = array("f", flat_params)
    if sys.byteorder != "little":
        values.byteswap()
    body = header + vocab + bytes((config.V + 3) // 4 * 4 - config.V) + values.tobytes()
    write_file(path, body + struct.pack("<Q", fnv1a64(body)))


# ---------------------------------------------------------------------------
# The trainer's data and initialisation (FORMATS.md: Data, Initialisation)
# ---------------------------------------------------------------------------

MASK64 = 0xFFFFFFFFFFFFFFFF


class SplitMix64:
    """The trainer's random numbers: splitmix64 from a 64-bit state."""

    def __init__(self, state):
        self.state = state & MASK64

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    def unit(self):
        return (self.next() >> 11) * 2.0 ** -53

    def normal(self):
        u1 = self.unit()
        u2 = self.unit()
        u1 = max(u1, 1e-300)
        return math.sqrt(-2.0 * math.log(u1)) * math.cos(6.283185307179586 * u2)


def generated_corpus():
    """The text the trainer trains on without --data."""
    rng = SplitMix64(12345)
    tails = (".", " today.", " at night.", " again.", " in the garden.", " with joy.")
    objects = ("the moon", "a red ball", "the river", "her brother", "the small house", "a song",
               "the sea", "bread")
    verbs = ("sees", "likes", "follows", "finds", "hears", "helps", "calls", "loves")
    subjects = ("the cat", "a dog", "the old man", "my friend", "the bird", "a child", "the queen",
                "our king")
    parts, n = [], 0
    while n < 200000:
        end = "\n" if rng.next() % 5 == 0 else " "
        tail = tails[rng.next() % 6]
        obj = objects[rng.next() % 8]
        verb = verbs[rng.next() % 8]
        subject = subjects[rng.next() % 8]
        sentence = f"{subject} {verb} {obj}{tail}{end}"
        parts.append(sentence)
        n += len(sentence)
    return "".join(parts).encode()


def read_text(path):
    return generated_corpus() if path == "-" else read_file(path)


def vocabulary(text):
    """The byte values in the text, in increasing order: token i is the i-th."""
    return bytes(sorted(set(text)))


def learning_rate(step, lr, warmup, steps):
    """The learning rate of a step (from 0), as the trainer uses it (float32)."""
    if step < warmup:
        return f32(lr * (step + 1) / warmup)
    if steps <= warmup:
        return f32(lr)
    frac = (step - warmup) / (steps - warmup)
    return f32(lr * (0.1 + 0.45 * (1.0 + math.cos(math.pi * frac))))


def make_batch(tokens, lo, hi, seed, step, validation, B, T):
    """Inputs and targets ([B*T] each, row-major [B][T]) of a step from tokens[lo:hi]."""
    rng = SplitMix64(seed * 0x9E3779B97F4A7C15 + step * 0xD1B54A32D192ED03
                     + (0x5555 if validation else 0))
    inputs, targets = [], []
    for _ in range(B):
        off = lo + rng.next() % (hi - lo - T - 1)
        inputs += tokens[off:off + T]
        targets += tokens[off + 1:off + T + 1]
    return inputs, targets


def init_params(config, seed):
    """The initial parameters, flat in file order, as an array("f")."""
    rng = SplitMix64(seed * 0x2545F4914F6CDD1D + 17)
    values = array("f")
    for name, shape in config.param_specs():
        leaf = name.split(".")[-1]
        n = math.prod(shape)
        if leaf.startswith("ln"):
            values.extend([1.0 if leaf.endswith("_w") else 0.0] * n)
        elif len(shape) == 1:
            values.extend([0.0] * n)
        else:
            sd = 0.02 / math.sqrt(2 * config.L) if leaf in ("proj_w", "fcproj_w") else 0.02
            values.extend(sd * rng.normal() for _ in range(n))
    return values


# ---------------------------------------------------------------------------
# Batches
# ---------------------------------------------------------------------------

class Step:
    def __init__(self, lr, inputs, targets):
        self.lr = lr            # learning rate (float)
        self.inputs = inputs    # int64 [B][T]
        self.targets = targets  # int64 [B][T]


def load_batch(path, config):
    """The steps of a batch file, checked against the model configuration."""
    data = read_file(path)
    if len(data) < BATCH_HEADER.size:
        raise InputError(path, f"truncated: {len(data)} bytes, shorter than the "
                               f"{BATCH_HEADER.size}-byte batch header")
    magic, S, B, T, _reserved = BATCH_HEADER.unpack_from(data)
    if magic != BATCH_MAGIC:
        raise InputError(path, f"bad magic {magic!r}, expected {BATCH_MAGIC!r} (not a batch file)")
    if min(S, B, T) == 0:
        raise InputError(path, f"bad sizes S={S} B={B} T={T}: every size must be positive")
    if T > config.T:
        raise InputError(path, f"size mismatch: sequences of T={T} positions, "
                               f"the model's context is T={config.T}")
    step_bytes = 8 + 2 * 4 * B * T
    expected_len = BATCH_HEADER.size + S * step_bytes
    if len(data) != expected_len:
        what = "truncated" if len(data) < expected_len else "size mismatch"
        raise InputError(path, f"{what}: {len(data)} bytes, expected {expected_len} "
                               f"for S={S} B={B} T={T}")
    steps = []
    for s in range(S):
        off = BATCH_HEADER.size + s * step_bytes
        (lr,) = struct.unpack_from("<d", data, off)
        toks = tensor_from_le_bytes(data[off + 8:off + step_bytes], "i", torch.int32)
        toks = toks.to(torch.int64).reshape(2, B, T)
        bad = (toks < 0) | (toks >= config.V)
        if bool(bad.any()):
            which, b, t = (int(i) for i in bad.nonzero()[0])
            kind = ("input", "target")[which]
            raise InputError(path, f"step {s}: {kind} token {int(toks[which, b, t])} at "
                                   f"[{b}][{t}] outside the vocabulary 0..{config.V - 1}")
        if not math.isfinite(lr):
            raise InputError(path, f"step {s}: learning rate {lr} is not finite")
        steps.append(Step(lr, toks[0], toks[1]))
    return steps


def write_batch(path, B, T, steps):
    """steps: (lr, inputs, targets) per step, each [B*T]."""
    out = [BATCH_HEADER.pack(BATCH_MAGIC, len(steps), B, T, 0)]
    for lr, inputs, targets in steps:
        toks = array("i", inputs + targets)
        if sys.byteorder != "little":
            toks.byteswap()
        out.append(struct.pack("<d", lr) + toks.tobytes())
    write_file(path, b"".join(out))


# ---------------------------------------------------------------------------
# Gradient files
# ---------------------------------------------------------------------------

def write_grad(path, loss, grads):
    P = sum(g.numel() for g in grads)
    body = b"".join(f32_bytes(g) for g in grads)
    write_file(path, GRAD_HEADER.pack(GRAD_MAGIC, float(loss), P) + body)


def load_grad(path, config):
    """(loss, list of float64 gradient tensors in parameter order)."""
    data = read_file(path)
    if len(data) < GRAD_HEADER.size:
        raise InputError(path, f"truncated: {len(data)} bytes, shorter than the "
                               f"{GRAD_HEADER.size}-byte gradient header")
    magic, loss, P = GRAD_HEADER.unpack_from(data)
    if magic != GRAD_MAGIC:
        raise InputError(path, f"bad magic {magic!r}, expected {GRAD_MAGIC!r} (not a gradient file)")
    expected_p = config.num_params()
    if P != expected_p:
        raise InputError(path, f"size mismatch: P={P} gradients, the checkpoint has "
                               f"{expected_p} parameters")
    expected_len = GRAD_HEADER.size + 4 * P
    if len(data) != expected_len:
        what = "truncated" if len(data) < expected_len else "size mismatch"
        raise InputError(path, f"{what}: {len(data)} bytes, expected {expected_len} for P={P}")
    flat = tensor_from_le_bytes(data[GRAD_HEADER.size:], "f", torch.float32).to(torch.float64)
    grads, off = [], 0
    for _, shape in config.param_specs():
        n = math.prod(shape)
        grads.append(flat[off:off + n].reshape(shape))
        off += n
    return loss, grads


# ---------------------------------------------------------------------------
# The model (plain tensor code, as written in FORMATS.md)
# ---------------------------------------------------------------------------

def forward_loss(config, params, inputs, targets):
    """Mean cross-entropy over all B*T positions.

    params: tensors in file order; inputs, targets: int64 [B][T].
    """
    C, H, hs, L = config.C, config.H, config.hs, config.L
    B, T = inputs.shape
    wte, wpe = params[0], params[1]

    x = wte[inputs] + wpe[:T]                                   # [B][T][C]
    causal = torch.ones(T, T, dtype=torch.bool).tril()          # key <= query
    for layer in range(L):
        (ln1_w, ln1_b, attn_w, attn_b, proj_w, proj_b,
         ln2_w, ln2_b, fc_w, fc_b, fcproj_w, fcproj_b) = params[2 + 12 * layer:2 + 12 * layer + 12]

        a = F.layer_norm(x, (C,), ln1_w, ln1_b, eps=LN_EPS)
        qkv = a @ attn_w.T + attn_b                              # [B][T][3C]
        q, k, v = qkv.split(C, dim=-1)
        # Head h uses columns h*hs .. h*hs+hs-1 of each of q, k, v.
        q = q.reshape(B, T, H, hs).transpose(1, 2)               # [B][H][T][hs]
        k = k.reshape(B, T, H, hs).transpose(1, 2)
        v = v.reshape(B, T, H, hs).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(hs)          # [B][H][T][T]
        att = att.masked_fill(~causal, float("-inf"))
        att = torch.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, C)           # heads concatenated
        x = x + y @ proj_w.T + proj_b

        m = F.layer_norm(x, (C,), ln2_w, ln2_b, eps=LN_EPS)
        u = F.gelu(m @ fc_w.T + fc_b, approximate="tanh")        # [B][T][4C]
        x = x + u @ fcproj_w.T + fcproj_b

    lnf_w, lnf_b = params[2 + 12 * L], params[2 + 12 * L + 1]
    xf = F.layer_norm(x, (C,), lnf_w, lnf_b, eps=LN_EPS)
    logits = xf @ wte.T                                          # tied head, [B][T][V]
    return F.cross_entropy(logits.reshape(B * T, config.V), targets.reshape(B * T),
                           reduction="mean")


def leaf_params(ckpt):
    """The checkpoint's parameters as float64 leaf tensors requiring grad."""
    return [p.to(torch.float64).requires_grad_(True) for p in ckpt.params]


# ---------------------------------------------------------------------------
# Subcommands
# ---------------------------------------------------------------------------

def text_tokens(path, T):
    """The text's vocabulary and tokens; the text must hold 10 (T + 1) bytes."""
    text = read_text(path)
    if len(text) < 10 * (T + 1):
        raise InputError(path, f"{len(text)} bytes is too little text for a context of {T}")
    vocab = vocabulary(text)
    index = {byte: i for i, byte in enumerate(vocab)}
    return vocab, [index[byte] for byte in text]


def cmd_batches(args):
    vocab, tokens = text_tokens(args.text, args.seq)
    n_train = len(tokens) - len(tokens) // 10
    steps = []
    for s in range(args.steps):
        inputs, targets = make_batch(tokens, 0, n_train, args.seed, s, False, args.batch, args.seq)
        steps.append((learning_rate(s, args.lr, args.warmup, args.steps), inputs, targets))
    write_batch(args.out, args.batch, args.seq, steps)
    print(f"batches: {args.steps} steps of {args.batch} x {args.seq} tokens, vocabulary {len(vocab)} "
          f"-> {args.out}")
    return 0


def cmd_init(args):
    vocab, _ = text_tokens(args.text, args.seq)
    if args.embd % args.heads:
        raise InputError("--embd", f"the width {args.embd} does not divide into {args.heads} heads")
    config = Config(len(vocab), args.embd, args.layers, args.heads, args.seq)
    write_checkpoint(args.out, config, 0, vocab, init_params(config, args.seed))
    print(f"init: {config.num_params()} parameters -> {args.out}")
    return 0


def cmd_grads(args):
    ckpt = load_checkpoint(args.ckpt)
    steps = load_batch(args.batch, ckpt.config)
    params = leaf_params(ckpt)
    loss = forward_loss(ckpt.config, params, steps[0].inputs, steps[0].targets)
    loss.backward()
    write_grad(args.out, loss.item(), [p.grad for p in params])
    print(f"grads: loss {loss.item():.9g}, {ckpt.config.num_params()} parameters -> {args.out}")
    return 0


def cmd_train(args):
    ckpt = load_checkpoint(args.ckpt)
    steps = load_batch(args.batch, ckpt.config)
    n = len(steps) if args.steps is None else args.steps
    if not 1 <= n <= len(steps):
        raise InputError(args.batch, f"--steps {n} asked for, the file has {len(steps)} steps")

    params = leaf_params(ckpt)
    decay = [p for p in params if p.dim() == 2]      # wte, wpe, attn_w, proj_w, fc_w, fcproj_w
    no_decay = [p for p in params if p.dim() != 2]   # layernorm weights and all biases
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": args.weight_decay},
         {"params": no_decay, "weight_decay": 0.0}],
        lr=steps[0].lr, betas=(args.beta1, args.beta2), eps=args.eps)

    lines = []
    for s in range(n):
        step = steps[s]
        opt.zero_grad(set_to_none=True)
        loss = forward_loss(ckpt.config, params, step.inputs, step.targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, args.clip)
        for group in opt.param_groups:
            group["lr"] = step.lr
        opt.step()
        lines.append("%.9g\n" % loss.item())

    write_file(args.out, "".join(lines).encode())
    print(f"train: {n} steps, loss {lines[0].strip()} -> {lines[-1].strip()}, written to {args.out}")
    return 0


def cmd_compare(args):
    ckpt = load_checkpoint(args.ckpt)
    ref_loss, ref = load_grad(args.ref, ckpt.config)
    test_loss, test = load_grad(args.test, ckpt.config)

    failed = 0
    names = [name for name, _ in ckpt.config.param_specs()]
    width = max(len(name) for name in names)
    print(f"{'tensor':<{width}}  {'shape':<10}  {'max|ref|':>11}  {'max|diff|':>11}  {'rel err':>11}")
    for name, r, t in zip(names, ref, test):
        diff = t - r
        ref_norm = float(r.norm())
        rel = float(diff.norm()) / max(ref_norm, 1e-12)
        max_ref = float(r.abs().max()) if r.numel() else 0.0
        max_diff = float(diff.abs().max()) if diff.numel() else 0.0
        ok = rel <= args.rtol          # false for NaN as well
        failed += not ok
        shape = "x".join(str(d) for d in r.shape)
        print(f"{name:<{width}}  {shape:<10}  {max_ref:11.4e}  {max_diff:11.4e}  {rel:11.4e}"
              + ("" if ok else "  FAIL"))

    loss_diff = abs(test_loss - ref_loss)
    loss_ok = loss_diff <= args.loss_tol * max(1.0, abs(ref_loss))
    print(f"loss: |diff| {loss_diff:.4e}, tolerance {args.loss_tol * max(1.0, abs(ref_loss)):.4e}"
          + ("" if loss_ok else "  FAIL"))
    print(f"compare: {len(names)} tensors, {failed} failed, "
          f"loss ref {ref_loss:.9g} test {test_loss:.9g}")
    return 0 if failed == 0 and loss_ok else 1


def load_losses(path):
    text = read_file(path)
    try:
        lines = text.decode("ascii").splitlines()
    except UnicodeDecodeError:
        raise InputError(path, "not a text file of losses") from None
    losses = []
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            losses.append(float(line))
        except ValueError:
            raise InputError(path, f"line {i}: {line.strip()!r} is not a number") from None
    if not losses:
        raise InputError(path, "no losses in the file")
    return losses


def cmd_compare_losses(args):
    ref = load_losses(args.ref)
    test = load_losses(args.test)
    if len(ref) != len(test):
        raise InputError(args.test, f"size mismatch: {len(test)} losses, "
                                    f"{args.ref} has {len(ref)}")
    failed = 0
    for s, (a, b) in enumerate(zip(ref, test)):
        ok = abs(a - b) <= args.rtol * max(1.0, abs(a))   # false for NaN as well
        failed += not ok
        print(f"step {s}: ref {a:.9g} test {b:.9g}" + ("" if ok else "  FAIL"))
    print(f"compare-losses: {len(ref)} steps, {failed} failed")
    return 0 if failed == 0 else 1


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="PyTorch reference for the example GPT trainer (float64).")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("batches", help="the trainer's training batches of a text")
    p.add_argument("text", metavar="TEXT", help='a text file, or "-" for the generated corpus')
    p.add_argument("out", metavar="OUT", help="batch file to write")
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--batch", type=int, required=True, help="sequences per step")
    p.add_argument("--seq", type=int, required=True, help="positions per sequence (T)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--lr", type=float, default=3e-3, help="peak learning rate")
    p.add_argument("--warmup", type=int, default=10)
    p.set_defaults(func=cmd_batches)

    p = sub.add_parser("init", help="the trainer's initial parameters, as a checkpoint")
    p.add_argument("text", metavar="TEXT", help='a text file, or "-" for the generated corpus')
    p.add_argument("out", metavar="OUT", help="checkpoint to write")
    p.add_argument("--layers", type=int, required=True)
    p.add_argument("--embd", type=int, required=True)
    p.add_argument("--heads", type=int, required=True)
    p.add_argument("--seq", type=int, required=True)
    p.add_argument("--seed", type=int, default=1)
    p.set_defaults(func=cmd_init)

    p = sub.add_parser("grads", help="loss and gradients of the first step of a batch file")
    p.add_argument("ckpt", metavar="CKPT")
    p.add_argument("batch", metavar="BATCH")
    p.add_argument("out", metavar="OUT", help="gradient file to write")
    p.set_defaults(func=cmd_grads)

    p = sub.add_parser("train", help="train with clipping and AdamW, write the losses")
    p.add_argument("ckpt", metavar="CKPT")
    p.add_argument("batch", metavar="BATCH")
    p.add_argument("out", metavar="OUT", help="text file, one loss per step")
    p.add_argument("--steps", type=int, metavar="N", help="only the first N steps")
    p.add_argument("--beta1", type=float, default=0.9)
    p.add_argument("--beta2", type=float, default=0.95)
    p.add_argument("--eps", type=float, default=1e-8)
    p.add_argument("--weight-decay", type=float, default=0.1,
                   help="on the two-dimensional tensors only (default 0.1)")
    p.add_argument("--clip", type=float, default=1.0, help="max global gradient norm")
    p.set_defaults(func=cmd_train)

    p = sub.add_parser("compare", help="compare two gradient files")
    p.add_argument("ckpt", metavar="CKPT")
    p.add_argument("ref", metavar="REF_GRAD")
    p.add_argument("test", metavar="TEST_GRAD")
    p.add_argument("--rtol", type=float, default=1e-3,
                   help="largest relative L2 error of a tensor (default 1e-3)")
    p.add_argument("--loss-tol", type=float, default=1e-4,
                   help="largest |loss diff| / max(1, |ref loss|) (default 1e-4)")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("compare-losses", help="compare two loss files")
    p.add_argument("ref", metavar="REF_TXT")
    p.add_argument("test", metavar="TEST_TXT")
    p.add_argument("--rtol", type=float, default=1e-3,
                   help="largest |diff| / max(1, |ref|) per step (default 1e-3)")
    p.set_defaults(func=cmd_compare_losses)

    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except InputError as e:
        print(f"reference.py: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
