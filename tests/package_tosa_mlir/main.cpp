// Package consumer of the TOSA MLIR component (TOSA 1.0): parses a function with RESCALE int8 ->
// int32 (x1)
// -> RESCALE int32 -> int8 (x0.5), runs qfold's standard pipeline over it through
// qfold_tosa::graph, and checks that one RESCALE is left (the merge is exact: the first RESCALE is
// the identity on every int8 code) and that MLIR's verifier accepts the result.
#include <mlir/Dialect/Func/IR/FuncOps.h>
#include <mlir/Dialect/Tosa/IR/TosaOps.h>
#include <mlir/IR/BuiltinOps.h>
#include <mlir/IR/MLIRContext.h>
#include <mlir/IR/Verifier.h>
#include <mlir/Parser/Parser.h>

#include <cstdio>
#include <qfold/graph/standard_pipeline.hpp>
#include <qfold_tosa_mlir/tosa_graph.hpp>

namespace {

constexpr const char* module_text = R"(module {
  func.func @f(%arg0: tensor<8xi8>) -> tensor<8xi8> {
    %m = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
    %s1 = "tosa.const"() <{values = dense<30> : tensor<1xi8>}> : () -> tensor<1xi8>
    %s2 = "tosa.const"() <{values = dense<31> : tensor<1xi8>}> : () -> tensor<1xi8>
    %z8 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
    %z32 = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
    %0 = tosa.rescale %arg0, %m, %s1, %z8, %z32 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<8xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<8xi32>
    %1 = tosa.rescale %0, %m, %s2, %z32, %z8 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<8xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<8xi8>
    return %1 : tensor<8xi8>
  }
})";

int fail(const char* what) {
  std::fprintf(stderr, "qfold::tosa_mlir consumer: %s\n", what);
  return 1;
}

}  // namespace

int main() {
  mlir::MLIRContext context;
  context.loadDialect<mlir::func::FuncDialect, mlir::tosa::TosaDialect>();
  auto module = mlir::parseSourceString<mlir::ModuleOp>(module_text, &context);
  if (!module) return fail("the module does not parse");
  auto f = *module->getOps<mlir::func::FuncOp>().begin();
  std::size_t folded = 0;
  {
    qfold_tosa::graph g(f);
    folded = qfold::standard_pipeline<qfold_tosa::graph>().run(g).folded();
  }  // the graph erases what the passes left unused
  std::size_t rescales = 0;
  for (mlir::Operation& op : f.getBody().front())
    rescales += op.getName().getStringRef() == "tosa.rescale" ? 1 : 0;
  if (folded != 1 || rescales != 1) return fail("the two RESCALEs were not merged into one");
  if (mlir::failed(mlir::verify(*module))) return fail("MLIR's verifier refuses the result");
  std::printf("qfold::tosa_mlir: 1 RESCALE pair merged, module verified\n");
  return 0;
}
