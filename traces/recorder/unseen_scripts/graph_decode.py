# Serving a GPT-style decoder with CUDA graphs, the way gpt-fast / vLLM-style servers do it by hand: a static KV cache
# written with index_copy_, the prompt prefilled eagerly, then one decode step captured once into a
# torch.cuda.CUDAGraph and replayed for every new token through a small module (static input buffers, static logits);
# attention through SDPA with a boolean mask over the whole cache (static shapes); temperature + top-k sampling
# outside the graph. bf16, batch 16, 24 layers x 2048. On a CPU the step runs eagerly (no graph).
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument("--rounds", type=int, default=20, help="batches of prompts served")
ap.add_argument("--batch", type=int, default=16)
ap.add_argument("--prompt-len", type=int, default=512)
ap.add_argument("--new-tokens", type=int, default=256)
ap.add_argument("--d-model", type=int, default=2048)
ap.add_argument("--heads", type=int, default=16)
ap.add_argument("--layers", type=int, default=24)
ap.add_argument("--vocab", type=int, default=50304)
ap.add_argument("--top-k", type=int, default=50)
ap.add_argument("--no-graph", action="store_true")
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"
dtype = torch.bfloat16 if dev == "cuda" else torch.float32
max_len = a.prompt_len + a.new_tokens


def attention(q, k, v, mask):
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    s = (q @ k.transpose(-1, -2)) / (q.shape[-1] ** 0.5)  # PyTorch < 2.0
    return s.masked_fill(~mask, float("-inf")).softmax(-1) @ v


class Attention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads, self.hd = heads, d // heads
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.o = nn.Linear(d, d, bias=False)
        self.register_buffer("k_cache", torch.zeros(a.batch, heads, max_len, self.hd))
        self.register_buffer("v_cache", torch.zeros(a.batch, heads, max_len, self.hd))

    def forward(self, x, pos, mask):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, self.hd).permute(2, 0, 3, 1, 4)
        self.k_cache.index_copy_(2, pos, k)
        self.v_cache.index_copy_(2, pos, v)
        y = attention(q, self.k_cache, self.v_cache, mask)
        return self.o(y.transpose(1, 2).reshape(b, t, d))


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = Attention(d, heads)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(approximate="tanh"), nn.Linear(4 * d, d))

    def forward(self, x, pos, mask):
        x = x + self.attn(self.ln1(x), pos, mask)
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(a.vocab, a.d_model)
        self.pos = nn.Embedding(max_len, a.d_model)
        self.blocks = nn.ModuleList(Block(a.d_model, a.heads) for _ in range(a.layers))
        self.ln = nn.LayerNorm(a.d_model)
        self.head = nn.Linear(a.d_model, a.vocab, bias=False)
        self.head.weight = self.tok.weight
        self.register_buffer("slots", torch.arange(max_len))

    def forward(self, tokens, pos):  # tokens [B, T], pos [T]: the cache slots these tokens fill
        mask = self.slots[None, :] <= pos[:, None]  # [T, max_len]: causal over the cache
        x = self.tok(tokens) + self.pos(pos)
        for blk in self.blocks:
            x = blk(x, pos, mask)
        return self.head(self.ln(x[:, -1]))


model = GPT().to(dev, dtype).eval()


class GraphedDecodeStep(nn.Module):
    """One decode step replayed from a CUDA graph: the inputs are copied into the captured buffers."""

    def __init__(self, model):
        super().__init__()
        self.model = model
        self.tok = torch.zeros(a.batch, 1, dtype=torch.long, device=dev)
        self.pos = torch.full((1,), a.prompt_len, dtype=torch.long, device=dev)
        self.graph = None
        if dev == "cuda" and not a.no_graph:
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                for _ in range(3):
                    self.model(self.tok, self.pos)
            torch.cuda.current_stream().wait_stream(s)
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph):
                self.logits = self.model(self.tok, self.pos)

    def forward(self, tok, pos):
        if self.graph is None:
            return self.model(tok, pos)
        self.tok.copy_(tok)
        self.pos.copy_(pos)
        self.graph.replay()
        return self.logits


def sample(logits):
    v, i = torch.topk(logits.float() / 0.8, a.top_k, dim=-1)
    return i.gather(-1, torch.multinomial(F.softmax(v, dim=-1), 1))


with torch.inference_mode():
    step = GraphedDecodeStep(model)
    for r in range(a.rounds):
        prompt = torch.randint(0, a.vocab, (a.batch, a.prompt_len), device=dev)
        tok = sample(model(prompt, torch.arange(a.prompt_len, device=dev)))
        out = [tok]
        for t in range(a.prompt_len, max_len - 1):
            tok = sample(step(tok, torch.tensor([t], device=dev)))
            out.append(tok)
        text = torch.cat(out, 1).cpu()
        print(f"round {r}: {text.shape[1]} tokens per sequence, first ids {text[0, :4].tolist()}")
