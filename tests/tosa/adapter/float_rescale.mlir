// A RESCALE of float values: an unsupported element type (bad input, exit 1).
func.func @f(%arg0: tensor<4xf32>) -> tensor<4xi8> {
  %0 = "tosa.rescale"(%arg0) {double_round = false, input_zp = 0 : i32, multiplier = array<i32: 1073741824>, output_zp = 0 : i32, per_channel = false, scale32 = true, shift = array<i32: 30>} : (tensor<4xf32>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}
