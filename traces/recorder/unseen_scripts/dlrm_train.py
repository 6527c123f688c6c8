# A DLRM-style click-through model: eight sparse features through EmbeddingBag tables (sum pooling, sparse
# gradients), dense features through a bottom MLP, pairwise dot interactions, a top MLP, BCE loss; SGD for the
# tables' sparse gradients and Adam for the MLPs, fp32.
import argparse

import torch
import torch.nn as nn

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=300)
ap.add_argument("--batch", type=int, default=4096)
ap.add_argument("--rows", type=int, default=1_000_000)
ap.add_argument("--dim", type=int, default=128)
ap.add_argument("--pooling", type=int, default=20)
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"
TABLES, DENSE = 8, 13


def mlp(sizes):
    layers = []
    for i in range(len(sizes) - 1):
        layers += [nn.Linear(sizes[i], sizes[i + 1]), nn.ReLU()]
    return nn.Sequential(*layers[:-1])


class DLRM(nn.Module):
    def __init__(self):
        super().__init__()
        self.tables = nn.ModuleList(nn.EmbeddingBag(a.rows, a.dim, mode="sum", sparse=True) for _ in range(TABLES))
        self.bottom = mlp([DENSE, 512, 256, a.dim])
        n = TABLES + 1
        self.top = mlp([a.dim + n * (n - 1) // 2, 1024, 1024, 512, 1])

    def forward(self, dense, indices, offsets):
        x = self.bottom(dense)
        feats = torch.stack([x] + [t(indices[i], offsets) for i, t in enumerate(self.tables)], dim=1)
        inter = torch.bmm(feats, feats.transpose(1, 2))
        iu = torch.triu_indices(feats.shape[1], feats.shape[1], offset=1, device=dense.device)
        return self.top(torch.cat([x, inter[:, iu[0], iu[1]]], dim=1)).squeeze(1)


model = DLRM().to(dev)
sparse_opt = torch.optim.SGD(list(model.tables.parameters()), lr=0.01)
dense_opt = torch.optim.Adam(list(model.bottom.parameters()) + list(model.top.parameters()), lr=1e-3)
loss_fn = nn.BCEWithLogitsLoss()
offsets = torch.arange(0, a.batch * a.pooling, a.pooling, device=dev)
for step in range(a.steps):
    dense = torch.rand(a.batch, DENSE, device=dev)
    # power-law ids: a few hot rows, a long tail
    indices = (torch.rand(TABLES, a.batch * a.pooling, device=dev) ** 3 * a.rows).long()
    clicks = (torch.rand(a.batch, device=dev) < 0.03).float()
    loss = loss_fn(model(dense, indices, offsets), clicks)
    sparse_opt.zero_grad()
    dense_opt.zero_grad()
    loss.backward()
    sparse_opt.step()
    dense_opt.step()
    if step % 50 == 0:
        print(f"step {step} loss {loss.item():.4f}")
