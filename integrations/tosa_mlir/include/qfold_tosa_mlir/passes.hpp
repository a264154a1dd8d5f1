// qfold's passes over TOSA 1.0 functions, as a compiler links them: the checks that make a
// function bad input, the passes by name (qfold::standard_pipeline of the adapter), reports with
// names, and register_passes(): each qfold pass as an MLIR pass (--qfold-fold-dyt-alpha, ...) and
// the pipeline --qfold-fold (all of them, in order), to compose with upstream passes in one
// --pass-pipeline of any *-opt tool.
#pragma once

#include <mlir/Dialect/Func/IR/FuncOps.h>
#include <mlir/IR/BuiltinOps.h>
#include <mlir/Pass/Pass.h>
#include <mlir/Pass/PassManager.h>
#include <mlir/Pass/PassRegistry.h>

#include <algorithm>
#include <cstddef>
#include <exception>
#include <memory>
#include <qfold/graph/named_sites.hpp>
#include <qfold/graph/report.hpp>
#include <qfold/graph/standard_pipeline.hpp>
#include <qfold_tosa_mlir/tosa_graph.hpp>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace qfold_tosa {

// The passes qfold runs on TOSA, in the standard pipeline's order (fold_scale_into_quantize is
// left out: TOSA has no quantize op, so it has nothing to fold here).
inline std::vector<std::string> pass_names() {
  std::vector<std::string> r;
  for (const auto& n : qfold::standard_pipeline<graph>().names())
    if (std::string_view(n) != qfold::scale_into_quantize_pass_name) r.emplace_back(n);
  return r;
}
// "fold_dyt_alpha" -> "qfold-fold-dyt-alpha", the MLIR pass argument.
inline std::string mlir_pass_argument(std::string_view name) {
  std::string r = "qfold-";
  for (const char c : name) r += c == '_' ? '-' : c;
  return r;
}

// Every problem of every func.func in the module (bad input), with locations.
inline std::vector<std::string> check_module(mlir::ModuleOp module) {
  std::vector<std::string> r;
  for (mlir::func::FuncOp f : module.getOps<mlir::func::FuncOp>()) {
    const graph g(f);
    for (auto& p : g.problems()) r.push_back(std::move(p));
  }
  return r;
}

// Runs the named passes (all of pass_names() when `only` is empty) on f and returns the sites
// with names. f must have no problems (check_module). Nothing thrown by the adapter escapes a
// pass; an allocation failure outside one may.
inline std::vector<qfold::named_site> fold_function(mlir::func::FuncOp f,
                                                    const std::vector<std::string>& only = {}) {
  graph g(f);
  const auto p = qfold::standard_pipeline<graph>().only(only.empty() ? pass_names() : only);
  std::vector<qfold::named_site> sites;
  for (const auto& name : p.names()) {
    // One pass at a time, with the names of the nodes it may report (some it erases).
    const auto names = g.name_snapshot();
    const auto one = p.only(std::vector<std::string>{std::string(name)});
    const auto report = one.run(g);
    for (const auto& s : report.sites) {
      qfold::named_site out = qfold::with_names(s, [&](auto n) {
        const auto it = names.find(n.getAsOpaquePointer());
        return it != names.end() ? it->second : std::string("(a new node)");
      });
      if (s.cleanup_failed) out.note = "an erase failed: unused nodes left";
      sites.push_back(std::move(out));
    }
  }
  g.collect_garbage();
  return sites;
}

// One qfold pass as an MLIR function pass. A function qfold cannot read (check_module) fails the
// pass with its problems as errors; the report goes to standard error, one line per site.
class fold_pass : public mlir::PassWrapper<fold_pass, mlir::OperationPass<mlir::func::FuncOp>> {
 public:
  explicit fold_pass(std::string name)
      : name_(std::move(name)),
        argument_(mlir_pass_argument(name_)),
        description_("qfold: " + name_ + " (exact, or refused with a reason)") {}
  fold_pass(const fold_pass& other)
      : PassWrapper(other),
        name_(other.name_),
        argument_(other.argument_),
        description_(other.description_) {}

  [[nodiscard]] llvm::StringRef getArgument() const final { return argument_; }
  [[nodiscard]] llvm::StringRef getDescription() const final { return description_; }
  [[nodiscard]] llvm::StringRef getName() const final { return argument_; }

  void runOnOperation() final {
    // Nothing may be thrown through MLIR's frames (LLVM is built without exceptions).
    mlir::func::FuncOp f = getOperation();
    try {
      const graph g(f);
      const auto problems = g.problems();
      if (!problems.empty()) {
        for (const auto& p : problems) f.emitError() << "qfold: " << p;
        signalPassFailure();
        return;
      }
    } catch (const std::exception& e) {
      f.emitError() << "qfold: " << e.what();
      signalPassFailure();
      return;
    }
    try {
      const auto sites = fold_function(f, {name_});
      std::ostringstream os;
      qfold::print_site_lines(os, sites);
      llvm::errs() << os.str();  // one write: passes on several functions may run in parallel
    } catch (const std::exception& e) {
      f.emitError() << "qfold: " << name_ << ": " << e.what();
      signalPassFailure();
    } catch (...) {
      f.emitError() << "qfold: " << name_ << ": unknown exception";
      signalPassFailure();
    }
  }

 private:
  std::string name_, argument_, description_;
};

// The pipeline name that runs every pass of pass_names() in order.
inline constexpr std::string_view pipeline_argument = "qfold-fold";

// Adds every pass of pass_names() to pm: directly when pm runs on func.func, else nested on each
// func.func (a module-level or op-agnostic pipeline).
inline void add_fold_passes(mlir::OpPassManager& pm) {
  const bool on_functions = pm.getOpAnchorName() == mlir::func::FuncOp::getOperationName();
  for (const auto& name : pass_names()) {
    if (on_functions) {
      pm.addPass(std::make_unique<fold_pass>(name));
    } else {
      pm.addNestedPass<mlir::func::FuncOp>(std::make_unique<fold_pass>(name));
    }
  }
}

// Registers --qfold-<pass> for every name of pass_names() and the pipeline --qfold-fold with
// MLIR's global registry; call once, before parsing options (safe to call again).
inline void register_passes() {
  static const bool once = [] {
    for (const auto& name : pass_names())
      mlir::registerPass(
          [name]() -> std::unique_ptr<mlir::Pass> { return std::make_unique<fold_pass>(name); });
    mlir::PassPipelineRegistration<>(
        pipeline_argument, "qfold: every qfold pass on each func.func, in the standard order",
        [](mlir::OpPassManager& pm) { add_fold_passes(pm); });
    return true;
  }();
  (void)once;
}

}  // namespace qfold_tosa
