#include "fuzz/fuzz_support.hpp"

#include "sim/core/errors.hpp"

#include <cstdio>
#include <cstdlib>
#include <cxxabi.h>
#include <filesystem>
#include <fstream>
#include <memory>
#include <typeinfo>
#include <unistd.h>

namespace dvfs::fuzz {

namespace {

std::string demangled(const char* name) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> d(abi::__cxa_demangle(name, nullptr, nullptr, &status), std::free);
  return status == 0 && d ? d.get() : name;
}

[[noreturn]] void finding(const char* target, const std::string& type, const char* what) {
  std::fprintf(stderr, "FINDING %s: uncaught %s: %s\n", target, type.c_str(), what);
  std::fflush(stderr);
  std::abort();
}

}  // namespace

void expect_input_errors_only(const char* target, const std::function<void()>& body) {
  try {
    body();
  } catch (const InputError& e) {
    // the expected outcome of a bad input: exit 2 with one line (DVFS_FUZZ_VERBOSE=1 prints it)
    static const bool verbose = std::getenv("DVFS_FUZZ_VERBOSE") != nullptr;
    if (verbose) std::fprintf(stderr, "%s: input error: %s\n", target, e.what());
  } catch (const std::exception& e) {
    finding(target, demangled(typeid(e).name()), e.what());
  } catch (...) {
    finding(target, "non-std exception", "");
  }
}

namespace {
struct ScratchDir {
  std::string path;
  ScratchDir() {
    const char* tmp = std::getenv("TMPDIR");
    path = std::string(tmp && *tmp ? tmp : "/tmp") + "/dvfs-fuzz-" + std::to_string(::getpid());
    std::filesystem::create_directories(path);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};
}  // namespace

const std::string& scratch_dir() {
  static const ScratchDir dir;
  return dir.path;
}

void write_file(const std::string& path, const std::uint8_t* data, std::size_t size) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!f) {
    std::fprintf(stderr, "fuzz: cannot write %s\n", path.c_str());
    std::abort();
  }
}

void copy_file(const std::string& from, const std::string& to) {
  std::filesystem::copy_file(from, to, std::filesystem::copy_options::overwrite_existing);
}

std::string source_dir() { return DVFS_FUZZ_DATA_DIR; }

}  // namespace dvfs::fuzz
