"""A GPU-bound LLM fine-tune, recorded phase by phase (issue 20): a small GPT-like causal LM (pre-norm
decoder blocks, no transformers package), a token dataset written as a binary file (uint16 tokens) and
staged from a "shared" folder to a local one, a DataLoader with 2 workers reading windows of it, AdamW
with bf16 autocast, validation every --val-every steps and checkpoints (model + optimizer, fsync'd) every
--ckpt-every steps. Runs on CUDA when there is one (the recording), on the CPU otherwise (tests).

    python3 llm_finetune_job.py --out DIR [--layers L] [--d D] [--seq T] [--batch B] [--train-seconds S]

Writes DIR/recording/ (dvfs_sim.record layout, lifecycle.json and host.csv included) and DIR/job.json.
"""
import argparse
import json
import math
import os
import shutil
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from dvfs_sim.record import Recorder


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.n1(x)).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        if hasattr(F, "scaled_dot_product_attention"):
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:  # PyTorch < 2.0 (Debian's 1.13, the CPU tests)
            s = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
            s = s.masked_fill(torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1), float("-inf"))
            a = s.softmax(-1) @ v
        a = a.transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(a)
        return x + self.out(F.gelu(self.fc(self.n2(x)), approximate="tanh"))


class GPT(nn.Module):
    def __init__(self, vocab, d, layers, heads, seq):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(seq, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.head.weight = self.tok.weight
        nn.init.normal_(self.tok.weight, std=0.02)

    def forward(self, idx):
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.norm(x))


class Windows(torch.utils.data.Dataset):
    def __init__(self, path, seq, start, count):
        self.path, self.seq, self.start, self.count, self.data = path, seq, start, count, None

    def __len__(self):
        return self.count

    def __getitem__(self, i):
        if self.data is None:  # opened in each worker
            self.data = np.memmap(self.path, dtype=np.uint16, mode="r")
        o = (self.start + i) * self.seq
        w = torch.from_numpy(self.data[o:o + self.seq + 1].astype(np.int64))
        return w[:-1], w[1:]


def write_tokens(path, n_tokens, vocab):
    rng = np.random.default_rng(0)
    # a Zipf-like token stream with local repeats (something a model can learn)
    with open(path, "wb") as f:
        left = n_tokens
        while left > 0:
            n = min(left, 1 << 24)
            base = (rng.zipf(1.2, n) % vocab).astype(np.uint16)
            base[1::2] = (base[0::2][: len(base[1::2])] * 7 + 3) % vocab
            f.write(base.tobytes())
            left -= n


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--vocab", type=int, default=32000)
    p.add_argument("--d", type=int, default=1024)
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--seq", type=int, default=1024)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--tokens", type=int, default=100_000_000)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--train-seconds", type=float, default=85.0)
    p.add_argument("--val-every", type=int, default=250)
    p.add_argument("--val-batches", type=int, default=20)
    p.add_argument("--ckpt-every", type=int, default=500)
    p.add_argument("--steps", default="20:3")
    p.add_argument("--idle-s", type=float, default=2.0)
    a = p.parse_args()
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    shared, local = os.path.join(a.out, "shared"), os.path.join(a.out, "local")
    os.makedirs(shared, exist_ok=True)
    os.makedirs(os.path.join(local, "checkpoints"), exist_ok=True)
    warm, prof = (int(x) for x in a.steps.split(":"))
    rec = Recorder(os.path.join(a.out, "recording"), warmup=warm, profiled=prof, idle_s=a.idle_s,
                   command="llm_finetune_job.py " + " ".join(sys.argv[1:]), nvml_module=os.environ.get("DVFS_NVML", "pynvml"))
    job = {"script": "llm_finetune_job.py", "args": vars(a), "device": dev, "torch": torch.__version__, "validations": [], "checkpoints": []}
    t_job = time.time()
    with rec:
        src, dst = os.path.join(shared, "tokens.bin"), os.path.join(local, "tokens.bin")
        with rec.phase("generate token file (not part of the job: makes its input)", "setup"):
            write_tokens(src, a.tokens, a.vocab)
        with rec.phase("staging copy shared -> local", "staging"):
            shutil.copyfile(src, dst)
            os.sync()
        job["dataset_bytes"] = os.path.getsize(dst)
        windows = a.tokens // a.seq - 1
        n_val = a.val_batches * a.batch
        with rec.phase("model set-up", "setup"):
            torch.manual_seed(0)
            model = GPT(a.vocab, a.d, a.layers, a.heads, a.seq).to(dev)
            decay = [p_ for n, p_ in model.named_parameters() if p_.dim() >= 2]
            other = [p_ for n, p_ in model.named_parameters() if p_.dim() < 2]
            opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": other, "weight_decay": 0.0}],
                                    lr=3e-4, betas=(0.9, 0.95), **({"fused": True} if dev == "cuda" else {}))
            tr = torch.utils.data.DataLoader(Windows(dst, a.seq, n_val, windows - n_val), batch_size=a.batch, shuffle=True,
                                             num_workers=a.workers, pin_memory=dev == "cuda", drop_last=True,
                                             persistent_workers=a.workers > 0)
            va = torch.utils.data.DataLoader(Windows(dst, a.seq, 0, n_val), batch_size=a.batch, num_workers=a.workers)
        job["parameters"] = sum(p_.numel() for p_ in model.parameters())
        rec.install_lifecycle_hooks()
        amp = torch.autocast(dev, dtype=torch.bfloat16)
        t_train, step, done = time.time(), 0, False
        model.train()
        while not done:
            with rec.phase("training", "train"):
                for x, y in tr:
                    x, y = x.to(dev, non_blocking=True), y.to(dev, non_blocking=True)
                    lr = 3e-4 * min(1.0, (step + 1) / 50)
                    for g in opt.param_groups:
                        g["lr"] = lr
                    with amp:
                        loss = F.cross_entropy(model(x).float().view(-1, a.vocab), y.view(-1))
                    opt.zero_grad(set_to_none=True)
                    loss.backward()
                    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                    opt.step()
                    rec.step()
                    step += 1
                    done = time.time() - t_train >= a.train_seconds
                    if done or step % a.val_every == 0 or step % a.ckpt_every == 0:
                        break
                if dev == "cuda":
                    torch.cuda.synchronize()
            if step % a.val_every == 0 or done:
                model.eval()
                tot = n = 0
                with torch.no_grad(), amp:
                    for x, y in va:
                        out = model(x.to(dev)).float()
                        tot += F.cross_entropy(out.view(-1, a.vocab), y.to(dev).view(-1), reduction="sum").item()
                        n += y.numel()
                model.train()
                job["validations"].append({"step": step, "val_loss": tot / n, "ppl": math.exp(min(20, tot / n))})
                print(f"step {step}: loss {float(loss):.3f} val {tot / n:.3f}", flush=True)
            if step % a.ckpt_every == 0 or done:
                with rec.phase(f"checkpoint step {step}", "checkpoint"):
                    path = os.path.join(local, "checkpoints", f"step{step}.pt")
                    with open(path, "wb") as f:
                        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step}, f)
                        f.flush()
                        os.fsync(f.fileno())
                job["checkpoints"].append({"step": step, "bytes": os.path.getsize(path)})
    job["steps"] = step
    job["wall_s"] = time.time() - t_job
    with open(os.path.join(a.out, "job.json"), "w") as f:
        json.dump(job, f, indent=1)


if __name__ == "__main__":
    main()
