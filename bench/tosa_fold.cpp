// Folding a TOSA 1.0 MLIR module (MLIR 22) with qfold, in process: a module of 1,000 DyT
// transformer-like blocks (tests/tosa/make_modules.py --bench 1000, generated into the build
// directory by bench/tosa_fold.cmake; QFOLD_TOSA_BENCH_MODULE in the environment overrides it).
// - parse_verify_print: the baseline, what `mlir-opt in.mlir` (MLIR 22) does (parse, verify,
// print);
// - qfold_tosa_opt_path: what qfold-tosa-opt does (parse, verify, qfold's read checks, every pass
//   of the adapter's standard pipeline on every function, verify, print);
// - alternating: both in each iteration, one after the other, so that a shared machine's load
//   hits both alike; counters: each one's mean time and their ratio (sums, and the median of the
//   per-iteration ratios), and the ratio of their thread CPU times (cpu_ratio);
// - pass/<name>: one pass alone (the passes before it in the pipeline run untimed first, as the
//   affine pass needs the alpha pass's tables), and its wall and CPU time per site it reported.
// Every iteration makes a fresh MLIRContext (attributes are uniqued in it: parsing the same module
// twice into one context would find its constants already there), as a process does.
#include <benchmark/benchmark.h>

#if defined(QFOLD_TOSA_BENCH)  // set by bench/tosa_fold.cmake when MLIR 22 is found

#include <llvm/Support/raw_ostream.h>
#include <mlir/IR/BuiltinOps.h>
#include <mlir/IR/MLIRContext.h>
#include <mlir/IR/Verifier.h>
#include <mlir/InitAllDialects.h>
#include <mlir/Parser/Parser.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <qfold_tosa_mlir/passes.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

const std::string& module_text() {
  static const std::string text = [] {
    const char* env = std::getenv("QFOLD_TOSA_BENCH_MODULE");
    const std::string path = env != nullptr ? env : QFOLD_TOSA_BENCH_MODULE;
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::string();
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }();
  return text;
}
bool have_module(benchmark::State& state) {
  if (!module_text().empty()) return true;
  state.SkipWithError(
      "no module: build the target bench_tosa_fold_module (make_modules.py --bench 1000) or set "
      "QFOLD_TOSA_BENCH_MODULE");
  return false;
}

const mlir::DialectRegistry& registry() {
  static const auto r = [] {
    auto p = std::make_unique<mlir::DialectRegistry>();
    mlir::registerAllDialects(*p);  // as mlir-opt and qfold-tosa-opt do
    return p;
  }();
  return *r;
}

std::unique_ptr<mlir::MLIRContext> new_context() {
  auto c = std::make_unique<mlir::MLIRContext>(registry());
  c->disableMultithreading();  // as qfold-tosa-opt does
  return c;
}

// Parsing verifies (ParserConfig's default).
mlir::OwningOpRef<mlir::ModuleOp> parse(mlir::MLIRContext& context) {
  auto m = mlir::parseSourceString<mlir::ModuleOp>(module_text(), mlir::ParserConfig(&context));
  if (!m) throw std::runtime_error("the module does not parse or verify");
  return m;
}

std::size_t print(mlir::ModuleOp m) {
  std::string text;
  llvm::raw_string_ostream os(text);
  m.print(os);
  os << "\n";
  os.flush();
  benchmark::DoNotOptimize(text.data());
  return text.size();
}

std::size_t baseline_once() {
  const auto context = new_context();
  auto m = parse(*context);
  return print(*m);
}

struct fold_totals {
  std::size_t folded = 0, rejected = 0, bytes = 0;
};

// qfold-tosa-opt's run() without the file I/O: its check, every function folded, verify, print.
fold_totals qfold_once() {
  const auto context = new_context();
  auto m = parse(*context);
  if (!qfold_tosa::check_module(*m).empty()) throw std::runtime_error("qfold cannot read it");
  fold_totals t;
  for (mlir::func::FuncOp f : m->getOps<mlir::func::FuncOp>())
    for (const auto& s : qfold_tosa::fold_function(f)) (s.folded ? t.folded : t.rejected) += 1;
  if (mlir::failed(mlir::verify(*m))) throw std::runtime_error("the folded module fails to verify");
  t.bytes = print(*m);
  return t;
}

double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}
// This thread's CPU time (the folds run on one thread: the contexts are single-threaded), which
// other processes on a shared machine do not inflate as they do wall time.
double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

void parse_verify_print(benchmark::State& state) {
  if (!have_module(state)) return;
  std::size_t bytes = 0;
  for (auto _ : state) bytes = baseline_once();
  state.counters["output_bytes"] = static_cast<double>(bytes);
}

void qfold_tosa_opt_path(benchmark::State& state) {
  if (!have_module(state)) return;
  fold_totals t;
  for (auto _ : state) t = qfold_once();
  state.counters["folded"] = static_cast<double>(t.folded);
  state.counters["rejected"] = static_cast<double>(t.rejected);
  state.counters["output_bytes"] = static_cast<double>(t.bytes);
}

// Both paths in every iteration; the iteration's time is qfold's (manual time).
void alternating(benchmark::State& state) {
  if (!have_module(state)) return;
  double base_sum = 0, qfold_sum = 0, base_cpu = 0, qfold_cpu = 0;
  std::vector<double> ratios;
  for (auto _ : state) {
    auto start = clock_type::now();
    double cpu = thread_cpu_seconds();
    benchmark::DoNotOptimize(baseline_once());
    const double base = seconds_since(start);
    base_cpu += thread_cpu_seconds() - cpu;
    start = clock_type::now();
    cpu = thread_cpu_seconds();
    benchmark::DoNotOptimize(qfold_once());
    const double q = seconds_since(start);
    qfold_cpu += thread_cpu_seconds() - cpu;
    state.SetIterationTime(q);
    base_sum += base;
    qfold_sum += q;
    ratios.push_back(q / base);
  }
  if (ratios.empty()) return;
  std::sort(ratios.begin(), ratios.end());
  const std::size_t n = ratios.size();
  state.counters["baseline_ms"] = 1e3 * base_sum / static_cast<double>(n);
  state.counters["qfold_ms"] = 1e3 * qfold_sum / static_cast<double>(n);
  state.counters["ratio"] = qfold_sum / base_sum;
  state.counters["cpu_ratio"] = qfold_cpu / base_cpu;
  state.counters["ratio_median"] =
      n % 2 == 1 ? ratios[n / 2] : (ratios[n / 2 - 1] + ratios[n / 2]) / 2;
}

// One pass alone, as fold_function runs it (the adapter's graph, the names of the nodes, the
// report, the erased ops' collection), on every function; manual time.
void one_pass(benchmark::State& state, const std::string& name) {
  if (!have_module(state)) return;
  const auto names = qfold_tosa::pass_names();
  const std::vector<std::string> before(names.begin(), std::find(names.begin(), names.end(), name));
  std::size_t sites = 0, folded = 0;
  double total = 0, total_cpu = 0;
  for (auto _ : state) {
    const auto context = new_context();
    auto m = parse(*context);
    std::vector<mlir::func::FuncOp> functions;
    for (mlir::func::FuncOp f : m->getOps<mlir::func::FuncOp>()) {
      functions.push_back(f);
      if (!before.empty()) benchmark::DoNotOptimize(qfold_tosa::fold_function(f, before));
    }
    sites = folded = 0;
    const auto start = clock_type::now();
    const double cpu = thread_cpu_seconds();
    for (const auto f : functions)
      for (const auto& s : qfold_tosa::fold_function(f, {name})) {
        ++sites;
        folded += s.folded ? 1 : 0;
      }
    const double t = seconds_since(start);
    total_cpu += thread_cpu_seconds() - cpu;
    state.SetIterationTime(t);
    total += t;
  }
  state.counters["sites"] = static_cast<double>(sites);
  state.counters["folded"] = static_cast<double>(folded);
  if (sites > 0 && state.iterations() > 0) {
    const double per = 1e6 / static_cast<double>(state.iterations()) / static_cast<double>(sites);
    state.counters["us_per_site"] = total * per;
    state.counters["cpu_us_per_site"] = total_cpu * per;
  }
}

const bool registered = [] {
  benchmark::RegisterBenchmark("parse_verify_print", parse_verify_print)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("qfold_tosa_opt_path", qfold_tosa_opt_path)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("alternating", alternating)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
  for (const auto& name : qfold_tosa::pass_names())
    benchmark::RegisterBenchmark(("pass/" + name).c_str(),
                                 [name](benchmark::State& s) { one_pass(s, name); })
        // A fixed count: a fast pass would otherwise need hundreds of untimed parses.
        ->Iterations(5)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  return true;
}();

}  // namespace

#else

namespace {
void tosa_fold_unavailable(benchmark::State& state) {
  for (auto _ : state) {
  }
  state.SkipWithError(
      "built without MLIR 22 (see cmake's 'bench_tosa_fold built without' message)");
}
BENCHMARK(tosa_fold_unavailable);
}  // namespace

#endif
