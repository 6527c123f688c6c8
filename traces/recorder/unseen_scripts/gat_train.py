# Graph attention network (Velickovic et al. 2018) trained full-graph on a 300k-node power-law graph (~6M directed
# edges plus self-loops), written the way PyTorch Geometric's GATConv computes it: per-edge attention logits from
# gathered source / target scores, LeakyReLU, a softmax over each node's incoming edges by scatter_reduce("amax") and
# index_add_ sums, dropout on the attention, messages index_add_-ed into their targets; 2 layers (8 heads x 64, then
# one head to 40 classes), ELU, cross-entropy on the training nodes, Adam with weight decay, fp32.
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=150)
ap.add_argument("--nodes", type=int, default=300000)
ap.add_argument("--avg-degree", type=int, default=20)
ap.add_argument("--features", type=int, default=256)
ap.add_argument("--hidden", type=int, default=64)
ap.add_argument("--heads", type=int, default=8)
ap.add_argument("--classes", type=int, default=40)
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"

g = torch.Generator().manual_seed(0)
n, m = a.nodes, a.nodes * a.avg_degree
weights = 1.0 / torch.arange(1, n + 1, dtype=torch.float32) ** 0.8
src = torch.multinomial(weights, m, replacement=True, generator=g)
dst = torch.randint(0, n, (m,), generator=g)
loops = torch.arange(n)
edge_src = torch.cat([src, loops]).to(dev)
edge_dst = torch.cat([dst, loops]).to(dev)
x = torch.randn(n, a.features, generator=g).to(dev)
y = torch.randint(0, a.classes, (n,), generator=g).to(dev)
train = (torch.rand(n, generator=g) < 0.6).to(dev)


def edge_softmax(logits, index, num_nodes):  # softmax over the incoming edges of each target node
    shape = (num_nodes,) + logits.shape[1:]
    node_max = torch.full(shape, float("-inf"), device=logits.device, dtype=logits.dtype)
    node_max = node_max.scatter_reduce(0, index[:, None].expand_as(logits), logits.detach(), "amax", include_self=True)
    e = (logits - node_max[index]).exp()
    denom = torch.zeros(shape, device=logits.device, dtype=logits.dtype).index_add_(0, index, e)
    return e / (denom[index] + 1e-16)


class GATConv(nn.Module):
    def __init__(self, din, dout, heads, concat=True):
        super().__init__()
        self.heads, self.dout, self.concat = heads, dout, concat
        self.lin = nn.Linear(din, heads * dout, bias=False)
        self.att_src = nn.Parameter(torch.randn(1, heads, dout) * 0.1)
        self.att_dst = nn.Parameter(torch.randn(1, heads, dout) * 0.1)
        self.bias = nn.Parameter(torch.zeros(heads * dout if concat else dout))

    def forward(self, h):
        z = self.lin(h).view(-1, self.heads, self.dout)
        a_src, a_dst = (z * self.att_src).sum(-1), (z * self.att_dst).sum(-1)
        alpha = F.leaky_relu(a_src[edge_src] + a_dst[edge_dst], 0.2)
        alpha = F.dropout(edge_softmax(alpha, edge_dst, z.shape[0]), 0.6, self.training)
        out = torch.zeros_like(z).index_add_(0, edge_dst, z[edge_src] * alpha.unsqueeze(-1))
        out = out.reshape(-1, self.heads * self.dout) if self.concat else out.mean(1)
        return out + self.bias


class GAT(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = GATConv(a.features, a.hidden, a.heads)
        self.conv2 = GATConv(a.hidden * a.heads, a.classes, 1, concat=False)

    def forward(self, h):
        h = F.elu(self.conv1(F.dropout(h, 0.6, self.training)))
        return self.conv2(F.dropout(h, 0.6, self.training))


model = GAT().to(dev)
opt = torch.optim.Adam(model.parameters(), lr=5e-3, weight_decay=5e-4)
for step in range(a.steps):
    out = model(x)
    loss = F.cross_entropy(out[train], y[train])
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    if step % 20 == 0:
        acc = (out.argmax(1)[~train] == y[~train]).float().mean()
        print(f"step {step} loss {loss.item():.3f} held-out acc {acc.item():.3f}")
