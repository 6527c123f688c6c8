#pragma once
// A fresh directory under /tmp for one test case, removed with everything in it when the case ends, so that a
// test run leaves nothing behind (the suite runs hundreds of times on a developer's machine and in CI).
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace dvfs::testing {

class ScratchDir {
 public:
  explicit ScratchDir(const std::string& prefix = "dvfs-test") {
    std::string tmpl = "/tmp/" + prefix + "-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()) == nullptr) throw std::runtime_error("cannot create a scratch directory " + tmpl);
    path_ = buf.data();
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  // The path of `name` inside the directory.
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// The path of `name` inside one scratch directory per test process (CTest runs each case in a process of its
// own), removed when the process exits.
inline std::string scratch_path(const std::string& name) {
  static const ScratchDir dir("dvfs-test-process");
  return dir / name;
}

}  // namespace dvfs::testing
