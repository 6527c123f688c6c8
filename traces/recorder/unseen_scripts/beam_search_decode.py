# Beam-search translation with a Transformer-base-sized encoder-decoder (fairseq / OpenNMT style), fp16, batches of
# 8 source sentences, beam 5: the encoder runs once per batch, then one incremental decoder step per target token
# with self-attention key/value caches; log_softmax + topk over beam x vocab, the caches and the encoder states
# reordered by index_select after every token, finished hypotheses kept with a length penalty. The whole
# generate (encoder + all decoder steps of one batch) is one call of the BeamSearch module, under inference_mode.
import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument("--batches", type=int, default=200)
ap.add_argument("--batch", type=int, default=8)
ap.add_argument("--beam", type=int, default=5)
ap.add_argument("--src-len", type=int, default=32)
ap.add_argument("--max-len", type=int, default=40)
ap.add_argument("--d-model", type=int, default=512)
ap.add_argument("--layers", type=int, default=6)
ap.add_argument("--vocab", type=int, default=32000)
ap.add_argument("--len-penalty", type=float, default=1.0)
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"
dtype = torch.float16 if dev == "cuda" else torch.float32
PAD, BOS, EOS = 0, 1, 2


class MultiheadAttention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))

    def split(self, x):
        b, t, d = x.shape
        return x.view(b, t, self.heads, d // self.heads).transpose(1, 2)

    def forward(self, x, k, v, mask=None):  # k, v already split: [B, H, S, hd]
        q = self.split(self.q(x))
        s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
        if mask is not None:
            s = s.masked_fill(mask, float("-inf"))
        y = s.softmax(-1) @ v
        return self.o(y.transpose(1, 2).reshape(x.shape))


class EncoderLayer(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.attn = MultiheadAttention(d, heads)
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.ReLU(), nn.Linear(4 * d, d))

    def forward(self, x, pad_mask):
        h = self.ln1(x)
        x = x + self.attn(h, self.attn.split(self.attn.k(h)), self.attn.split(self.attn.v(h)), pad_mask)
        return x + self.ff(self.ln2(x))


class DecoderLayer(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.self_attn, self.cross_attn = MultiheadAttention(d, heads), MultiheadAttention(d, heads)
        self.ln1, self.ln2, self.ln3 = nn.LayerNorm(d), nn.LayerNorm(d), nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.ReLU(), nn.Linear(4 * d, d))

    def forward(self, x, cache, enc_kv, pad_mask):  # x: [B*beam, 1, d], one new token
        h = self.ln1(x)
        k = self.self_attn.split(self.self_attn.k(h))
        v = self.self_attn.split(self.self_attn.v(h))
        if "k" in cache:
            k, v = torch.cat([cache["k"], k], dim=2), torch.cat([cache["v"], v], dim=2)
        cache["k"], cache["v"] = k, v
        x = x + self.self_attn(h, k, v)
        x = x + self.cross_attn(self.ln2(x), enc_kv[0], enc_kv[1], pad_mask)
        return x + self.ff(self.ln3(x))


def sinusoidal(n, d):
    pos = torch.arange(n)[:, None]
    inv = torch.exp(-math.log(10000.0) * torch.arange(0, d, 2) / d)
    return torch.cat([torch.sin(pos * inv), torch.cos(pos * inv)], dim=1)


class Transformer(nn.Module):
    def __init__(self, vocab, d, layers):
        super().__init__()
        self.emb = nn.Embedding(vocab, d, padding_idx=PAD)  # shared by source, target and output projection
        self.register_buffer("pos", sinusoidal(1024, d), persistent=False)
        self.encoder = nn.ModuleList(EncoderLayer(d, d // 64) for _ in range(layers))
        self.decoder = nn.ModuleList(DecoderLayer(d, d // 64) for _ in range(layers))
        self.enc_ln, self.dec_ln = nn.LayerNorm(d), nn.LayerNorm(d)
        self.scale = math.sqrt(d)

    def encode(self, src):
        pad_mask = (src == PAD)[:, None, None, :]
        x = self.emb(src) * self.scale + self.pos[: src.shape[1]].to(self.emb.weight.dtype)
        for layer in self.encoder:
            x = layer(x, pad_mask)
        return self.enc_ln(x), pad_mask

    def decode_step(self, tok, step, caches, enc_kvs, pad_mask):  # tok: [B*beam] -> log-probs [B*beam, vocab]
        x = self.emb(tok)[:, None] * self.scale + self.pos[step].to(self.emb.weight.dtype)
        for layer, cache, enc_kv in zip(self.decoder, caches, enc_kvs):
            x = layer(x, cache, enc_kv, pad_mask)
        logits = self.dec_ln(x[:, 0]) @ self.emb.weight.t()
        return F.log_softmax(logits.float(), dim=-1)


class BeamSearch(nn.Module):
    def __init__(self, model, beam, max_len, len_penalty):
        super().__init__()
        self.model, self.beam, self.max_len, self.len_penalty = model, beam, max_len, len_penalty

    def forward(self, src):
        m, k = self.model, self.beam
        bsz = src.shape[0]
        enc, pad_mask = m.encode(src)
        # Expand the encoder output to B*beam rows and project the cross-attention keys/values once.
        order = torch.arange(bsz, device=src.device).repeat_interleave(k)
        enc, pad_mask = enc.index_select(0, order), pad_mask.index_select(0, order)
        enc_kvs = [(l.cross_attn.split(l.cross_attn.k(enc)), l.cross_attn.split(l.cross_attn.v(enc)))
                   for l in m.decoder]
        caches = [{} for _ in m.decoder]
        tokens = torch.full((bsz * k, 1), BOS, dtype=torch.long, device=src.device)
        scores = torch.zeros(bsz, k, device=src.device)
        scores[:, 1:] = float("-inf")  # all beams start identical: keep only the first
        finished = torch.zeros(bsz * k, dtype=torch.bool, device=src.device)
        best = torch.full((bsz,), float("-inf"), device=src.device)
        best_tokens = torch.full((bsz, self.max_len + 1), PAD, dtype=torch.long, device=src.device)
        base = (torch.arange(bsz, device=src.device) * k)[:, None]
        for step in range(self.max_len):
            lprobs = m.decode_step(tokens[:, -1], step, caches, enc_kvs, pad_mask)
            lprobs = lprobs.masked_fill(finished[:, None], float("-inf"))
            if step == self.max_len - 1:  # force EOS at the last step
                lprobs[:, :EOS] = float("-inf")
                lprobs[:, EOS + 1:] = float("-inf")
            cand = (scores.view(-1, 1) + lprobs).view(bsz, -1)  # [B, beam * vocab]
            top_scores, top_idx = cand.topk(2 * k, dim=1)
            beam_idx, word = top_idx // lprobs.shape[-1], top_idx % lprobs.shape[-1]
            # Hypotheses that end here: score with the length penalty, keep the best per sentence.
            eos = word == EOS
            normed = torch.where(eos, top_scores / ((step + 1) ** self.len_penalty), torch.full_like(top_scores, float("-inf")))
            hyp_score, hyp = normed.max(dim=1)
            better = hyp_score > best
            rows = (base[:, 0] + beam_idx.gather(1, hyp[:, None])[:, 0])
            cand_tokens = torch.cat([tokens.index_select(0, rows), torch.full((bsz, 1), EOS, device=src.device,
                                                                               dtype=torch.long)], dim=1)
            cand_tokens = F.pad(cand_tokens, (0, self.max_len + 1 - cand_tokens.shape[1]), value=PAD)
            best = torch.where(better, hyp_score, best)
            best_tokens = torch.where(better[:, None], cand_tokens, best_tokens)
            # The k best continuations that are not EOS go on.
            top_scores = top_scores.masked_fill(eos, float("-inf"))
            keep_scores, keep = top_scores.topk(k, dim=1)
            sel = (base + beam_idx.gather(1, keep)).view(-1)
            scores = keep_scores
            tokens = torch.cat([tokens.index_select(0, sel), word.gather(1, keep).view(-1, 1)], dim=1)
            for cache in caches:  # reorder the self-attention caches to follow their beams
                cache["k"], cache["v"] = cache["k"].index_select(0, sel), cache["v"].index_select(0, sel)
            finished = torch.isinf(scores.view(-1))
        return best_tokens, best


model = Transformer(a.vocab, a.d_model, a.layers).to(dev, dtype).eval()
generator = BeamSearch(model, a.beam, a.max_len, a.len_penalty)
out_tokens = 0
with torch.inference_mode():
    for i in range(a.batches):
        lens = torch.randint(a.src_len // 2, a.src_len + 1, (a.batch,), device=dev)
        src = torch.randint(3, a.vocab, (a.batch, a.src_len), device=dev)
        src = src.masked_fill(torch.arange(a.src_len, device=dev)[None] >= lens[:, None], PAD)
        hyps, hyp_scores = generator(src)
        out_tokens += int((hyps != PAD).sum())  # copied to the host per batch, as a detokeniser would need
print(f"{a.batches * a.batch} sentences translated, {out_tokens} target tokens")
