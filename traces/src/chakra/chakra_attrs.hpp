#pragma once
// Attribute names dvfs-sim reads and writes in Chakra traces (docs/chakra.md). Chakra's own names (the ones its
// feeder and ASTRA-sim read) come first; the "dvfs." ones carry what a lossless round trip of a Workload needs
// and that Chakra has no field for (exact durations, host gaps, recorded clocks, work rates, steps, phases).
// Other readers ignore them.
namespace dvfs::chakra_attr {

// Chakra (ETFeederNode): node attributes and the value type its feeder reads them with.
inline constexpr const char* kIsCpuOp = "is_cpu_op";      // bool_val
inline constexpr const char* kNumOps = "num_ops";         // int64_val: operations (FLOPs) of a compute node
inline constexpr const char* kTensorSize = "tensor_size"; // uint64_val: bytes a node moves
inline constexpr const char* kCommType = "comm_type";     // int64_val: CollectiveCommType
inline constexpr const char* kCommSize = "comm_size";     // int64_val: bytes of a collective or message
inline constexpr const char* kCommSrc = "comm_src";       // int32_val: sending rank of a send / recv
inline constexpr const char* kCommDst = "comm_dst";       // int32_val: receiving rank
inline constexpr const char* kCommTag = "comm_tag";       // int32_val: matches a send with its recv
inline constexpr const char* kPgName = "pg_name";         // string_val: process group (absent: all ranks)

// dvfs-sim: GlobalMetadata attributes.
inline constexpr const char* kSchema = "schema";                 // string_val, written as kSchemaValue
inline constexpr const char* kSchemaValue = "dvfs-sim-chakra-1";
inline constexpr const char* kRank = "dvfs.rank";                // int64_val: the rank this file is
inline constexpr const char* kDeviceName = "dvfs.device_name";   // string_val
inline constexpr const char* kCommGroups = "dvfs.comm_groups";   // string_val, JSON [{pg_name, name, ranks, size}]
inline constexpr const char* kAnnotations = "dvfs.annotations";  // string_val, JSON {names, sets: [{phase, annotations}]}
inline constexpr const char* kSteps = "dvfs.steps";              // string_val, JSON [{label, lead_s, tail_s}]

// dvfs-sim: node attributes. kKernel is a double_list in the order of KernelValue (seconds), kKernelFloats a
// float_list in the order of KernelFloat (the Kernel's float fields, exactly), kKernelEnums an int64_list in the
// order of KernelEnum; a host-gap node (is_cpu_op, written for ASTRA-sim's timing) carries kGap.
inline constexpr const char* kKernel = "dvfs.kernel";
inline constexpr const char* kKernelFloats = "dvfs.kernel_floats";
inline constexpr const char* kKernelEnums = "dvfs.kernel_enums";
inline constexpr const char* kGap = "dvfs.gap";  // bool_val
enum KernelValue { kDuration, kGapBefore, kKernelValues };
// kUnvectorised was added after the first files were written: a list one shorter (without it) reads as 0.
enum KernelFloat { kSmMhz, kMemMhz, kSmFill, kTensor, kFma, kAlu, kMemory, kMemoryFill, kUnvectorised, kKernelFloatCount };
// kTensorIssue was added after the first files were written: a list one shorter (without it) reads as wgmma.
enum KernelEnum { kClass, kKind, kStream, kStep, kAnnotationSet, kPrecision, kWorkSource, kGroup, kTensorIssue, kKernelEnumCount };

}  // namespace dvfs::chakra_attr
