#pragma once

// FUZZ_CHECK(condition, what): an invariant of the code under test. A fuzz
// target that finds it false prints what was expected and aborts, so libFuzzer
// (and the replay driver under `make test`) reports the input as a crash.

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(condition, what)                                        \
  do {                                                                     \
    if (!(condition)) {                                                    \
      std::fprintf(stderr, "%s:%d: invariant failed: %s (%s)\n", __FILE__, \
                   __LINE__, #condition, what);                            \
      std::abort();                                                        \
    }                                                                      \
  } while (false)
