// qfold-onnx end to end on a ResNet-50 export (about 100 MB, BatchNormalization kept): read,
// parse, fold, write, against reading, parsing and writing the same model unchanged, in the same
// run. The model is made by bench/onnx_export_resnet50.py and never committed; its path comes
// from the environment variable QFOLD_ONNX_MODEL (the benchmarks skip, saying so, without it).
// The Python baseline (onnx + numpy) is bench/onnx_fold_numpy.py; figures in bench/README.md.
// copy_file: the limit, reading and writing the model's bytes (what `cp` does), in the same run.
#include <benchmark/benchmark.h>

#if defined(QFOLD_ONNX_BENCH)  // set by bench/onnx_fold.cmake when the ONNX library is found

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "onnx_tool.hpp"  // tools/onnx/, through the qfold_onnx_tool target

namespace {

const char* model_path() { return std::getenv("QFOLD_ONNX_MODEL"); }
std::string out_path() {
  return (std::filesystem::temp_directory_path() / "qfold_bench_onnx_fold_out.onnx").string();
}
bool have_model(benchmark::State& state) {
  if (model_path() != nullptr && std::filesystem::is_regular_file(model_path())) return true;
  state.SkipWithError(
      "set QFOLD_ONNX_MODEL to an ONNX file, e.g. one made by bench/onnx_export_resnet50.py");
  return false;
}

// Baseline: read, parse, serialize and write the model unchanged (through the same atomic write),
// as qfold-onnx reads and writes (large tensor data aliased in the mapped input, spliced back).
void parse_write(benchmark::State& state) {
  if (!have_model(state)) return;
  for (auto _ : state) {
    const qfold_onnx::input_file in(model_path());
    qfold_onnx::raw_aliases aliases;
    onnx::ModelProto model;
    if (!qfold_onnx::parse_bytes_aliased(in.bytes(), model, aliases, in.fd()))
      state.SkipWithError("not an ONNX model");
    benchmark::DoNotOptimize(qfold_onnx::write_model(model, out_path(), &aliases));
  }
}

// The fold alone between the same read and write: parse, fold, write.
void parse_fold_write(benchmark::State& state) {
  if (!have_model(state)) return;
  std::size_t folded = 0;
  for (auto _ : state) {
    const qfold_onnx::input_file in(model_path());
    qfold_onnx::raw_aliases aliases;
    onnx::ModelProto model;
    if (!qfold_onnx::parse_bytes_aliased(in.bytes(), model, aliases, in.fd()))
      state.SkipWithError("not an ONNX model");
    folded = qfold_onnx::fold_model(model, &aliases).folded();
    benchmark::DoNotOptimize(qfold_onnx::write_model(model, out_path(), &aliases));
  }
  state.counters["folded"] = static_cast<double>(folded);
}

// What qfold-onnx does: the above plus the opset checks and the ONNX checker on input and
// output.
void qfold_onnx_tool(benchmark::State& state) {
  if (!have_model(state)) return;
  for (auto _ : state) {
    const qfold_onnx::input_file in(model_path());
    qfold_onnx::raw_aliases aliases;
    onnx::ModelProto model = qfold_onnx::parse_model(in.bytes(), model_path(), &aliases, in.fd());
    benchmark::DoNotOptimize(qfold_onnx::fold_model(model, &aliases));
    qfold_onnx::check_output(model);
    benchmark::DoNotOptimize(qfold_onnx::write_model(model, out_path(), &aliases));
  }
}

// The limit: copy the file's bytes to the output (read into a buffer, write), no parse.
void copy_file(benchmark::State& state) {
  if (!have_model(state)) return;
  std::vector<char> buffer(std::size_t{1} << 17);
  for (auto _ : state) {
    const int in = ::open(model_path(), O_RDONLY | O_CLOEXEC);
    const int out = ::open(out_path().c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (in < 0 || out < 0) state.SkipWithError("cannot open");
    for (ssize_t n; (n = ::read(in, buffer.data(), buffer.size())) > 0;)
      if (::write(out, buffer.data(), static_cast<std::size_t>(n)) != n)
        state.SkipWithError("write");
    ::close(in);
    ::close(out);
  }
}

}  // namespace

BENCHMARK(copy_file)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(parse_write)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(parse_fold_write)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(qfold_onnx_tool)->Unit(benchmark::kMillisecond)->UseRealTime();

#else

namespace {
void onnx_fold_unavailable(benchmark::State& state) {
  state.SkipWithError("built without the ONNX C++ library (see bench/README.md, bench_onnx_fold)");
  for (auto _ : state) {
  }
}
}  // namespace
BENCHMARK(onnx_fold_unavailable);

#endif
