// DyT affine sites: into a conv2d through a transpose and a reshape, and into a depthwise
// conv2d; a fully_connected in another function.
func.func @f(%x: tensor<1x2x2x4xi8>) -> (tensor<1x4x1x2xi32>, tensor<1x2x2x4xi32>) {
  %t_lut = "tosa.const"() {value = dense<[-40, -40, -40, -40, -40, -40, -40, -40, -40, -40, -40, -40, -40, -40, -40, -40, -40, -40, -40, -40, -40, -40, -40, -40, -40, -40, -40, -40, -40, -40, -40, -40, -40, -40, -40, -40, -40, -40, -40, -40, -40, -40, -40, -40, -40, -40, -40, -39, -39, -39, -39, -39, -39, -39, -39, -39, -39, -39, -39, -39, -39, -39, -39, -39, -39, -38, -38, -38, -38, -38, -38, -38, -38, -38, -37, -37, -37, -37, -37, -36, -36, -36, -36, -35, -35, -35, -35, -34, -34, -34, -33, -33, -32, -32, -31, -31, -30, -30, -29, -29, -28, -28, -27, -26, -25, -25, -24, -23, -22, -21, -20, -19, -18, -17, -16, -15, -14, -13, -12, -11, -10, -9, -7, -6, -5, -4, -2, -1, 0, 1, 2, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 25, 26, 27, 28, 28, 29, 29, 30, 30, 31, 31, 32, 32, 33, 33, 34, 34, 34, 35, 35, 35, 35, 36, 36, 36, 36, 37, 37, 37, 37, 37, 38, 38, 38, 38, 38, 38, 38, 38, 38, 39, 39, 39, 39, 39, 39, 39, 39, 39, 39, 39, 39, 39, 39, 39, 39, 39, 39, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40]> : tensor<256xi8>} : () -> tensor<256xi8> loc("t_lut")
  %t = "tosa.table"(%x, %t_lut) : (tensor<1x2x2x4xi8>, tensor<256xi8>) -> tensor<1x2x2x4xi8> loc("t")
  %b_t32 = "tosa.rescale"(%t) {double_round = false, input_zp = 1 : i32, multiplier = array<i32: 1073741824>, output_zp = 0 : i32, per_channel = false, scale32 = true, shift = array<i32: 30>} : (tensor<1x2x2x4xi8>) -> tensor<1x2x2x4xi32> loc("b_t32")
  %b_gamma = "tosa.const"() {value = dense<[[[[3, -2, 1, 2]]]]> : tensor<1x1x1x4xi8>} : () -> tensor<1x1x1x4xi8> loc("b_gamma")
  %b_g32 = "tosa.rescale"(%b_gamma) {double_round = false, input_zp = 0 : i32, multiplier = array<i32: 1073741824>, output_zp = 0 : i32, per_channel = false, scale32 = true, shift = array<i32: 30>} : (tensor<1x1x1x4xi8>) -> tensor<1x1x1x4xi32> loc("b_g32")
  %b_mul = "tosa.mul"(%b_t32, %b_g32) {shift = 0 : i32} : (tensor<1x2x2x4xi32>, tensor<1x1x1x4xi32>) -> tensor<1x2x2x4xi32> loc("b_mul")
  %b_scaled = "tosa.rescale"(%b_mul) {double_round = false, input_zp = 0 : i32, multiplier = array<i32: 1073741824>, output_zp = 1 : i32, per_channel = false, scale32 = true, shift = array<i32: 30>} : (tensor<1x2x2x4xi32>) -> tensor<1x2x2x4xi8> loc("b_scaled")
  %b_s32 = "tosa.rescale"(%b_scaled) {double_round = false, input_zp = 0 : i32, multiplier = array<i32: 1073741824>, output_zp = 0 : i32, per_channel = false, scale32 = true, shift = array<i32: 30>} : (tensor<1x2x2x4xi8>) -> tensor<1x2x2x4xi32> loc("b_s32")
  %b_beta = "tosa.const"() {value = dense<[[[[5, -7, 0, 11]]]]> : tensor<1x1x1x4xi8>} : () -> tensor<1x1x1x4xi8> loc("b_beta")
  %b_b32 = "tosa.rescale"(%b_beta) {double_round = false, input_zp = 0 : i32, multiplier = array<i32: 1073741824>, output_zp = 0 : i32, per_channel = false, scale32 = true, shift = array<i32: 30>} : (tensor<1x1x1x4xi8>) -> tensor<1x1x1x4xi32> loc("b_b32")
  %b_add = "tosa.add"(%b_s32, %b_b32) : (tensor<1x2x2x4xi32>, tensor<1x1x1x4xi32>) -> tensor<1x2x2x4xi32> loc("b_add")
  %b_sum = "tosa.rescale"(%b_add) {double_round = false, input_zp = 0 : i32, multiplier = array<i32: 1073741824>, output_zp = -4 : i32, per_channel = false, scale32 = true, shift = array<i32: 30>} : (tensor<1x2x2x4xi32>) -> tensor<1x2x2x4xi8> loc("b_sum")
  %b_perms = "tosa.const"() {value = dense<[0, 2, 1, 3]> : tensor<4xi32>} : () -> tensor<4xi32> loc("b_perms")
  %b_tr = "tosa.transpose"(%b_sum, %b_perms) : (tensor<1x2x2x4xi8>, tensor<4xi32>) -> tensor<1x2x2x4xi8> loc("b_tr")
  %b_flat = "tosa.reshape"(%b_tr) {new_shape = array<i64: 1, 4, 1, 4>} : (tensor<1x2x2x4xi8>) -> tensor<1x4x1x4xi8> loc("b_flat")
  %b_w = "tosa.const"() {value = dense<[[[[-8, -5, 8, 5]]], [[[2, -7, 7, 9]]]]> : tensor<2x1x1x4xi8>} : () -> tensor<2x1x1x4xi8> loc("b_w")
  %b_bias = "tosa.const"() {value = dense<[-1100, 851]> : tensor<2xi32>} : () -> tensor<2xi32> loc("b_bias")
  %b_conv = "tosa.conv2d"(%b_flat, %b_w, %b_bias) {dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, quantization_info = #tosa.conv_quant<input_zp = -4, weight_zp = 2>, stride = array<i64: 1, 1>} : (tensor<1x4x1x4xi8>, tensor<2x1x1x4xi8>, tensor<2xi32>) -> tensor<1x4x1x2xi32> loc("b_conv")
  %c_t32 = "tosa.rescale"(%t) {double_round = false, input_zp = 1 : i32, multiplier = array<i32: 1073741824>, output_zp = 0 : i32, per_channel = false, scale32 = true, shift = array<i32: 30>} : (tensor<1x2x2x4xi8>) -> tensor<1x2x2x4xi32> loc("c_t32")
  %c_gamma = "tosa.const"() {value = dense<[[[[3, -2, 1, 2]]]]> : tensor<1x1x1x4xi8>} : () -> tensor<1x1x1x4xi8> loc("c_gamma")
  %c_g32 = "tosa.rescale"(%c_gamma) {double_round = false, input_zp = 0 : i32, multiplier = array<i32: 1073741824>, output_zp = 0 : i32, per_channel = false, scale32 = true, shift = array<i32: 30>} : (tensor<1x1x1x4xi8>) -> tensor<1x1x1x4xi32> loc("c_g32")
  %c_mul = "tosa.mul"(%c_t32, %c_g32) {shift = 0 : i32} : (tensor<1x2x2x4xi32>, tensor<1x1x1x4xi32>) -> tensor<1x2x2x4xi32> loc("c_mul")
  %c_scaled = "tosa.rescale"(%c_mul) {double_round = false, input_zp = 0 : i32, multiplier = array<i32: 1073741824>, output_zp = 1 : i32, per_channel = false, scale32 = true, shift = array<i32: 30>} : (tensor<1x2x2x4xi32>) -> tensor<1x2x2x4xi8> loc("c_scaled")
  %c_s32 = "tosa.rescale"(%c_scaled) {double_round = false, input_zp = 0 : i32, multiplier = array<i32: 1073741824>, output_zp = 0 : i32, per_channel = false, scale32 = true, shift = array<i32: 30>} : (tensor<1x2x2x4xi8>) -> tensor<1x2x2x4xi32> loc("c_s32")
  %c_beta = "tosa.const"() {value = dense<[[[[5, -7, 0, 11]]]]> : tensor<1x1x1x4xi8>} : () -> tensor<1x1x1x4xi8> loc("c_beta")
  %c_b32 = "tosa.rescale"(%c_beta) {double_round = false, input_zp = 0 : i32, multiplier = array<i32: 1073741824>, output_zp = 0 : i32, per_channel = false, scale32 = true, shift = array<i32: 30>} : (tensor<1x1x1x4xi8>) -> tensor<1x1x1x4xi32> loc("c_b32")
  %c_add = "tosa.add"(%c_s32, %c_b32) : (tensor<1x2x2x4xi32>, tensor<1x1x1x4xi32>) -> tensor<1x2x2x4xi32> loc("c_add")
  %c_sum = "tosa.rescale"(%c_add) {double_round = false, input_zp = 0 : i32, multiplier = array<i32: 1073741824>, output_zp = -4 : i32, per_channel = false, scale32 = true, shift = array<i32: 30>} : (tensor<1x2x2x4xi32>) -> tensor<1x2x2x4xi8> loc("c_sum")
  %c_w = "tosa.const"() {value = dense<[[[[-8], [-5], [8], [5]]]]> : tensor<1x1x4x1xi8>} : () -> tensor<1x1x4x1xi8> loc("c_w")
  %c_bias = "tosa.const"() {value = dense<[1, 2, 3, 4]> : tensor<4xi32>} : () -> tensor<4xi32> loc("c_bias")
  %c_conv = "tosa.depthwise_conv2d"(%c_sum, %c_w, %c_bias) {dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, quantization_info = #tosa.conv_quant<input_zp = -4, weight_zp = 2>, stride = array<i64: 1, 1>} : (tensor<1x2x2x4xi8>, tensor<1x1x4x1xi8>, tensor<4xi32>) -> tensor<1x2x2x4xi32> loc("c_conv")
  return %b_conv, %c_conv : tensor<1x4x1x2xi32>, tensor<1x2x2x4xi32>
}
func.func @fc(%x: tensor<4x4xi8>) -> tensor<4x2xi32> {
  %w = "tosa.const"() {value = dense<[[1, -2, 3, -4], [5, 6, -7, 8]]> : tensor<2x4xi8>} : () -> tensor<2x4xi8>
  %b = "tosa.const"() {value = dense<[7, -9]> : tensor<2xi32>} : () -> tensor<2xi32>
  %y = "tosa.fully_connected"(%x, %w, %b) {quantization_info = #tosa.conv_quant<input_zp = -4, weight_zp = 0>} : (tensor<4x4xi8>, tensor<2x4xi8>, tensor<2xi32>) -> tensor<4x2xi32>
  return %y : tensor<4x2xi32>
}
