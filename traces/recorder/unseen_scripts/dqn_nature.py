# Deep Q-learning with the Nature-DQN network (three convolutions and a 512-unit layer over 4 stacked 84x84 frames), as
# the Atari baselines write it, with the emulator replaced by a toy game simulated on the GPU (a paddle and a ball drawn
# into uint8 frames) for 16 environments stepped together: epsilon-greedy actions under no_grad, a uint8 replay buffer
# on the GPU, minibatches of 32, a target network synced every 1,000 updates, Huber loss, Adam. Small batches and many
# small kernels: one optimizer step per environment step.
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=3000)
ap.add_argument("--envs", type=int, default=16)
ap.add_argument("--batch", type=int, default=32)
ap.add_argument("--buffer", type=int, default=50_000)
ap.add_argument("--learning-starts", type=int, default=200)
ap.add_argument("--size", type=int, default=84)
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"
ACTIONS = 3  # left, stay, right


class QNetwork(nn.Module):
    def __init__(self, size):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(4, 32, 8, stride=4), nn.ReLU(), nn.Conv2d(32, 64, 4, stride=2), nn.ReLU(),
                                  nn.Conv2d(64, 64, 3, stride=1), nn.ReLU(), nn.Flatten())
        n = self.conv(torch.zeros(1, 4, size, size)).shape[1]
        self.head = nn.Sequential(nn.Linear(n, 512), nn.ReLU(), nn.Linear(512, ACTIONS))

    def forward(self, frames):
        return self.head(self.conv(frames.float() / 255.0))


class Paddle:  # the toy game: catch the falling ball
    def __init__(self, n, size):
        self.n, self.s = n, size
        self.ball = torch.zeros(n, 2, device=dev)
        self.paddle = torch.full((n,), size / 2, device=dev)
        self.frames = torch.zeros(n, 4, size, size, dtype=torch.uint8, device=dev)
        self.grid = torch.arange(size, device=dev, dtype=torch.float32)
        self.reset(torch.ones(n, dtype=torch.bool, device=dev))

    def reset(self, done):
        self.ball[done, 0] = 0
        self.ball[done, 1] = torch.rand(int(done.sum()), device=dev) * (self.s - 1)

    def draw(self):
        yy, xx = self.grid.view(1, -1, 1), self.grid.view(1, 1, -1)
        ball = ((yy - self.ball[:, 0, None, None]).abs() < 2) & ((xx - self.ball[:, 1, None, None]).abs() < 2)
        pad = (yy >= self.s - 3) & ((xx - self.paddle[:, None, None]).abs() < 6)
        frame = ((ball | pad).to(torch.uint8) * 255)
        self.frames = torch.cat([self.frames[:, 1:], frame[:, None]], 1)
        return self.frames

    def step(self, action):
        self.paddle = (self.paddle + (action.float() - 1) * 3).clamp(0, self.s - 1)
        self.ball[:, 0] += 2
        done = self.ball[:, 0] >= self.s - 3
        reward = torch.where(done, ((self.ball[:, 1] - self.paddle).abs() < 6).float() * 2 - 1, torch.zeros_like(self.paddle))
        self.reset(done)
        return self.draw(), reward, done


q, target = QNetwork(a.size).to(dev), QNetwork(a.size).to(dev)
target.load_state_dict(q.state_dict())
opt = torch.optim.Adam(q.parameters(), lr=1e-4, eps=1e-4)
env = Paddle(a.envs, a.size)
obs_buf = torch.zeros(a.buffer, 4, a.size, a.size, dtype=torch.uint8, device=dev)
next_buf = torch.zeros_like(obs_buf)
act_buf = torch.zeros(a.buffer, dtype=torch.long, device=dev)
rew_buf = torch.zeros(a.buffer, device=dev)
done_buf = torch.zeros(a.buffer, device=dev)
obs, filled, pos = env.draw().clone(), 0, 0
for step in range(a.steps + a.learning_starts):
    eps = max(0.05, 1 - step / 2000)
    with torch.no_grad():
        greedy = q(obs).argmax(1)
    explore = torch.rand(a.envs, device=dev) < eps
    action = torch.where(explore, torch.randint(0, ACTIONS, (a.envs,), device=dev), greedy)
    nxt, reward, done = env.step(action)
    slots = (torch.arange(a.envs, device=dev) + pos) % a.buffer
    obs_buf[slots], next_buf[slots], act_buf[slots], rew_buf[slots], done_buf[slots] = obs, nxt, action, reward, done.float()
    pos, filled, obs = (pos + a.envs) % a.buffer, min(filled + a.envs, a.buffer), nxt.clone()
    if step < a.learning_starts:
        continue
    idx = torch.randint(0, filled, (a.batch,), device=dev)
    with torch.no_grad():
        best = target(next_buf[idx]).max(1).values
        y = rew_buf[idx] + 0.99 * best * (1 - done_buf[idx])
    loss = F.smooth_l1_loss(q(obs_buf[idx]).gather(1, act_buf[idx, None]).squeeze(1), y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    nn.utils.clip_grad_norm_(q.parameters(), 10.0)
    opt.step()
    if step % 1000 == 0:
        target.load_state_dict(q.state_dict())
    if (step - a.learning_starts) % 500 == 0:
        print(f"step {step} loss {loss.item():.4f} eps {eps:.2f}")
