// A downstream opt tool: MLIR's opt driver with every upstream dialect and pass, plus qfold's
// passes and the qfold-fold pipeline, registered by one call.
#include <mlir/InitAllDialects.h>
#include <mlir/InitAllExtensions.h>
#include <mlir/InitAllPasses.h>
#include <mlir/Tools/mlir-opt/MlirOptMain.h>

#include <qfold_tosa_mlir/passes.hpp>

int main(int argc, char** argv) {
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllPasses();
  qfold_tosa::register_passes();
  return mlir::asMainReturnCode(mlir::MlirOptMain(argc, argv, "my-opt", registry));
}
