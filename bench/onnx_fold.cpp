// qfold-onnx end to end on a ResNet-50 export (about 100 MB, BatchNormalization kept): read,
// parse, fold, write, against reading, parsing and writing the same model unchanged, in the same
// run. The model is made by bench/onnx_export_resnet50.py and never committed; its path comes
// from the environment variable QFOLD_ONNX_MODEL (the benchmarks skip, saying so, without it).
// The Python baseline (onnx + numpy) is bench/onnx_fold_numpy.py; figures in bench/README.md.
#include <benchmark/benchmark.h>

#if defined(QFOLD_ONNX_BENCH)  // set by bench/onnx_fold.cmake when the ONNX library is found

#include <cstdlib>
#include <filesystem>
#include <string>

#include "onnx_tool.hpp"  // examples/onnx/, through the qfold_onnx target

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

// Baseline: read, parse, serialize and write the model unchanged (through the same atomic write).
void parse_write(benchmark::State& state) {
  if (!have_model(state)) return;
  for (auto _ : state) {
    const qfold_onnx::input_file in(model_path());
    onnx::ModelProto model;
    if (!model.ParseFromArray(in.bytes().data(), static_cast<int>(in.bytes().size())))
      state.SkipWithError("not an ONNX model");
    benchmark::DoNotOptimize(qfold_onnx::write_model(model, out_path()));
  }
}

// The fold alone between the same read and write: parse, fold, write.
void parse_fold_write(benchmark::State& state) {
  if (!have_model(state)) return;
  std::size_t folded = 0;
  for (auto _ : state) {
    const qfold_onnx::input_file in(model_path());
    onnx::ModelProto model;
    if (!model.ParseFromArray(in.bytes().data(), static_cast<int>(in.bytes().size())))
      state.SkipWithError("not an ONNX model");
    folded = qfold_onnx::fold_model(model).folded();
    benchmark::DoNotOptimize(qfold_onnx::write_model(model, out_path()));
  }
  state.counters["folded"] = static_cast<double>(folded);
}

// What qfold-onnx does: the above plus the opset checks and the ONNX checker on input and
// output.
void qfold_onnx_tool(benchmark::State& state) {
  if (!have_model(state)) return;
  for (auto _ : state) {
    const qfold_onnx::input_file in(model_path());
    onnx::ModelProto model = qfold_onnx::parse_model(in.bytes(), model_path());
    benchmark::DoNotOptimize(qfold_onnx::fold_model(model));
    qfold_onnx::check_output(model);
    benchmark::DoNotOptimize(qfold_onnx::write_model(model, out_path()));
  }
}

}  // namespace

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
