// A DyT alpha site, as ExecuTorch's Arm backend lowers it (TOSA 1.0: parameters are tosa.const
// operands).
func.func @dyt(%x: tensor<1x2x2x4xi8>) -> tensor<1x2x2x4xi8> {
  %a_act_m = "tosa.const"() <{values = dense<[1073741824]> : tensor<1xi32>}> : () -> tensor<1xi32> loc("a_act_m")
  %a_act_s = "tosa.const"() <{values = dense<[30]> : tensor<1xi8>}> : () -> tensor<1xi8> loc("a_act_s")
  %a_act_izp = "tosa.const"() <{values = dense<[-3]> : tensor<1xi8>}> : () -> tensor<1xi8> loc("a_act_izp")
  %a_act_ozp = "tosa.const"() <{values = dense<[0]> : tensor<1xi32>}> : () -> tensor<1xi32> loc("a_act_ozp")
  %a_act = "tosa.rescale"(%x, %a_act_m, %a_act_s, %a_act_izp, %a_act_ozp) <{input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = #tosa.rounding_mode<SINGLE_ROUND>, scale32 = true}> : (tensor<1x2x2x4xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<1x2x2x4xi32> loc("a_act")
  %a_alpha = "tosa.const"() <{values = dense<77> : tensor<1x1x1x1xi8>}> : () -> tensor<1x1x1x1xi8> loc("a_alpha")
  %a_alpha32_m = "tosa.const"() <{values = dense<[1073741824]> : tensor<1xi32>}> : () -> tensor<1xi32> loc("a_alpha32_m")
  %a_alpha32_s = "tosa.const"() <{values = dense<[30]> : tensor<1xi8>}> : () -> tensor<1xi8> loc("a_alpha32_s")
  %a_alpha32_izp = "tosa.const"() <{values = dense<[0]> : tensor<1xi8>}> : () -> tensor<1xi8> loc("a_alpha32_izp")
  %a_alpha32_ozp = "tosa.const"() <{values = dense<[0]> : tensor<1xi32>}> : () -> tensor<1xi32> loc("a_alpha32_ozp")
  %a_alpha32 = "tosa.rescale"(%a_alpha, %a_alpha32_m, %a_alpha32_s, %a_alpha32_izp, %a_alpha32_ozp) <{input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = #tosa.rounding_mode<SINGLE_ROUND>, scale32 = true}> : (tensor<1x1x1x1xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<1x1x1x1xi32> loc("a_alpha32")
  %a_mul_shift = "tosa.const"() <{values = dense<[0]> : tensor<1xi8>}> : () -> tensor<1xi8> loc("a_mul_shift")
  %a_mul = "tosa.mul"(%a_act, %a_alpha32, %a_mul_shift) : (tensor<1x2x2x4xi32>, tensor<1x1x1x1xi32>, tensor<1xi8>) -> tensor<1x2x2x4xi32> loc("a_mul")
  %a_to_tanh_m = "tosa.const"() <{values = dense<[1518500250]> : tensor<1xi32>}> : () -> tensor<1xi32> loc("a_to_tanh_m")
  %a_to_tanh_s = "tosa.const"() <{values = dense<[40]> : tensor<1xi8>}> : () -> tensor<1xi8> loc("a_to_tanh_s")
  %a_to_tanh_izp = "tosa.const"() <{values = dense<[0]> : tensor<1xi32>}> : () -> tensor<1xi32> loc("a_to_tanh_izp")
  %a_to_tanh_ozp = "tosa.const"() <{values = dense<[5]> : tensor<1xi8>}> : () -> tensor<1xi8> loc("a_to_tanh_ozp")
  %a_to_tanh = "tosa.rescale"(%a_mul, %a_to_tanh_m, %a_to_tanh_s, %a_to_tanh_izp, %a_to_tanh_ozp) <{input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = #tosa.rounding_mode<SINGLE_ROUND>, scale32 = true}> : (tensor<1x2x2x4xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x2x2x4xi8> loc("a_to_tanh")
  %a_lut = "tosa.const"() <{values = dense<[-127, -127, -127, -127, -127, -127, -127, -127, -127, -127, -127, -127, -127, -127, -127, -127, -127, -127, -127, -127, -127, -127, -127, -127, -127, -127, -127, -127, -127, -126, -126, -126, -126, -126, -126, -126, -126, -126, -126, -126, -126, -126, -126, -126, -126, -126, -125, -125, -125, -125, -125, -125, -125, -125, -125, -124, -124, -124, -124, -124, -123, -123, -123, -123, -122, -122, -122, -122, -121, -121, -120, -120, -120, -119, -119, -118, -118, -117, -116, -116, -115, -114, -113, -113, -112, -111, -110, -109, -108, -107, -105, -104, -103, -101, -100, -98, -97, -95, -93, -91, -89, -87, -85, -83, -81, -78, -76, -73, -70, -68, -65, -62, -59, -56, -52, -49, -46, -42, -38, -35, -31, -27, -24, -20, -16, -12, -8, -4, 0, 4, 8, 12, 16, 20, 24, 27, 31, 35, 38, 42, 46, 49, 52, 56, 59, 62, 65, 68, 70, 73, 76, 78, 81, 83, 85, 87, 89, 91, 93, 95, 97, 98, 100, 101, 103, 104, 105, 107, 108, 109, 110, 111, 112, 113, 113, 114, 115, 116, 116, 117, 118, 118, 119, 119, 120, 120, 120, 121, 121, 122, 122, 122, 122, 123, 123, 123, 123, 124, 124, 124, 124, 124, 125, 125, 125, 125, 125, 125, 125, 125, 125, 126, 126, 126, 126, 126, 126, 126, 126, 126, 126, 126, 126, 126, 126, 126, 126, 126, 127, 127, 127, 127, 127, 127, 127, 127, 127, 127, 127, 127, 127, 127, 127, 127, 127, 127, 127, 127, 127, 127, 127, 127, 127, 127, 127, 127]> : tensor<256xi8>}> : () -> tensor<256xi8> loc("a_lut")
  %a_tanh = "tosa.table"(%a_to_tanh, %a_lut) : (tensor<1x2x2x4xi8>, tensor<256xi8>) -> tensor<1x2x2x4xi8> loc("a_tanh")
  return %a_tanh : tensor<1x2x2x4xi8>
}
