// MLIR 16, not qfold: `array<i1: 1>` parses into an attribute without data that MLIR's printer
// reads through a null pointer; here it verifies (a discardable attribute, behind a type alias
// and in a tensor encoding), and fuzz_tosa_fold skips the module.
!b = i1
func.func @f(%x: tensor<4xi8, array<!b: 1>>) -> tensor<4xi8, array<!b: 1>> attributes {n = [1, {k = array<i1: 0, 1>}]} {
  return %x : tensor<4xi8, array<!b: 1>>
}
