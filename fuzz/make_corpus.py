#!/usr/bin/env python3
"""Rebuilds the committed seed corpora of fuzz/ from inputs the project ships (run from anywhere).

Each corpus stays small (a few KB per file): test fixtures as they are, and slices of shipped
recordings, scenarios and Perseus plans. libFuzzer grows its own working corpus from these; the
committed seeds only give every target a start inside the formats.
"""
import gzip
import json
import os
import shutil

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "fuzz", "corpus")


def write(target, name, text):
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    mode = "wb" if isinstance(text, bytes) else "w"
    with open(os.path.join(d, name), mode) as f:
        f.write(text)


def load_trace(rel):
    path = os.path.join(ROOT, rel)
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def trace_slice(doc, per_category=12, window_us=None):
    """The metadata and the first events of each category from the first GPU annotation (a step) on,
    so that the slice still holds a step, kernels, their launches and the flows linking them."""
    events = doc["traceEvents"]
    starts = [e["ts"] for e in events if e.get("cat") == "gpu_user_annotation" and "ts" in e]
    t0 = min(starts) if starts else min(e["ts"] for e in events if "ts" in e)
    kept, count = [], {}
    for e in sorted((e for e in events if "ts" in e and e["ts"] >= t0), key=lambda e: e["ts"]):
        if window_us is not None and e["ts"] > t0 + window_us:
            break
        c = e.get("cat")
        if count.get(c, 0) < per_category:
            count[c] = count.get(c, 0) + 1
            kept.append(e)
    meta = [e for e in events if e.get("ph") == "M"][:6]
    out = {k: v for k, v in doc.items() if k != "traceEvents"}
    if "deviceProperties" in out:
        out["deviceProperties"] = out["deviceProperties"][:1]
    out["traceEvents"] = meta + kept
    return json.dumps(out, separators=(",", ":"))


def kineto():
    for name in ["kineto_current.json", "kineto_2021.json", "overlapping_streams.json", "bad_duration.json",
                 "no_kernels.json", "no_trace_events.json"]:
        shutil.copy(os.path.join(ROOT, "tests", "fixtures", name), os.path.join(OUT, "kineto_importer", name))
    for rel, name in [("traces/recordings/h200-power/add-bf16/trace.json.gz", "slice-add-bf16.json"),
                      ("traces/recordings/h200-gpt3xl/trace.json.gz", "slice-gpt3xl.json"),
                      ("traces/recordings/h200-gpt3xl-ddp1/rank0/trace.json.gz", "slice-gpt3xl-ddp1-rank0.json")]:
        write("kineto_importer", name, trace_slice(load_trace(rel)))
    # the fixture's times on the epoch clock at ns resolution (19 significant digits, no baseTimeNanoseconds): the
    # streaming reader once read such numbers as 0 (docs/trace-formats.md)
    doc = json.load(open(os.path.join(ROOT, "tests", "fixtures", "kineto_current.json")))
    doc.pop("baseTimeNanoseconds", None)
    text = json.dumps(doc, separators=(",", ":"))
    for e in doc["traceEvents"]:
        if "ts" in e:
            text = text.replace('"ts":%s,' % json.dumps(e["ts"]), '"ts":%d.047,' % (1712195495000000 + e["ts"]), 1)
    write("kineto_importer", "epoch-ns-times.json", text)
    # record_param_comms ranges (collectives) of the DDP recording
    doc = load_trace("traces/recordings/h200-gpt3xl-ddp1/rank0/trace.json.gz")
    comms = [e for e in doc["traceEvents"] if e.get("name") == "record_param_comms"][:3]
    base = json.loads(trace_slice(doc, per_category=6))
    base["traceEvents"] += comms
    write("kineto_importer", "slice-ddp1-comms.json", json.dumps(base, separators=(",", ":")))
    # a PyTorch 2.0 / 2.1 rank: no "Collective name", its NCCL kernels named by the "nccl:" annotations around their
    # launches (a collective, a send and a receive read from "R->D" / "R<-S"; docs/trace-formats.md)
    events = [{"ph": "X", "cat": "kernel", "name": "ampere_bf16_gemm", "pid": 0, "tid": 7, "ts": 0, "dur": 100,
               "args": {"device": 0, "stream": 7, "correlation": 1}}]
    for k, (name, dims, dtype) in enumerate([("nccl:all_reduce", [[1000]], "float"), ("nccl:send 1->0", [[64, 8]], "c10::BFloat16"),
                                             ("nccl:recv 1<-0", [[16]], "long")]):
        t, corr = 100 + 200 * k, 10 + k
        events += [{"ph": "X", "cat": "user_annotation", "name": name, "pid": 1, "tid": 5, "ts": t, "dur": 20,
                    "args": {"Input Dims": dims, "Input type": [dtype]}},
                   {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 5, "ts": t + 5, "dur": 1,
                    "args": {"correlation": corr}},
                   {"ph": "X", "cat": "kernel", "name": "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t", "pid": 0, "tid": 20,
                    "ts": t + 10, "dur": 150, "args": {"device": 0, "stream": 20, "correlation": corr}}]
    doc = {"distributedInfo": {"backend": "nccl", "rank": 1, "world_size": 2}, "traceEvents": events}
    write("kineto_importer", "pytorch-2.0-annotated-comms.json", json.dumps(doc, separators=(",", ":")))
    # batch_isend_irecv as PyTorch 2.11 records it (tests/fixtures/pytorch/batched_p2p_h100_torch2.11.json, recorded):
    # per-call record_param_comms launching nothing, then one kernel launched inside "nccl:coalesced"; two batches
    doc = json.load(open(os.path.join(ROOT, "tests", "fixtures", "pytorch", "batched_p2p_h100_torch2.11.json")))
    kept = [e for e in doc["traceEvents"] if e.get("name") in ("record_param_comms", "nccl:coalesced", "cuLaunchKernelEx")
            or (e.get("cat") == "kernel" and "SendRecv" in e.get("name", ""))]
    kept.sort(key=lambda e: e.get("ts", 0))
    first = [i for i, e in enumerate(kept) if e.get("name") == "record_param_comms" and e["args"].get("Collective name") == "send"][0]
    doc = {"distributedInfo": doc["distributedInfo"], "traceEvents": kept[first:first + 14]}
    write("kineto_importer", "pytorch-2.11-batched-p2p.json", json.dumps(doc, separators=(",", ":")))
    # the same batches as dvfs-sim's Kineto export writes them: "Batched calls" on the kernel (docs/trace-export.md)
    call = {"dtype": "Byte", "In msg nelems": 64, "Out msg nelems": 64, "Group size": 2, "Process Group Name": "0",
            "Process Group Ranks": "[0, 1]"}
    batch = [dict(call, **{"Collective name": "send", "Dst Rank": 1}), dict(call, **{"Collective name": "recv", "Src Rank": 1})]
    events = [{"ph": "X", "cat": "kernel", "name": "ncclDevKernel_SendRecv", "pid": 0, "tid": 20, "ts": 10, "dur": 50,
               "args": {"device": 0, "stream": 20, "Collective name": "coalesced", "Batched calls": batch}}]
    doc = {"distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 2}, "traceEvents": events}
    write("kineto_importer", "exported-batched-calls.json", json.dumps(doc, separators=(",", ":")))


def scenarios():
    d = os.path.join(ROOT, "scenarios")
    for sub, _, files in os.walk(d):
        for f in sorted(files):
            if f.endswith(".json"):
                rel = os.path.relpath(os.path.join(sub, f), d)
                with open(os.path.join(sub, f)) as src:
                    text = src.read()
                if "/" not in rel:  # the target reads scenarios one folder below scenarios/, as most are
                    text = text.replace('"../', '"../../')
                write("scenario_file", rel.replace("/", "__"), text)


def telemetry():
    rec = os.path.join(ROOT, "traces", "recordings", "h200-power", "add-bf16")
    with open(os.path.join(rec, "run.json")) as f:
        run = json.load(f)
    run["device"].pop("supported_sm_mhz", None)
    prof = next(p for p in run["phases"] if p["name"] == "train:profiled")
    with open(os.path.join(rec, "telemetry.csv")) as f:
        lines = f.read().splitlines()
    header, rows = lines[0], lines[1:]
    inside = [r for r in rows if prof["t0_ns"] - 2e8 <= int(r.split(",")[0]) <= prof["t1_ns"] + 2e8]
    csv = "\n".join([header] + inside) + "\n"
    write("telemetry", "add-bf16", csv + "@run.json\n" + json.dumps(run, separators=(",", ":")))
    # the same without the steady window, and without energy / power columns
    no_micro = {k: v for k, v in run.items() if k != "micro"}
    write("telemetry", "add-bf16-no-micro", csv + "@run.json\n" + json.dumps(no_micro, separators=(",", ":")))
    cols = header.split(",")
    keep = [cols.index(c) for c in ("t_ns", "sm_mhz", "mem_mhz")]
    slim = "\n".join(",".join(r.split(",")[i] for i in keep) for r in [header] + inside[:20]) + "\n"
    write("telemetry", "add-bf16-slim", slim + "@run.json\n" + json.dumps({"micro": run["micro"]}, separators=(",", ":")))
    write("telemetry", "csv-only", "\n".join([header] + rows[:8]) + "\n")


def plans():
    d = os.path.join(ROOT, "traces", "perseus-runs", "a100_gpt3-xl_pp4")
    for n in ["7", "37"]:
        with gzip.open(os.path.join(d, n + ".sched.json.gz"), "rt") as f:
            write("plan_file", n + ".sched.json", f.read())
    with open(os.path.join(d, "3.sched.json.gz"), "rb") as f:
        write("plan_file", "3.sched.json.gz", f.read())
    with gzip.open(os.path.join(d, "3.sched.json.gz"), "rt") as f:
        plan = json.load(f)
    small = [{"rank": r["rank"], "power_states": r["power_states"][:8]} for r in plan[:2]]
    write("plan_file", "per-computation-2x4.json", json.dumps(small))


if __name__ == "__main__":
    for t in ["kineto_importer", "scenario_file", "telemetry", "plan_file"]:
        shutil.rmtree(os.path.join(OUT, t), ignore_errors=True)
        os.makedirs(os.path.join(OUT, t))
    kineto()
    scenarios()
    telemetry()
    plans()
