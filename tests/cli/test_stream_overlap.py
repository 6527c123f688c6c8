"""Imported multi-rank traces: NCCL kernels replayed beside the compute they overlapped (scenario key stream_overlap,
run --stream-overlap; issue 19) against the importer's busy union."""
import json

from cli_errors import assert_one_line_error


def rank_trace(rank):
    # GEMM A 0-2 ms on stream 7; an all-reduce of 100 MB on stream 20 from 0.1 ms (1 ms recorded); GEMM B 2-3 ms.
    events = []
    for name, ts, dur, nccl in (("ampere_bf16_gemm", 0, 2000, False), ("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 100, 1000, True),
                                ("ampere_bf16_gemm", 2000, 1000, False)):
        args = {"device": 0, "stream": 20 if nccl else 7}
        if nccl:
            args.update({"blocks per SM": 0.12, "Collective name": "allreduce", "dtype": "Float", "In msg nelems": 25000000,
                         "Out msg nelems": 25000000, "Group size": 2, "Process Group Name": "0", "Process Group Ranks": "[0, 1]"})
        events.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": dur, "args": args})
    return {"distributedInfo": {"backend": "nccl", "rank": rank, "world_size": 2}, "traceEvents": events}


def scenario(tmp_path, **extra):
    for r in (0, 1):
        (tmp_path / f"rank{r}.json").write_text(json.dumps(rank_trace(r)))
    s = {"name": "overlap", "trace": ["rank0.json", "rank1.json"], "gpu": "h200", "policy": "max",
         "cluster": {"gpus_per_node": 1}, **extra}
    path = tmp_path / "s.json"
    path.write_text(json.dumps(s))
    return path


def totals(cli, path, out, *flags):
    r = cli("run", path, "--json", "-o", out, *flags)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["totals"]


def test_the_default_runs_the_all_reduce_beside_the_gemm_and_busy_union_switches_back(cli, tmp_path):
    path = scenario(tmp_path)
    beside = totals(cli, path, tmp_path / "a")
    serial = totals(cli, path, tmp_path / "b", "--stream-overlap", "busy-union")
    assert beside["time_s"] < serial["time_s"]
    assert beside["energy_j"] < serial["energy_j"]
    assert beside["time_s"] > 3e-3  # the two GEMMs alone
    keyed = totals(cli, scenario(tmp_path, stream_overlap="busy-union"), tmp_path / "c")
    assert keyed == serial
    assert totals(cli, path, tmp_path / "d", "--stream-overlap", "contention") == beside


def test_a_bad_stream_overlap_is_one_line_naming_the_field(cli, tmp_path):
    assert_one_line_error(cli("run", scenario(tmp_path, stream_overlap="serial"), "-o", tmp_path / "o"),
                          "stream_overlap", "\"contention\" or \"busy-union\"")
    assert_one_line_error(cli("run", scenario(tmp_path), "--stream-overlap", "overlap", "-o", tmp_path / "o"),
                          "--stream-overlap", "contention or busy-union")
