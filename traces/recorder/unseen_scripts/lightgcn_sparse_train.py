# Training LightGCN (He et al. 2020) on a synthetic implicit-feedback data set: the symmetric-normalised user-item
# bipartite adjacency is one sparse CSR matrix (COO with --layout coo), every step propagates the full embedding
# table through it with torch.sparse.mm (cuSPARSE SpMM) layer by layer and averages the layers, then a BPR loss
# over a batch of (user, positive item, sampled negative item) triples plus L2 on the batch's base embeddings; Adam,
# fp32.
import argparse

import torch

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=400)
ap.add_argument("--users", type=int, default=100_000)
ap.add_argument("--items", type=int, default=50_000)
ap.add_argument("--interactions", type=int, default=3_000_000)
ap.add_argument("--dim", type=int, default=64)
ap.add_argument("--layers", type=int, default=3)
ap.add_argument("--batch", type=int, default=8192)
ap.add_argument("--layout", choices=["csr", "coo"], default="csr")
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"


def synthetic_interactions(n_users, n_items, n):
    """Power-law users and items (a few heavy users, a long tail of items), duplicates removed."""
    g = torch.Generator(device=dev).manual_seed(0)
    u = (torch.rand(n, device=dev, generator=g) ** 2.0 * n_users).long().clamp_max(n_users - 1)
    i = (torch.rand(n, device=dev, generator=g) ** 3.0 * n_items).long().clamp_max(n_items - 1)
    i = (i + u * 7919) % n_items  # users differ in taste, items stay long-tailed overall
    key = torch.unique(u * n_items + i)
    return key // n_items, key % n_items


def normalized_adjacency(users, items, n_users, n_items, layout):
    """A = [[0, R], [R^T, 0]], D^-1/2 A D^-1/2, as LightGCN's getSparseGraph builds it."""
    n = n_users + n_items
    rows = torch.cat([users, items + n_users])
    cols = torch.cat([items + n_users, users])
    deg = torch.bincount(rows, minlength=n).float()
    d_inv_sqrt = deg.pow(-0.5).masked_fill(deg == 0, 0.0)
    vals = d_inv_sqrt[rows] * d_inv_sqrt[cols]
    adj = torch.sparse_coo_tensor(torch.stack([rows, cols]), vals, (n, n)).coalesce()
    return adj.to_sparse_csr() if layout == "csr" else adj


class LightGCN(torch.nn.Module):
    def __init__(self, n_users, n_items, dim, layers, graph):
        super().__init__()
        self.n_users, self.layers, self.graph = n_users, layers, graph
        self.user_emb = torch.nn.Embedding(n_users, dim)
        self.item_emb = torch.nn.Embedding(n_items, dim)
        torch.nn.init.normal_(self.user_emb.weight, std=0.1)
        torch.nn.init.normal_(self.item_emb.weight, std=0.1)

    def propagate(self):
        x = torch.cat([self.user_emb.weight, self.item_emb.weight])
        out = [x]
        for _ in range(self.layers):
            x = torch.sparse.mm(self.graph, x)
            out.append(x)
        final = torch.stack(out, dim=1).mean(dim=1)
        return final[: self.n_users], final[self.n_users:]

    def forward(self, users, pos, neg):
        all_users, all_items = self.propagate()
        u, p, n = all_users[users], all_items[pos], all_items[neg]
        pos_scores, neg_scores = (u * p).sum(-1), (u * n).sum(-1)
        reg = (self.user_emb(users).pow(2).sum() + self.item_emb(pos).pow(2).sum()
               + self.item_emb(neg).pow(2).sum()) / (2 * len(users))
        return torch.nn.functional.softplus(neg_scores - pos_scores).mean(), reg


users, items = synthetic_interactions(a.users, a.items, a.interactions)
graph = normalized_adjacency(users, items, a.users, a.items, a.layout)
print(f"{a.users} users, {a.items} items, {users.numel()} interactions ({a.layout} adjacency)")
model = LightGCN(a.users, a.items, a.dim, a.layers, graph).to(dev)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(a.steps):
    pick = torch.randint(0, users.numel(), (a.batch,), device=dev)
    u, pos = users[pick], items[pick]
    neg = torch.randint(0, a.items, (a.batch,), device=dev)  # uniform negatives, as LightGCN's sampler
    bpr, reg = model(u, pos, neg)
    loss = bpr + 1e-4 * reg
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    if step % 50 == 0:
        print(f"step {step} bpr {bpr.item():.4f}")
