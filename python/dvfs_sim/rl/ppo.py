"""A small PPO (Schulman et al. 2017, clipped objective, GAE) in PyTorch (Debian's python3-torch, CPU), for the
few-dimensional observations and actions of dvfs_sim.rl.PowerBudgetEnv. Episodes end by time limit only,
so the value of the last state is bootstrapped.
"""
import time

import numpy as np


class RunningNorm:
    """Running mean and variance of observations (Chan et al.'s parallel update), frozen for export."""

    def __init__(self, n):
        self.mean = np.zeros(n)
        self.var = np.ones(n)
        self.count = 1e-4

    def update(self, x):
        x = np.asarray(x, dtype=float)
        b_mean, b_var, b_n = x.mean(0), x.var(0), x.shape[0]
        delta = b_mean - self.mean
        tot = self.count + b_n
        self.mean = self.mean + delta * b_n / tot
        self.var = (self.var * self.count + b_var * b_n + delta ** 2 * self.count * b_n / tot) / tot
        self.count = tot

    @property
    def std(self):
        return np.sqrt(self.var) + 1e-8

    def __call__(self, x):
        return (np.asarray(x, dtype=float) - self.mean) / self.std


def _mlp(torch, sizes, out_act):
    nn = torch.nn
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(nn.Tanh())
    if out_act:
        layers.append(nn.Tanh())
    return nn.Sequential(*layers)


class PPO:
    def __init__(self, obs_size, act_size, hidden=64, lr=3e-4, seed=0, log_std=-0.7):
        import torch
        self.torch = torch
        torch.manual_seed(seed)
        torch.set_num_threads(1)
        self.actor = _mlp(torch, [obs_size, hidden, hidden, act_size], out_act=True)
        self.critic = _mlp(torch, [obs_size, hidden, hidden, 1], out_act=False)
        self.log_std = torch.nn.Parameter(torch.full((act_size,), float(log_std)))
        params = list(self.actor.parameters()) + list(self.critic.parameters()) + [self.log_std]
        self.opt = torch.optim.Adam(params, lr=lr)
        self.norm = RunningNorm(obs_size)
        self.rng = np.random.default_rng(seed)

    def act(self, obs, deterministic=False):
        torch = self.torch
        with torch.no_grad():
            x = torch.as_tensor(self.norm(obs), dtype=torch.float32)
            mean = self.actor(x)
            if deterministic:
                return mean.numpy(), 0.0, 0.0
            std = self.log_std.exp()
            a = mean + std * torch.as_tensor(self.rng.standard_normal(mean.shape), dtype=torch.float32)
            logp = torch.distributions.Normal(mean, std).log_prob(a).sum(-1)
            v = self.critic(x).squeeze(-1)
        return a.numpy(), float(logp), float(v)

    def value(self, obs):
        torch = self.torch
        with torch.no_grad():
            return float(self.critic(torch.as_tensor(self.norm(obs), dtype=torch.float32)).squeeze(-1))

    def update(self, batch, epochs=10, minibatch=256, clip=0.2, vf_coef=0.5, ent_coef=0.0, max_grad=0.5):
        torch = self.torch
        obs = torch.as_tensor(batch["obs"], dtype=torch.float32)  # normalised as the agent saw them
        act = torch.as_tensor(batch["act"], dtype=torch.float32)
        old_logp = torch.as_tensor(batch["logp"], dtype=torch.float32)
        adv = torch.as_tensor(batch["adv"], dtype=torch.float32)
        ret = torch.as_tensor(batch["ret"], dtype=torch.float32)
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        n = obs.shape[0]
        stats = {}
        for _ in range(epochs):
            idx = self.rng.permutation(n)
            for s in range(0, n, minibatch):
                j = torch.as_tensor(idx[s:s + minibatch])
                mean = self.actor(obs[j])
                dist = torch.distributions.Normal(mean, self.log_std.exp())
                logp = dist.log_prob(act[j]).sum(-1)
                ratio = (logp - old_logp[j]).exp()
                pg = -torch.min(ratio * adv[j], ratio.clamp(1 - clip, 1 + clip) * adv[j]).mean()
                vf = ((self.critic(obs[j]).squeeze(-1) - ret[j]) ** 2).mean()
                ent = dist.entropy().sum(-1).mean()
                loss = pg + vf_coef * vf - ent_coef * ent
                self.opt.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(list(self.actor.parameters()) + list(self.critic.parameters()) + [self.log_std], max_grad)
                self.opt.step()
                stats = {"policy_loss": float(pg), "value_loss": float(vf), "entropy": float(ent)}
        return stats

    def layers(self):
        """The actor as (weight, bias, activation) triples for a policy file."""
        out = []
        mods = list(self.actor)
        for i, m in enumerate(mods):
            if isinstance(m, self.torch.nn.Linear):
                act = "tanh" if i + 1 < len(mods) and isinstance(mods[i + 1], self.torch.nn.Tanh) else "linear"
                out.append((m.weight.detach().numpy(), m.bias.detach().numpy(), act))
        return out


class Runner:
    """Collects steps from `env` with `agent`, starting episodes with seeds drawn in turn from `seeds`."""

    def __init__(self, env, agent, seeds, gamma=0.99, lam=0.95):
        self.env, self.agent, self.seeds, self.gamma, self.lam = env, agent, seeds, gamma, lam
        self.obs, _ = env.reset(seed=next(seeds))
        self.ret = 0.0

    def collect(self, steps):
        """A batch of `steps` steps (observations normalised as the agent saw them) with GAE advantages,
        and the returns of the episodes that ended."""
        agent, env = self.agent, self.env
        raw, obs_l, act_l, logp_l, val_l, rew_l, done_l, last_v = [], [], [], [], [], [], [], []
        episode_returns = []
        for _ in range(steps):
            a, logp, v = agent.act(self.obs)
            nobs, r, term, trunc, info = env.step(np.clip(a, -1, 1))
            raw.append(self.obs)
            obs_l.append(agent.norm(self.obs))
            act_l.append(a), logp_l.append(logp), val_l.append(v), rew_l.append(r)
            self.ret += r
            end = term or trunc
            done_l.append(end)
            # Time-limit truncation: bootstrap from the value of the state reached.
            last_v.append(agent.value(nobs) if trunc and not term else 0.0)
            if end:
                episode_returns.append(self.ret)
                self.ret = 0.0
                nobs, _ = env.reset(seed=next(self.seeds))
            self.obs = nobs
        n = len(rew_l)
        adv = np.zeros(n)
        gae, next_v = 0.0, agent.value(self.obs)
        for t in reversed(range(n)):
            if done_l[t]:
                nv, gae = last_v[t], 0.0
            else:
                nv = next_v
            delta = rew_l[t] + self.gamma * nv - val_l[t]
            gae = delta + self.gamma * self.lam * gae
            adv[t] = gae
            next_v = val_l[t]
        batch = {"raw": np.array(raw), "obs": np.array(obs_l), "act": np.array(act_l), "logp": np.array(logp_l), "adv": adv,
                 "ret": adv + np.array(val_l)}
        return batch, episode_returns


def train(env, total_steps, seed=0, rollout=2048, log=print, **kw):
    """Trains a PPO agent on `env` for `total_steps` steps (episode seeds 1000 + seed * 100000 + k); returns it."""
    agent = PPO(env.observation_size, env.action_size, seed=seed, **kw)
    runner = Runner(env, agent, iter(range(1000 + seed * 100000, 10 ** 9)))
    t0, done_steps, recent = time.time(), 0, []
    while done_steps < total_steps:
        batch, rets = runner.collect(min(rollout, total_steps - done_steps))
        stats = agent.update(batch)
        agent.norm.update(batch["raw"])
        done_steps += len(batch["adv"])
        recent = (recent + rets)[-10:]
        if log:
            log(f"  {done_steps:7d} steps  {time.time() - t0:6.1f} s  mean return (last 10 episodes) "
                f"{np.mean(recent) if recent else float('nan'):8.2f}  std {float(agent.log_std.exp().mean()):.3f}  "
                f"value loss {stats.get('value_loss', 0):.3f}")
    return agent
