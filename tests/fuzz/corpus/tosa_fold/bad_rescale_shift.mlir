// A RESCALE shift outside 2..62 (bad input).
func.func @f(%x: tensor<4xi8>) -> tensor<4xi8> {
  %y = "tosa.rescale"(%x) {double_round = false, input_zp = 0 : i32, multiplier = array<i32: 1073741824>, output_zp = 0 : i32, per_channel = false, scale32 = true, shift = array<i32: 70>} : (tensor<4xi8>) -> tensor<4xi8> loc("y")
  return %y : tensor<4xi8>
}
