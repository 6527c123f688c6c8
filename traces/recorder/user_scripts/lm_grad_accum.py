# Fine-tune a small causal LM, the way a Hugging Face Trainer loop does it, written in plain PyTorch:
# gradient accumulation, AdamW with weight decay groups, linear warm-up/decay schedule, grad clipping,
# bf16 autocast, logging every few optimizer steps.
import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

p = argparse.ArgumentParser()
p.add_argument("--layers", type=int, default=12)
p.add_argument("--hidden", type=int, default=1024)
p.add_argument("--heads", type=int, default=16)
p.add_argument("--seq-len", type=int, default=1024)
p.add_argument("--vocab", type=int, default=32000)
p.add_argument("--per-device-batch", type=int, default=8)
p.add_argument("--gradient-accumulation-steps", type=int, default=8)
p.add_argument("--max-steps", type=int, default=20)
p.add_argument("--learning-rate", type=float, default=3e-4)
p.add_argument("--warmup-steps", type=int, default=4)
p.add_argument("--logging-steps", type=int, default=5)
args = p.parse_args()
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Block(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.up, self.down = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.h = h

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        if hasattr(F, "scaled_dot_product_attention"):  # PyTorch >= 2.0 (flash attention)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) / math.sqrt(k.shape[-1])
            att = att.masked_fill(torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1), float("-inf"))
            a = att.softmax(-1) @ v
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.down(F.gelu(self.up(self.ln2(x))))


class CausalLM(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.embed = nn.Embedding(a.vocab, a.hidden)
        self.pos = nn.Embedding(a.seq_len, a.hidden)
        self.blocks = nn.ModuleList(Block(a.hidden, a.heads) for _ in range(a.layers))
        self.norm = nn.LayerNorm(a.hidden)
        self.lm_head = nn.Linear(a.hidden, a.vocab, bias=False)
        self.lm_head.weight = self.embed.weight

    def forward(self, input_ids, labels=None):
        x = self.embed(input_ids) + self.pos(torch.arange(input_ids.shape[1], device=input_ids.device))
        for blk in self.blocks:
            x = blk(x)
        logits = self.lm_head(self.norm(x))
        loss = None
        if labels is not None:
            loss = F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]).float(), labels[:, 1:].reshape(-1))
        return {"loss": loss, "logits": logits}


def get_linear_schedule_with_warmup(optimizer, warmup, total):
    def f(step):
        if step < warmup:
            return (step + 1) / warmup
        return max(0.0, (total - step) / max(1, total - warmup))
    return torch.optim.lr_scheduler.LambdaLR(optimizer, f)


model = CausalLM(args).to(device)
decay = [p for n, p in model.named_parameters() if p.ndim >= 2]
no_decay = [p for n, p in model.named_parameters() if p.ndim < 2]
optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                              lr=args.learning_rate, betas=(0.9, 0.95))
lr_scheduler = get_linear_schedule_with_warmup(optimizer, args.warmup_steps, args.max_steps)
print(f"{sum(p.numel() for p in model.parameters()) / 1e6:.1f}M parameters on {device}")


def batches():
    while True:
        ids = torch.randint(0, args.vocab, (args.per_device_batch, args.seq_len))
        yield {"input_ids": ids, "labels": ids.clone()}


model.train()
global_step, running = 0, 0.0
data = batches()
for micro_step in range(args.max_steps * args.gradient_accumulation_steps):
    batch = {k: v.to(device) for k, v in next(data).items()}
    with torch.autocast(device_type=device.type, dtype=torch.bfloat16):
        loss = model(**batch)["loss"] / args.gradient_accumulation_steps
    loss.backward()
    running += loss.detach()
    if (micro_step + 1) % args.gradient_accumulation_steps == 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        lr_scheduler.step()
        optimizer.zero_grad()
        global_step += 1
        if global_step % args.logging_steps == 0:
            print(f"step {global_step}: loss {running.item() / args.logging_steps:.4f} "
                  f"ppl {math.exp(running.item() / args.logging_steps):.1f} lr {lr_scheduler.get_last_lr()[0]:.2e}")
            running = 0.0
print("training done")
