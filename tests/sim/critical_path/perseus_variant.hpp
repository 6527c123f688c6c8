#pragma once
// One variant (by name) of a `validate --perseus` report, for the Perseus validation tests.
#include "sim/core/json_util.hpp"

#include <catch2/catch.hpp>

#include <string>

namespace dvfs::test {

inline const Json& perseus_variant(const Json& rep, const std::string& name) {
  for (const Json& v : rep["variants"])
    if (v["name"] == name) return v;
  FAIL("no variant " << name);
  return rep;
}

}  // namespace dvfs::test
