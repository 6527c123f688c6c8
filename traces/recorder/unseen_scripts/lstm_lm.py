# A two-layer LSTM word language model (the classic PyTorch example's shape): fp32, truncated BPTT, SGD with
# gradient clipping. The recurrent layers run in cuDNN's RNN kernels.
import argparse

import torch
import torch.nn as nn

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=150)
ap.add_argument("--batch", type=int, default=64)
ap.add_argument("--bptt", type=int, default=70)
ap.add_argument("--hidden", type=int, default=1500)
ap.add_argument("--vocab", type=int, default=33278)
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"


class RNNModel(nn.Module):
    def __init__(self, vocab, hidden, layers=2, dropout=0.65):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(vocab, hidden)
        self.rnn = nn.LSTM(hidden, hidden, layers, dropout=dropout)
        self.decoder = nn.Linear(hidden, vocab)
        self.decoder.weight = self.encoder.weight  # tied weights

    def forward(self, x, state):
        out, state = self.rnn(self.drop(self.encoder(x)), state)
        return self.decoder(self.drop(out)), state


model = RNNModel(a.vocab, a.hidden).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=20.0)
loss_fn = nn.CrossEntropyLoss()
corpus = torch.randint(0, a.vocab, (a.batch, (a.steps + 1) * a.bptt + 1), device=dev).t().contiguous()
state = None
model.train()
for step in range(a.steps):
    i = step * a.bptt
    x, y = corpus[i:i + a.bptt], corpus[i + 1:i + 1 + a.bptt]
    if state is not None:
        state = tuple(s.detach() for s in state)
    out, state = model(x, state)
    loss = loss_fn(out.view(-1, a.vocab), y.reshape(-1))
    opt.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 0.25)
    opt.step()
    if step % 25 == 0:
        print(f"step {step} loss {loss.item():.3f}")
