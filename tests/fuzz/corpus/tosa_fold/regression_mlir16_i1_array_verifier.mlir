// MLIR 16, not qfold: `array<i1: 1>` parses into an attribute without data that MLIR's printer
// reads through a null pointer; here the verifier's diagnostic would print the op (fuzz_tosa_fold
// turns that off and skips such modules).
func.func @f(%x: tensor<4xi8>) -> tensor<4xi8> {
  %0 = "tosa.rescale"(%x) {double_round = false, input_zp = 0 : i32, multiplier = array<i1: 1>, output_zp = 0 : i32, per_channel = false, scale32 = true, shift = array<i32: 30>} : (tensor<4xi8>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}
