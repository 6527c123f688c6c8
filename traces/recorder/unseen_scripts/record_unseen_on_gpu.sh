#!/bin/bash
# Records every script of this folder with `python3 -m dvfs_sim.record` (scripts unedited) on an NVIDIA GPU: the
# eighth round's blind set (models/calibration/h200-power-split.json "unseen_workloads"). Usage:
#   record_unseen_on_gpu.sh PYTHONPATH_OF_DVFS_SIM OUT_DIR
# Writes OUT_DIR/unseen.tar.part-* (all recordings and logs, split under the device tool's 16 MiB file limit; the
# tool brings back at most ~60 MB per call: the first call's bert and lstm recordings were lost that way and recorded
# again with ONLY="bert-finetune-b32 lstm-lm-b64", bert with 25 profiled steps instead of 60).
# SET=2 records the second blind set instead, SET=3 the third (split: unseen_workloads_3; into h200-unseen-3, in
# two calls of the device tool: ONLY="fno-train-g256 r3d-video-b8 nerf-mlp-r4096 convnext-train-b64", then the rest),
# SET=4 the fourth (split: unseen_workloads_4; into h200-unseen-4, in two calls as well: ONLY="pointcloud-knn-b32
# whisper-stft-b16 int8-mlp-infer-t4096 fp8-linear-train-b16", then the rest), SET=5 the fifth (split:
# unseen_workloads_5; into h200-unseen-5, one call), SET=6 the sixth (split: unseen_workloads_6; into h200-unseen-6, in
# two calls: ONLY="graph-decode-b16 gp-fp64-n10k wavenet-b8", then the rest), SET=7 the seventh (split:
# unseen_workloads_7; into h200-unseen-7), SET=8 the eighth (split: unseen_workloads_8; into h200-unseen-8, shipped as
# h100-unseen-8 when the card is an H100), SET=9 the ninth (split: unseen_workloads_9; into h200-unseen-9; recorded on an H100 and shipped as h100-unseen-9,
# then again by the rule ninth_set_second_card: h200-unseen-9 on an H200, shipped as h100-unseen-9b on another H100). SET=prior records the class priors' fit set below the cap (split:
# shapeless_prior_fit_workloads; other sizes of ten of these scripts; into h200-prior-fit).
# Only reads NVML; changes no card setting.
PKG=$1; OUT=$2
unset STEP_ON  # set only as a prefix of one rec call (the PPO job), never inherited by every job
S=$(cd "$(dirname "$0")" && pwd)
NAME=h200-unseen; [ "${SET:-1}" != 1 ] && NAME=h200-unseen-$SET; [ "${SET:-1}" = prior ] && NAME=h200-prior-fit
W=$(mktemp -d)/$NAME
mkdir -p "$W/logs"
export PYTHONUNBUFFERED=1
{ python3 -c "import torch, pynvml; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'cudnn', torch.backends.cudnn.version())"
  nvidia-smi --query-gpu=name,serial,driver_version,power.draw,power.limit,clocks.sm,clocks.mem,temperature.gpu --format=csv; } > "$W/logs/env.log" 2>&1
rec() {  # [STEP_ON=SOURCE] rec NAME WARMUP:PROFILED -- python3 SCRIPT ARGS...; ONLY="NAME ..." records those only
  local name=$1 steps=$2; shift 3
  [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $name "* ]] && return 0
  local t0=$SECONDS
  PYTHONPATH=$PKG timeout 240 python3 -m dvfs_sim.record -o "$W/$name" --steps "$steps" ${STEP_ON:+--step-on "$STEP_ON"} -- "$@" > "$W/logs/$name.log" 2>&1
  local rc=$?
  echo "$name rc=$rc wall=$((SECONDS - t0)) s" | tee -a "$W/logs/summary.log"
  tail -3 "$W/logs/$name.log" | tee -a "$W/logs/summary.log"
}
if [ "${SET:-1}" = prior ]; then  # the class priors' fit set below the cap (split: shapeless_prior_fit_workloads)
  rec resnet50-infer-b8 20:200 -- python3 "$S/resnet50_infer.py" --batch 8
  rec mobilenet-train-b32 10:50 -- python3 "$S/mobilenet_train.py" --batch 32 --size 128
  rec gpt-fp32-train-b2-l6 10:40 -- python3 "$S/gpt_fp32_train.py" --batch 2 --layers 6
  rec lstm-lm-b16-h1024 10:50 -- python3 "$S/lstm_lm.py" --batch 16 --hidden 1024
  rec swin-t-b16 10:40 -- python3 "$S/swin_train.py" --batch 16
  rec t5-translate-b16 10:40 -- python3 "$S/t5_translate.py" --batch 16
  rec bert-finetune-b8-s256 10:50 -- python3 "$S/bert_finetune.py" --batch 8 --seq 256
  rec two-tower-b2048 10:60 -- python3 "$S/two_tower_retrieval.py" --batch 2048
  rec convnext-train-b16 10:50 -- python3 "$S/convnext_train.py" --batch 16
  rec vae-decode-b1 10:30 -- python3 "$S/vae_decode_infer.py" --batch 1
elif [ "${SET:-1}" = 9 ]; then  # the ninth blind set (split: unseen_workloads_9): lattice Boltzmann, fp64 CG, word2vec, EDSR, DQN, style transfer
  rec lbm-channel-8192x2048 10:120 -- python3 "$S/lbm_channel.py" --nx 8192 --ny 2048
  rec cg-poisson-fp64-n8192 5:60 -- python3 "$S/cg_poisson_fp64.py" --n 8192
  rec word2vec-sgns-b16k 20:300 -- python3 "$S/word2vec_sgns.py"
  rec edsr-x2-b16 10:150 -- python3 "$S/edsr_sr_train.py"
  STEP_ON=optimizer rec dqn-nature-16env 50:600 -- python3 "$S/dqn_nature.py"  # its actions run the network under no_grad first
  rec style-transfer-vgg19-512 3:40 -- python3 "$S/style_transfer_lbfgs.py"
elif [ "${SET:-1}" = 8 ]; then  # the eighth blind set (split: unseen_workloads_8): N-body, DiT, Monte Carlo, GPU augmentation, long context, PPO
  rec nbody-fp32-24k 10:80 -- python3 "$S/nbody_fp32.py"
  rec dit-sample-b8 20:300 -- python3 "$S/dit_sample.py"
  rec mc-asian-2m 10:200 -- python3 "$S/monte_carlo_paths.py" --runs 300
  rec gpu-augment-r18-b128 10:80 -- python3 "$S/gpu_augment_train.py"
  rec longctx-decode-16k 20:300 -- python3 "$S/longctx_decode.py"
  STEP_ON=optimizer rec ppo-cartpole-4k 10:300 -- python3 "$S/ppo_cartpole.py"  # its rollouts run the policy under no_grad first
elif [ "${SET:-1}" = 7 ]; then  # the seventh blind set (split: unseen_workloads_7): scans, stencils, LoRA, drafts, group-by
  rec selective-scan-lm-b8 5:30 -- python3 "$S/selective_scan_lm.py"
  rec heat3d-n320 10:150 -- python3 "$S/heat3d_stencil.py"
  rec kmeans-4m-k1024 5:40 -- python3 "$S/kmeans_cluster.py"
  rec lora-gpt-b8 5:30 -- python3 "$S/lora_finetune.py"
  rec speculative-decode-g4 50:400 -- python3 "$S/speculative_decode.py"
  rec gpu-groupby-16m 5:40 -- python3 "$S/gpu_groupby.py"
elif [ "${SET:-1}" = 6 ]; then  # the sixth blind set (split: unseen_workloads_6): CUDA graphs, fp64 cuSOLVER, scatter
  rec graph-decode-b16 30:500 -- python3 "$S/graph_decode.py"
  rec gp-fp64-n10k 10:40 -- python3 "$S/gp_fp64_train.py"
  rec wavenet-b8 10:40 -- python3 "$S/wavenet_train.py"
  rec two-tower-b8192 10:60 -- python3 "$S/two_tower_retrieval.py"
  rec swin-t-b64 10:40 -- python3 "$S/swin_train.py"
  rec gat-300k 10:60 -- python3 "$S/gat_train.py"
elif [ "${SET:-1}" = 5 ]; then  # the fifth blind set (split: unseen_workloads_5): transposed convolutions
  rec dcgan-train-b256 10:60 -- python3 "$S/dcgan_train.py"
  rec unet-seg-train-b16 10:40 -- python3 "$S/unet_seg_train.py"
elif [ "${SET:-1}" = 4 ]; then  # the fourth blind set (split: unseen_workloads_4)
  rec pointcloud-knn-b32 10:60 -- python3 "$S/pointcloud_knn_train.py"
  rec whisper-stft-b16 10:60 -- python3 "$S/whisper_stft_train.py"
  rec int8-mlp-infer-t4096 10:150 -- python3 "$S/int8_mlp_infer.py"
  rec fp8-linear-train-b16 10:40 -- python3 "$S/fp8_linear_train.py"
  rec compile-gpt-train-b8 10:80 -- python3 "$S/compile_gpt_train.py"
  rec beam-search-b8 5:20 -- python3 "$S/beam_search_decode.py"
  rec llama-longseq-8k 5:25 -- python3 "$S/llama_longseq_ckpt_train.py"
  rec lightgcn-train-100k 10:300 -- python3 "$S/lightgcn_sparse_train.py"
elif [ "${SET:-1}" = 3 ]; then  # the third blind set (split: unseen_workloads_3)
  rec fno-train-g256 10:80 -- python3 "$S/fno_train.py"
  rec r3d-video-b8 10:60 -- python3 "$S/conv3d_video_train.py"
  rec nerf-mlp-r4096 20:150 -- python3 "$S/nerf_mlp_train.py"
  rec convnext-train-b64 10:50 -- python3 "$S/convnext_train.py"
  rec clip-train-b256 10:40 -- python3 "$S/clip_train.py"
  rec gpt-fp32-train-b4 10:40 -- python3 "$S/gpt_fp32_train.py"
  rec vae-decode-b4 5:30 -- python3 "$S/vae_decode_infer.py"
elif [ "${SET:-1}" = 2 ]; then  # the second blind set (split: unseen_workloads_2)
  rec llama-sft-b8 10:50 -- python3 "$S/llama_sft.py"
  rec gcn-train-200k 5:40 -- python3 "$S/gcn_train.py"
  rec speech-ctc-b8 10:50 -- python3 "$S/speech_ctc.py"
  rec t5-translate-b48 10:40 -- python3 "$S/t5_translate.py"
  rec vit-compile-infer-b64 20:400 -- python3 "$S/vit_compile_infer.py"
else
rec bert-finetune-b32 10:25 -- python3 "$S/bert_finetune.py"
rec lstm-lm-b64 5:25 -- python3 "$S/lstm_lm.py"
rec unet-denoise-b32 10:50 -- python3 "$S/unet_denoise.py"
rec resnet50-infer-fp16-b32 10:400 -- python3 "$S/resnet50_infer.py"
rec dlrm-train-b4096 10:200 -- python3 "$S/dlrm_train.py"
rec gpt-decode-b4 20:300 -- python3 "$S/gpt_decode.py"
rec mobilenet-train-b128 10:50 -- python3 "$S/mobilenet_train.py"
rec moe-train-b16 10:60 -- python3 "$S/moe_train.py"
fi
nvidia-smi --query-gpu=power.draw,clocks.sm,temperature.gpu --format=csv >> "$W/logs/env.log" 2>&1
du -sh "$W"/* | tee -a "$W/logs/summary.log"
for f in "$W"/*/telemetry.csv; do gzip -9 "$f"; done  # for the transfer; unzipped when shipped
tar cf - -C "$(dirname "$W")" "$NAME" | split -b 15m - "$OUT/unseen.tar.part-"
ls -la "$OUT"
