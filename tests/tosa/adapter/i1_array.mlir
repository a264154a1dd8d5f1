// MLIR 16 parses `array<i1: 1>` into an attribute without data and crashes printing it (here
// the verifier's diagnostic would print the op): qfold-tosa-opt refuses it, exit 1.
func.func @f(%x: tensor<4xi8>) -> tensor<4xi8> {
  %0 = "tosa.rescale"(%x) {double_round = false, input_zp = 0 : i32, multiplier = array<i1: 1>, output_zp = 0 : i32, per_channel = false, scale32 = true, shift = array<i32: 30>} : (tensor<4xi8>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}
