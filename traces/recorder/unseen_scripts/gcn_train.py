# Full-graph training of a three-layer graph convolutional network on a random power-law graph (2M edges):
# message passing with index_select and index_add_, symmetric degree normalisation, dropout, fp32, Adam.
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=100)
ap.add_argument("--nodes", type=int, default=200_000)
ap.add_argument("--edges", type=int, default=2_000_000)
ap.add_argument("--features", type=int, default=256)
ap.add_argument("--hidden", type=int, default=256)
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"

g = torch.Generator().manual_seed(0)
src = (torch.rand(a.edges, generator=g) ** 2 * a.nodes).long()
dst = torch.randint(0, a.nodes, (a.edges,), generator=g)
src, dst = torch.cat([src, dst, torch.arange(a.nodes)]).to(dev), torch.cat([dst, src, torch.arange(a.nodes)]).to(dev)
deg = torch.zeros(a.nodes, device=dev).index_add_(0, dst, torch.ones_like(dst, dtype=torch.float))
norm = (deg[src] * deg[dst]).rsqrt()
x = torch.randn(a.nodes, a.features, device=dev)
y = torch.randint(0, 40, (a.nodes,), device=dev)
train = torch.rand(a.nodes, device=dev) < 0.1


class GCNLayer(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.lin = nn.Linear(cin, cout)

    def forward(self, h):
        h = self.lin(h)
        msg = h.index_select(0, src) * norm[:, None]
        return torch.zeros_like(h).index_add_(0, dst, msg)


class GCN(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([GCNLayer(a.features, a.hidden), GCNLayer(a.hidden, a.hidden), GCNLayer(a.hidden, 40)])

    def forward(self, h):
        for i, layer in enumerate(self.layers):
            h = layer(h)
            if i < len(self.layers) - 1:
                h = F.dropout(F.relu(h), 0.5, self.training)
        return h


model = GCN().to(dev)
opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
for step in range(a.steps):
    loss = F.cross_entropy(model(x)[train], y[train])
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 20 == 0:
        print(f"step {step} loss {loss.item():.3f}")
