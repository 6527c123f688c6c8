"""An I/O-heavy CNN training job, recorded phase by phase (issue 20): a generated image dataset written as
files (JPEG through PIL when it is installed, else zlib-compressed raw RGB), a staging copy from a "shared"
folder to a local scratch folder, DataLoader workers that decode and augment every image, training epochs
of a ResNet-18-like CNN (no torchvision), validation after every epoch and a checkpoint (fsync'd) after
every epoch. Runs on CUDA when there is one (the recording), on the CPU otherwise (tests, tiny sizes).

    python3 cnn_io_job.py --out DIR [--images N] [--size PX] [--train-seconds S] [--workers W] ...

Writes DIR/recording/ (dvfs_sim.record layout: trace of a few profiled steps, telemetry.csv, host.csv,
lifecycle.json, run.json) and DIR/job.json (what ran). Epochs run until --train-seconds have passed.
"""
import argparse
import io
import json
import os
import shutil
import sys
import time
import zlib
from multiprocessing import Pool

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    from PIL import Image
except ImportError:  # the fallback format: zlib-compressed raw RGB
    Image = None

from dvfs_sim.record import Recorder


def make_image(args):
    i, size, fmt = args
    rng = np.random.default_rng(i)
    y, x = np.mgrid[0:size, 0:size].astype(np.float32) / size
    c = rng.uniform(0, 1, (3, 3))
    img = np.stack([np.sin(6.28 * (c[k, 0] * x + c[k, 1] * y) * (1 + 4 * c[k, 2])) for k in range(3)], -1)
    img = ((img * 0.4 + 0.5 + rng.normal(0, 0.08, img.shape)) * 255).clip(0, 255).astype(np.uint8)
    label = i % 100
    if fmt == "jpeg":
        buf = io.BytesIO()
        Image.fromarray(img).save(buf, format="JPEG", quality=90)
        data = buf.getvalue()
    else:
        data = size.to_bytes(2, "little") + zlib.compress(img.tobytes(), 6)
    return i, label, data


def generate(folder, n, size, fmt, procs):
    os.makedirs(folder, exist_ok=True)
    labels = {}
    with Pool(procs) as pool:
        for i, label, data in pool.imap_unordered(make_image, [(i, size, fmt) for i in range(n)], chunksize=64):
            name = f"{i:07d}.{'jpg' if fmt == 'jpeg' else 'zrgb'}"
            with open(os.path.join(folder, name), "wb") as f:
                f.write(data)
            labels[name] = label
    with open(os.path.join(folder, "labels.json"), "w") as f:
        json.dump(labels, f)


def decode(path, fmt):
    with open(path, "rb") as f:
        data = f.read()
    if fmt == "jpeg":
        return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))
    size = int.from_bytes(data[:2], "little")
    return np.frombuffer(zlib.decompress(data[2:]), np.uint8).reshape(size, size, 3)


class ImageFolder(torch.utils.data.Dataset):
    def __init__(self, folder, names, fmt, crop, train):
        with open(os.path.join(folder, "labels.json")) as f:
            self.labels = json.load(f)
        self.folder, self.names, self.fmt, self.crop, self.train = folder, names, fmt, crop, train

    def __len__(self):
        return len(self.names)

    def __getitem__(self, k):
        name = self.names[k]
        img = decode(os.path.join(self.folder, name), self.fmt).astype(np.float32) / 255.0
        s = img.shape[0] - self.crop
        rng = np.random.default_rng() if self.train else None
        oy, ox = (int(rng.integers(0, s + 1)), int(rng.integers(0, s + 1))) if self.train else (s // 2, s // 2)
        img = img[oy:oy + self.crop, ox:ox + self.crop]
        if self.train and rng.random() < 0.5:
            img = img[:, ::-1]
        img = (img - 0.5) / 0.25
        return torch.from_numpy(np.ascontiguousarray(img.transpose(2, 0, 1))), self.labels[name]


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.b1 = nn.BatchNorm2d(cout)
        self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.b2 = nn.BatchNorm2d(cout)
        self.skip = (nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
                     if stride != 1 or cin != cout else nn.Identity())

    def forward(self, x):
        return F.relu(self.b2(self.c2(F.relu(self.b1(self.c1(x))))) + self.skip(x))


class ResNet18Like(nn.Module):
    def __init__(self, classes=100, width=64):
        super().__init__()
        w = width
        self.stem = nn.Sequential(nn.Conv2d(3, w, 7, 2, 3, bias=False), nn.BatchNorm2d(w), nn.ReLU(), nn.MaxPool2d(3, 2, 1))
        layers, cin = [], w
        for cout, stride in ((w, 1), (w, 1), (2 * w, 2), (2 * w, 1), (4 * w, 2), (4 * w, 1), (8 * w, 2), (8 * w, 1)):
            layers.append(Block(cin, cout, stride))
            cin = cout
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(cin, classes)

    def forward(self, x):
        return self.head(F.adaptive_avg_pool2d(self.body(self.stem(x)), 1).flatten(1))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--images", type=int, default=40000)
    p.add_argument("--val-images", type=int, default=4000)
    p.add_argument("--size", type=int, default=144)
    p.add_argument("--crop", type=int, default=128)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--workers", type=int, default=8)
    p.add_argument("--gen-procs", type=int, default=max(1, (os.cpu_count() or 2) - 1))
    p.add_argument("--train-seconds", type=float, default=75.0)
    p.add_argument("--max-epochs", type=int, default=50)
    p.add_argument("--steps", default="20:5", help="recorder WARMUP:PROFILED steps (a Kineto trace of PROFILED steps)")
    p.add_argument("--idle-s", type=float, default=2.0)
    a = p.parse_args()
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    fmt = "jpeg" if Image is not None else "zrgb"
    shared, local = os.path.join(a.out, "shared", "dataset"), os.path.join(a.out, "local", "dataset")
    ckpt_dir = os.path.join(a.out, "local", "checkpoints")
    os.makedirs(ckpt_dir, exist_ok=True)
    warm, prof = (int(x) for x in a.steps.split(":"))
    rec = Recorder(os.path.join(a.out, "recording"), warmup=warm, profiled=prof, idle_s=a.idle_s,
                   command="cnn_io_job.py " + " ".join(sys.argv[1:]), nvml_module=os.environ.get("DVFS_NVML", "pynvml"))
    job = {"script": "cnn_io_job.py", "args": vars(a), "device": dev, "image_format": fmt, "epochs": [], "torch": torch.__version__}
    t_job = time.time()
    with rec:
        with rec.phase("generate dataset (not part of the job: makes its input)", "setup"):
            generate(shared, a.images + a.val_images, a.size, fmt, a.gen_procs)
        with rec.phase("staging copy shared -> local", "staging"):
            if os.path.exists(local):
                shutil.rmtree(local)
            shutil.copytree(shared, local)
            os.sync()
        names = sorted(n for n in os.listdir(local) if n != "labels.json")
        job["dataset_bytes"] = sum(os.path.getsize(os.path.join(local, n)) for n in names)
        with rec.phase("model set-up", "setup"):
            model = ResNet18Like().to(dev).to(memory_format=torch.channels_last)
            opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-5, nesterov=True)
            tr = torch.utils.data.DataLoader(ImageFolder(local, names[:a.images], fmt, a.crop, True), batch_size=a.batch,
                                             shuffle=True, num_workers=a.workers, pin_memory=dev == "cuda", drop_last=True,
                                             persistent_workers=a.workers > 0, prefetch_factor=4 if a.workers else None)
            va = torch.utils.data.DataLoader(ImageFolder(local, names[a.images:], fmt, a.crop, False), batch_size=a.batch,
                                             num_workers=a.workers, pin_memory=dev == "cuda")
        rec.install_lifecycle_hooks()
        amp = torch.autocast(dev, dtype=torch.bfloat16) if dev == "cuda" else torch.autocast("cpu", dtype=torch.bfloat16)
        t_train = time.time()
        for epoch in range(a.max_epochs):
            model.train()
            steps = 0
            with rec.phase(f"epoch {epoch}", "train"):
                for x, y in tr:
                    x = x.to(dev, non_blocking=True).to(memory_format=torch.channels_last)
                    y = y.to(dev, non_blocking=True)
                    with amp:
                        loss = F.cross_entropy(model(x), y)
                    opt.zero_grad(set_to_none=True)
                    loss.backward()
                    opt.step()
                    rec.step()
                    steps += 1
                if dev == "cuda":
                    torch.cuda.synchronize()
            model.eval()  # the validation marker opens here and closes at the next model.train()
            correct = total = 0
            with torch.no_grad(), amp:
                for x, y in va:
                    out = model(x.to(dev, non_blocking=True).to(memory_format=torch.channels_last))
                    correct += (out.argmax(1).cpu() == y).sum().item()
                    total += len(y)
            model.train()
            with rec.phase(f"checkpoint epoch {epoch}", "checkpoint"):
                path = os.path.join(ckpt_dir, f"epoch{epoch}.pt")
                with open(path, "wb") as f:
                    torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "epoch": epoch}, f)
                    f.flush()
                    os.fsync(f.fileno())
            job["epochs"].append({"epoch": epoch, "steps": steps, "loss": float(loss), "val_acc": correct / max(1, total),
                                  "checkpoint_bytes": os.path.getsize(path)})
            print(f"epoch {epoch}: {steps} steps, loss {float(loss):.3f}, val acc {correct / max(1, total):.3f}", flush=True)
            if time.time() - t_train >= a.train_seconds:
                break
    job["wall_s"] = time.time() - t_job
    with open(os.path.join(a.out, "job.json"), "w") as f:
        json.dump(job, f, indent=1)


if __name__ == "__main__":
    main()
