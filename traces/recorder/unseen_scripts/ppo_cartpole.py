# Proximal policy optimisation on a vectorised CartPole simulated on the GPU (the CleanRL / Isaac Gym style, in plain
# PyTorch): 4,096 environments stepped together in fp32 (the classic Barto-Sutton dynamics, Euler integration,
# automatic resets), an actor-critic pair of 64-unit tanh MLPs, 128-step rollouts, generalised advantage estimation
# by a backward loop over time, then 4 epochs of 8 clipped-objective minibatches with Adam and gradient clipping.
# Many small kernels: the launch-bound regime of RL training. One optimizer step per minibatch.
import argparse

import torch
import torch.nn as nn

ap = argparse.ArgumentParser()
ap.add_argument("--updates", type=int, default=60)
ap.add_argument("--envs", type=int, default=4096)
ap.add_argument("--horizon", type=int, default=128)
ap.add_argument("--epochs", type=int, default=4)
ap.add_argument("--minibatches", type=int, default=8)
ap.add_argument("--hidden", type=int, default=64)
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"


class CartPole:
    g, mc, mp, half_len, force, tau = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02

    def __init__(self, n):
        self.state = (torch.rand(n, 4, device=dev) - 0.5) * 0.1

    def step(self, action):
        x, x_dot, th, th_dot = self.state.unbind(1)
        f = (2.0 * action.float() - 1.0) * self.force
        cos, sin = torch.cos(th), torch.sin(th)
        total = self.mc + self.mp
        temp = (f + self.mp * self.half_len * th_dot ** 2 * sin) / total
        th_acc = (self.g * sin - cos * temp) / (self.half_len * (4.0 / 3.0 - self.mp * cos ** 2 / total))
        x_acc = temp - self.mp * self.half_len * th_acc * cos / total
        self.state = torch.stack([x + self.tau * x_dot, x_dot + self.tau * x_acc,
                                  th + self.tau * th_dot, th_dot + self.tau * th_acc], 1)
        done = (self.state[:, 0].abs() > 2.4) | (self.state[:, 2].abs() > 0.2095)
        fresh = (torch.rand_like(self.state) - 0.5) * 0.1
        self.state = torch.where(done[:, None], fresh, self.state)
        return self.state, torch.ones_like(f), done.float()


def mlp(out):
    return nn.Sequential(nn.Linear(4, a.hidden), nn.Tanh(), nn.Linear(a.hidden, a.hidden), nn.Tanh(),
                         nn.Linear(a.hidden, out))


actor, critic = mlp(2).to(dev), mlp(1).to(dev)
opt = torch.optim.Adam(list(actor.parameters()) + list(critic.parameters()), lr=2.5e-4, eps=1e-5)
env = CartPole(a.envs)
obs = env.state
T, N = a.horizon, a.envs
for update in range(a.updates):
    buf_obs = torch.zeros(T, N, 4, device=dev)
    buf_act, buf_logp, buf_rew, buf_done, buf_val = (torch.zeros(T, N, device=dev) for _ in range(5))
    with torch.no_grad():
        for t in range(T):
            dist = torch.distributions.Categorical(logits=actor(obs))
            act = dist.sample()
            buf_obs[t], buf_act[t], buf_logp[t] = obs, act.float(), dist.log_prob(act)
            buf_val[t] = critic(obs).squeeze(1)
            obs, rew, done = env.step(act)
            buf_rew[t], buf_done[t] = rew, done
        next_val = critic(obs).squeeze(1)
        adv = torch.zeros(T, N, device=dev)
        last = torch.zeros(N, device=dev)
        for t in reversed(range(T)):
            nv = next_val if t == T - 1 else buf_val[t + 1]
            delta = buf_rew[t] + 0.99 * nv * (1 - buf_done[t]) - buf_val[t]
            last = delta + 0.99 * 0.95 * (1 - buf_done[t]) * last
            adv[t] = last
        ret = adv + buf_val
    b_obs, b_act, b_logp = buf_obs.reshape(-1, 4), buf_act.reshape(-1), buf_logp.reshape(-1)
    b_adv, b_ret = adv.reshape(-1), ret.reshape(-1)
    size = T * N // a.minibatches
    for epoch in range(a.epochs):
        perm = torch.randperm(T * N, device=dev)
        for s in range(0, T * N, size):
            mb = perm[s:s + size]
            dist = torch.distributions.Categorical(logits=actor(b_obs[mb]))
            ratio = (dist.log_prob(b_act[mb].long()) - b_logp[mb]).exp()
            mb_adv = (b_adv[mb] - b_adv[mb].mean()) / (b_adv[mb].std() + 1e-8)
            pg = torch.max(-mb_adv * ratio, -mb_adv * ratio.clamp(0.8, 1.2)).mean()
            v_loss = 0.5 * (critic(b_obs[mb]).squeeze(1) - b_ret[mb]).pow(2).mean()
            loss = pg + 0.5 * v_loss - 0.01 * dist.entropy().mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(list(actor.parameters()) + list(critic.parameters()), 0.5)
            opt.step()
    if update % 5 == 0:
        print(f"update {update} mean episode done rate {buf_done.mean().item():.4f} loss {loss.item():.4f}")
