// Chains of RESCALE, ADD, SUB, CLAMP, CAST, MUL and TABLE to collapse into one TABLE.
func.func @f(%x: tensor<1x2x2x4xi8>) -> (tensor<1x2x2x4xi8>, tensor<1x2x2x4xi8>) {
  %d1_in = "tosa.rescale"(%x) {double_round = false, input_zp = 3 : i32, multiplier = array<i32: 1073741824>, output_zp = 0 : i32, per_channel = false, scale32 = true, shift = array<i32: 26>} : (tensor<1x2x2x4xi8>) -> tensor<1x2x2x4xi32> loc("d1_in")
  %d1_kadd = "tosa.const"() {value = dense<[[[[100, -200, 300, 0]]]]> : tensor<1x1x1x4xi32>} : () -> tensor<1x1x1x4xi32> loc("d1_kadd")
  %d1_add = "tosa.add"(%d1_in, %d1_kadd) : (tensor<1x2x2x4xi32>, tensor<1x1x1x4xi32>) -> tensor<1x2x2x4xi32> loc("d1_add")
  %d1_ksub = "tosa.const"() {value = dense<-50> : tensor<1x1x1x1xi32>} : () -> tensor<1x1x1x1xi32> loc("d1_ksub")
  %d1_sub = "tosa.sub"(%d1_add, %d1_ksub) : (tensor<1x2x2x4xi32>, tensor<1x1x1x1xi32>) -> tensor<1x2x2x4xi32> loc("d1_sub")
  %d1_clamp = "tosa.clamp"(%d1_sub) {max_fp = 0.000000e+00 : f32, max_int = 1700 : i64, min_fp = 0.000000e+00 : f32, min_int = -1500 : i64} : (tensor<1x2x2x4xi32>) -> tensor<1x2x2x4xi32> loc("d1_clamp")
  %d1_out = "tosa.rescale"(%d1_clamp) {double_round = false, input_zp = 0 : i32, multiplier = array<i32: 1202590843, 2061584302, 1717986918, 1546188227>, output_zp = -9 : i32, per_channel = true, scale32 = true, shift = array<i32: 34, 35, 35, 34>} : (tensor<1x2x2x4xi32>) -> tensor<1x2x2x4xi8> loc("d1_out")
  %d1_lut = "tosa.const"() {value = dense<[127, 126, 124, 122, 120, 118, 116, 114, 112, 111, 109, 107, 105, 103, 102, 100, 98, 96, 95, 93, 91, 89, 88, 86, 84, 83, 81, 80, 78, 77, 75, 74, 72, 71, 69, 68, 66, 65, 63, 62, 60, 59, 58, 56, 55, 54, 53, 51, 50, 49, 48, 46, 45, 44, 43, 42, 40, 39, 38, 37, 36, 35, 34, 33, 32, 31, 30, 29, 28, 27, 26, 25, 24, 24, 23, 22, 21, 20, 20, 19, 18, 17, 17, 16, 15, 14, 14, 13, 12, 12, 11, 11, 10, 10, 9, 9, 8, 8, 7, 7, 6, 6, 5, 5, 4, 4, 4, 3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 14, 14, 15, 16, 17, 17, 18, 19, 20, 20, 21, 22, 23, 24, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 42, 43, 44, 45, 46, 48, 49, 50, 51, 53, 54, 55, 56, 58, 59, 60, 62, 63, 65, 66, 68, 69, 71, 72, 74, 75, 77, 78, 80, 81, 83, 84, 86, 88, 89, 91, 93, 95, 96, 98, 100, 102, 103, 105, 107, 109, 111, 112, 114, 116, 118, 120, 122, 124, 126]> : tensor<256xi8>} : () -> tensor<256xi8> loc("d1_lut")
  %d1_table = "tosa.table"(%d1_out, %d1_lut) : (tensor<1x2x2x4xi8>, tensor<256xi8>) -> tensor<1x2x2x4xi8> loc("d1_table")
  %d2_sat = "tosa.rescale"(%x) {double_round = false, input_zp = 2 : i32, multiplier = array<i32: 1986422374>, output_zp = 1 : i32, per_channel = false, scale32 = true, shift = array<i32: 29>} : (tensor<1x2x2x4xi8>) -> tensor<1x2x2x4xi8> loc("d2_sat")
  %d2_clamp = "tosa.clamp"(%d2_sat) {max_fp = 0.000000e+00 : f32, max_int = 90 : i64, min_fp = 0.000000e+00 : f32, min_int = -100 : i64} : (tensor<1x2x2x4xi8>) -> tensor<1x2x2x4xi8> loc("d2_clamp")
  %d2_cast = "tosa.cast"(%d2_clamp) : (tensor<1x2x2x4xi8>) -> tensor<1x2x2x4xi32> loc("d2_cast")
  %d2_k = "tosa.const"() {value = dense<1000> : tensor<1x1x1x1xi32>} : () -> tensor<1x1x1x1xi32> loc("d2_k")
  %d2_mul = "tosa.mul"(%d2_cast, %d2_k) {shift = 3 : i32} : (tensor<1x2x2x4xi32>, tensor<1x1x1x1xi32>) -> tensor<1x2x2x4xi32> loc("d2_mul")
  %d2_out = "tosa.rescale"(%d2_mul) {double_round = false, input_zp = 0 : i32, multiplier = array<i32: 1374389535>, output_zp = 0 : i32, per_channel = false, scale32 = true, shift = array<i32: 37>} : (tensor<1x2x2x4xi32>) -> tensor<1x2x2x4xi8> loc("d2_out")
  return %d1_table, %d2_out : tensor<1x2x2x4xi8>, tensor<1x2x2x4xi8>
}
