#pragma once
// What every fuzz target shares. A reader given bad input must throw InputError (the CLI's exit 2,
// sim/core/errors.hpp): that is the expected outcome. Anything else -- another exception, a crash, a
// sanitizer report, a huge allocation (libFuzzer's -malloc_limit_mb / -rss_limit_mb), a hang
// (-timeout) -- is a finding; an unexpected exception prints one "FINDING" line and aborts, so that
// libFuzzer keeps the input.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace dvfs::fuzz {

// Runs `body`; InputError is swallowed (printed with DVFS_FUZZ_VERBOSE=1: how far a seed gets), any other
// exception is reported as a finding of `target`.
void expect_input_errors_only(const char* target, const std::function<void()>& body);

// A scratch directory private to this process (fuzz targets that read files write the input there);
// removed at exit.
const std::string& scratch_dir();
void write_file(const std::string& path, const std::uint8_t* data, std::size_t size);
void copy_file(const std::string& from, const std::string& to);

// The source tree: shipped traces, models, the classification table.
std::string source_dir();

}  // namespace dvfs::fuzz
