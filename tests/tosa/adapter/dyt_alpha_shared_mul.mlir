// Refused (the MUL has a second reader):  A DyT alpha site as ExecuTorch's Arm backend lowers it (TOSA 1.0, MLIR 22):
// RESCALE(act) to int32, MUL by RESCALE(alpha) to int32, RESCALE to int8, TABLE (tanh).
// Every RESCALE and MUL parameter is a tosa.const operand.
module {
  func.func @dyt(%arg0: tensor<1x4x4x8xi8>) -> (tensor<1x4x4x8xi8>, tensor<1x4x4x8xi32>) {
    %alpha = "tosa.const"() <{values = dense<77> : tensor<1x1x1x1xi8>}> : () -> tensor<1x1x1x1xi8>
    %table = "tosa.const"() <{values = dense<[-127, -127, -127, -127, -126, -126, -126, -126, -126, -126, -126, -126, -126, -126, -126, -126, -126, -126, -126, -126, -126, -126, -126, -126, -126, -126, -125, -125, -125, -125, -125, -125, -125, -125, -125, -125, -124, -124, -124, -124, -124, -124, -124, -123, -123, -123, -123, -123, -122, -122, -122, -122, -121, -121, -121, -121, -120, -120, -120, -119, -119, -118, -118, -118, -117, -117, -116, -116, -115, -114, -114, -113, -112, -112, -111, -110, -109, -109, -108, -107, -106, -105, -104, -103, -102, -100, -99, -98, -97, -95, -94, -92, -91, -89, -88, -86, -84, -83, -81, -79, -77, -75, -73, -70, -68, -66, -64, -61, -59, -56, -54, -51, -48, -46, -43, -40, -37, -34, -31, -28, -25, -22, -19, -16, -13, -10, -6, -3, 0, 3, 6, 10, 13, 16, 19, 22, 25, 28, 31, 34, 37, 40, 43, 46, 48, 51, 54, 56, 59, 61, 64, 66, 68, 70, 73, 75, 77, 79, 81, 83, 84, 86, 88, 89, 91, 92, 94, 95, 97, 98, 99, 100, 102, 103, 104, 105, 106, 107, 108, 109, 109, 110, 111, 112, 112, 113, 114, 114, 115, 116, 116, 117, 117, 118, 118, 118, 119, 119, 120, 120, 120, 121, 121, 121, 121, 122, 122, 122, 122, 123, 123, 123, 123, 123, 124, 124, 124, 124, 124, 124, 124, 125, 125, 125, 125, 125, 125, 125, 125, 125, 125, 126, 126, 126, 126, 126, 126, 126, 126, 126, 126, 126, 126, 126, 126, 126, 126, 126, 126, 126, 126, 126, 126, 127, 127, 127]> : tensor<256xi8>}> : () -> tensor<256xi8>
    %one = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
    %s30 = "tosa.const"() <{values = dense<30> : tensor<1xi8>}> : () -> tensor<1xi8>
    %zp_act = "tosa.const"() <{values = dense<-3> : tensor<1xi8>}> : () -> tensor<1xi8>
    %zp0 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
    %zp0_32 = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
    %mul_shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
    %m_out = "tosa.const"() <{values = dense<1518500250> : tensor<1xi32>}> : () -> tensor<1xi32>
    %s40 = "tosa.const"() <{values = dense<40> : tensor<1xi8>}> : () -> tensor<1xi8>
    %zp_out = "tosa.const"() <{values = dense<5> : tensor<1xi8>}> : () -> tensor<1xi8>
    %0 = tosa.rescale %arg0, %one, %s30, %zp_act, %zp0_32 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x4x4x8xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<1x4x4x8xi32>
    %1 = tosa.rescale %alpha, %one, %s30, %zp0, %zp0_32 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x1x1x1xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<1x1x1x1xi32>
    %2 = tosa.mul %0, %1, %mul_shift : (tensor<1x4x4x8xi32>, tensor<1x1x1x1xi32>, tensor<1xi8>) -> tensor<1x4x4x8xi32>
    %3 = tosa.rescale %2, %m_out, %s40, %zp0_32, %zp_out {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x4x4x8xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x4x4x8xi8>
    %4 = tosa.table %3, %table : (tensor<1x4x4x8xi8>, tensor<256xi8>) -> tensor<1x4x4x8xi8>
    return %4, %2 : tensor<1x4x4x8xi8>, tensor<1x4x4x8xi32>
  }
}
