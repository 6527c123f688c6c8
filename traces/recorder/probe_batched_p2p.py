"""Probe: how a Kineto trace of PyTorch records batched sends and receives (batch_isend_irecv).

One process, one GPU, an NCCL group of one rank whose transfers go to itself (NCCL runs a rank's p2p to
itself), so the layout of the records can be read without a second GPU. Card settings untouched.
Usage: python3 probe_batched_p2p.py OUT_DIR
"""
import json, os, sys, traceback
import torch, torch.distributed as dist
from torch.profiler import profile, ProfilerActivity

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
os.environ.setdefault("MASTER_ADDR", "127.0.0.1"); os.environ.setdefault("MASTER_PORT", "29533")
dist.init_process_group("nccl", rank=0, world_size=1, device_id=torch.device("cuda:0"))
dev = torch.device("cuda:0")
a = torch.randn(1 << 20, device=dev, dtype=torch.bfloat16); b = torch.empty_like(a)
c = torch.randn(3 << 18, device=dev); d = torch.empty_like(c)
log = {"torch": torch.__version__, "nccl": ".".join(map(str, torch.cuda.nccl.version())), "cases": {}}

def case(name, fn):
    try:
        for _ in range(3): fn()
        torch.cuda.synchronize()
        log["cases"][name] = "ok"
    except Exception:
        log["cases"][name] = traceback.format_exc()

def batch_one():
    for w in dist.batch_isend_irecv([dist.P2POp(dist.isend, a, 0), dist.P2POp(dist.irecv, b, 0)]): w.wait()

def batch_four():
    ops = [dist.P2POp(dist.isend, a, 0), dist.P2POp(dist.isend, c, 0), dist.P2POp(dist.irecv, b, 0), dist.P2POp(dist.irecv, d, 0)]
    for w in dist.batch_isend_irecv(ops): w.wait()

def all_reduce():
    dist.all_reduce(c)

with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True, with_stack=False) as prof:
    case("all_reduce", all_reduce)
    x = a.float() * 2  # a compute kernel between the cases
    case("batch_send_recv_self", batch_one)
    y = c * 3
    case("batch_two_sends_two_recvs_self", batch_four)
    torch.cuda.synchronize()
prof.export_chrome_trace(os.path.join(out, "batched_p2p_trace.json"))
json.dump(log, open(os.path.join(out, "probe.json"), "w"), indent=1)
print(json.dumps(log, indent=1))
dist.destroy_process_group()
