# Training a Whisper-style speech encoder (Radford et al. 2022) on synthetic audio: the 80-bin log-mel spectrogram
# is computed on the GPU every step (torch.stft through cuFFT, a mel filterbank matmul, log10 and Whisper's
# dynamic-range clamp), then two conv1d stem layers with GELU (the second strided), sinusoidal positions and a
# pre-norm transformer encoder (scaled_dot_product_attention); a per-frame classification head (phone-like
# labels), fp16 autocast with GradScaler, AdamW with gradient clipping.
import argparse
import contextlib
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=300)
ap.add_argument("--batch", type=int, default=16)
ap.add_argument("--seconds", type=float, default=30.0)
ap.add_argument("--d-model", type=int, default=512)
ap.add_argument("--layers", type=int, default=6)
ap.add_argument("--mels", type=int, default=80)
ap.add_argument("--classes", type=int, default=64)
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"
SR, N_FFT, HOP = 16000, 400, 160


def autocast():  # fp16 mixed precision on the GPU, plain fp32 on a CPU
    return torch.autocast(device_type="cuda", dtype=torch.float16) if dev == "cuda" else contextlib.nullcontext()


def mel_filters(n_mels, n_fft=N_FFT, sr=SR, fmin=0.0, fmax=8000.0):
    """Slaney-style triangular mel filterbank, [n_mels, n_fft // 2 + 1] (what librosa.filters.mel gives Whisper)."""
    def hz_to_mel(f):
        f = torch.as_tensor(f, dtype=torch.float64)
        lin = f / (200.0 / 3)
        log = 15.0 + torch.log(torch.clamp(f, min=1e-10) / 1000.0) / (math.log(6.4) / 27.0)
        return torch.where(f >= 1000.0, log, lin)

    def mel_to_hz(m):
        lin = m * (200.0 / 3)
        log = 1000.0 * torch.exp((math.log(6.4) / 27.0) * (m - 15.0))
        return torch.where(m >= 15.0, log, lin)

    freqs = torch.linspace(0, sr / 2, n_fft // 2 + 1, dtype=torch.float64)
    hz = mel_to_hz(torch.linspace(float(hz_to_mel(fmin)), float(hz_to_mel(fmax)), n_mels + 2, dtype=torch.float64))
    fdiff = hz[1:] - hz[:-1]
    ramps = hz[:, None] - freqs[None, :]
    lower, upper = -ramps[:-2] / fdiff[:-1, None], ramps[2:] / fdiff[1:, None]
    weights = torch.clamp(torch.minimum(lower, upper), min=0)
    return (weights * (2.0 / (hz[2:n_mels + 2] - hz[:n_mels]))[:, None]).float()


def log_mel_spectrogram(audio, filters, window):
    stft = torch.stft(audio, N_FFT, HOP, window=window, return_complex=True)
    magnitudes = stft[..., :-1].abs() ** 2
    log_spec = torch.clamp(filters @ magnitudes, min=1e-10).log10()
    log_spec = torch.maximum(log_spec, log_spec.amax(dim=(1, 2), keepdim=True) - 8.0)
    return (log_spec + 4.0) / 4.0


def sinusoids(length, channels, max_timescale=10000):
    inv = torch.exp(-math.log(max_timescale) / (channels // 2 - 1) * torch.arange(channels // 2))
    t = torch.arange(length)[:, None] * inv[None, :]
    return torch.cat([t.sin(), t.cos()], dim=1)


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.attn_ln, self.mlp_ln = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.out = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.attn_ln(x)).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        if hasattr(F, "scaled_dot_product_attention"):
            y = F.scaled_dot_product_attention(q, k, v)
        else:  # PyTorch < 2.0
            y = (q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])).softmax(-1) @ v
        x = x + self.out(y.transpose(1, 2).reshape(b, t, d))
        return x + self.mlp(self.mlp_ln(x))


class AudioEncoder(nn.Module):
    def __init__(self, n_mels, d, layers, frames, classes):
        super().__init__()
        self.conv1 = nn.Conv1d(n_mels, d, 3, padding=1)
        self.conv2 = nn.Conv1d(d, d, 3, stride=2, padding=1)
        self.register_buffer("positional_embedding", sinusoids(frames, d), persistent=False)
        self.blocks = nn.ModuleList(Block(d, d // 64) for _ in range(layers))
        self.ln_post = nn.LayerNorm(d)
        self.head = nn.Linear(d, classes)

    def forward(self, mel):  # mel: [B, n_mels, T] -> per-frame logits [B, T // 2, classes]
        x = F.gelu(self.conv1(mel))
        x = F.gelu(self.conv2(x)).transpose(1, 2)
        x = x + self.positional_embedding[: x.shape[1]].to(x.dtype)
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln_post(x))


samples = int(a.seconds * SR)
frames = samples // HOP
filters = mel_filters(a.mels).to(dev)
window = torch.hann_window(N_FFT, device=dev)
model = AudioEncoder(a.mels, a.d_model, a.layers, (frames + 1) // 2, a.classes).to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01)
scaler = torch.cuda.amp.GradScaler(enabled=dev == "cuda")
for step in range(a.steps):
    # Synthetic speech-like audio: a per-segment label picks a pitch and two formants (40 ms segments), plus noise.
    seg = torch.randint(0, a.classes, (a.batch, samples // 640 + 1), device=dev)
    label_at = seg.repeat_interleave(640, dim=1)[:, :samples]
    t = torch.arange(samples, device=dev) / SR
    f0 = 100 + 3 * label_at.float()
    audio = 0.3 * torch.sin(2 * math.pi * f0 * t) + 0.1 * torch.sin(2 * math.pi * (f0 * 7 + 300) * t)
    audio = audio + 0.02 * torch.randn_like(audio)
    target = label_at[:, :: 2 * HOP][:, : (frames + 1) // 2]
    mel = log_mel_spectrogram(audio, filters, window)  # fp32, outside autocast, as Whisper's front end
    with autocast():
        logits = model(mel)
    loss = F.cross_entropy(logits.float().reshape(-1, a.classes), target.reshape(-1))
    opt.zero_grad(set_to_none=True)
    scaler.scale(loss).backward()
    scaler.unscale_(opt)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(opt)
    scaler.update()
    if step % 20 == 0:
        print(f"step {step} loss {loss.item():.3f}")
