// A main() for the fuzz targets in builds without libFuzzer (GCC, the
// sanitizer builds): runs every file of the given directories (and files)
// through LLVMFuzzerTestOneInput once, in name order. `make test` runs it over
// each target's seed corpus and its regressions/ directory, so every input that
// once crashed a fuzzer stays a test. Exits 1 if a path does not exist or no
// input was found (a missing corpus must not pass silently); a crashing input
// crashes the run, and the last "running" line names it.
//
// --repeat=N runs the whole set N times (quietly after the first pass): with
// /usr/bin/time -f %M it shows whether memory grows with the number of calls.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv)
    __attribute__((weak));

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize != nullptr) LLVMFuzzerInitialize(&argc, &argv);
  std::vector<std::filesystem::path> inputs;
  long repeat = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--repeat=", 9) == 0) {
      char* end = nullptr;
      repeat = std::strtol(argv[i] + 9, &end, 10);
      if (*end != '\0' || repeat < 1) {
        std::fprintf(stderr, "replay: --repeat needs a positive number\n");
        return 1;
      }
      continue;
    }
    const std::filesystem::path path(argv[i]);
    std::error_code error;
    if (std::filesystem::is_directory(path, error)) {
      for (const auto& entry :
           std::filesystem::recursive_directory_iterator(path, error)) {
        if (entry.is_regular_file()) inputs.push_back(entry.path());
      }
    } else if (std::filesystem::is_regular_file(path, error)) {
      inputs.push_back(path);
    } else {
      std::fprintf(stderr, "replay: %s: no such file or directory\n", argv[i]);
      return 1;
    }
  }
  std::sort(inputs.begin(), inputs.end());
  if (inputs.empty()) {
    std::fprintf(stderr, "replay: no inputs found in the given paths\n");
    return 1;
  }
  std::vector<std::string> contents;
  contents.reserve(inputs.size());
  for (const std::filesystem::path& path : inputs) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "replay: cannot read %s\n", path.c_str());
      return 1;
    }
    contents.emplace_back(std::istreambuf_iterator<char>(in),
                          std::istreambuf_iterator<char>());
  }
  for (long pass = 0; pass < repeat; ++pass) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (pass == 0) {
        std::fprintf(stderr, "replay: running %s (%zu bytes)\n",
                     inputs[i].c_str(), contents[i].size());
      }
      LLVMFuzzerTestOneInput(
          reinterpret_cast<const uint8_t*>(contents[i].data()),
          contents[i].size());
    }
  }
  std::fprintf(stderr, "replay: %zu inputs x %ld, no failure\n", inputs.size(),
               repeat);
  return 0;
}
