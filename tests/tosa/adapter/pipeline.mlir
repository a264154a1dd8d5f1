// Every kind of site qfold folds or refuses on TOSA 1.0, one function each, for the adapter
// test's failure injection over the whole pipeline (tosa_adapter_test.cpp): the DyT alpha site,
// RESCALE pairs (per tensor, per channel, through a MUL, uint8 in, uint8 out), TABLE -> TABLE,
// RESCALE -> CLAMP -> TABLE, the DyT affine site (its MUL's shift and the conv's zero points one
// constant), and refusals (run-time parameters, INEXACT_ROUND, a shared output). Parameter
// constants are shared between ops, as some exporters write them.
func.func @dyt(%arg0: tensor<1x4x4x8xi8>) -> tensor<1x4x4x8xi8> {
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
  return %4 : tensor<1x4x4x8xi8>
}

func.func @pairs(%x: tensor<1x8xi8>, %mult: tensor<1xi32>, %shift: tensor<1xi8>, %izp: tensor<1xi8>, %ozp: tensor<1xi8>, %mshift: tensor<1xi8>, %table: tensor<256xi8>) -> (tensor<1x8xi8>, tensor<1x8xi8>, tensor<1x8xi8>, tensor<1x8xi8>, tensor<1x8xi8>, tensor<1x8xi8>) {
  %m = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
  %s28 = "tosa.const"() <{values = dense<28> : tensor<1xi8>}> : () -> tensor<1xi8>
  %s33 = "tosa.const"() <{values = dense<33> : tensor<1xi8>}> : () -> tensor<1xi8>
  %z8 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %z32 = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %k = "tosa.const"() <{values = dense<3> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
  %t = "tosa.const"() <{values = dense<5> : tensor<256xi8>}> : () -> tensor<256xi8>
  %a0 = tosa.rescale %x, %m, %s28, %z8, %z32 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x8xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<1x8xi32>
  %a1 = tosa.rescale %a0, %m, %s33, %z32, %z8 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x8xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x8xi8>
  %b0 = tosa.rescale %x, %m, %s28, %z8, %z32 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x8xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<1x8xi32>
  %b1 = tosa.rescale %b0, %m, %s33, %z32, %z8 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x8xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x8xi8>
  %c0 = tosa.rescale %x, %m, %s28, %z8, %z32 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x8xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<1x8xi32>
  %c1 = tosa.rescale %c0, %m, %s33, %z32, %z8 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x8xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x8xi8>
  %d0 = tosa.rescale %x, %m, %s28, %z8, %z32 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x8xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<1x8xi32>
  %d1 = tosa.rescale %d0, %m, %s33, %z32, %z8 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x8xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x8xi8>
  %e0 = tosa.rescale %x, %m, %s28, %z8, %z32 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x8xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<1x8xi32>
  %e1 = tosa.mul %e0, %k, %z8 : (tensor<1x8xi32>, tensor<1x1xi32>, tensor<1xi8>) -> tensor<1x8xi32>
  %e2 = tosa.rescale %e1, %m, %s33, %z32, %z8 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x8xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x8xi8>
  %f0 = tosa.table %x, %t : (tensor<1x8xi8>, tensor<256xi8>) -> tensor<1x8xi8>
  %f1 = tosa.table %f0, %t : (tensor<1x8xi8>, tensor<256xi8>) -> tensor<1x8xi8>
  return %a1, %b1, %c1, %d1, %e2, %f1 : tensor<1x8xi8>, tensor<1x8xi8>, tensor<1x8xi8>, tensor<1x8xi8>, tensor<1x8xi8>, tensor<1x8xi8>
}

func.func @refused(%x: tensor<1x8xi8>, %mult: tensor<1xi32>, %shift: tensor<1xi8>, %izp: tensor<1xi8>, %ozp: tensor<1xi8>, %mshift: tensor<1xi8>, %table: tensor<256xi8>) -> (tensor<1x8xi8>, tensor<1x8xi8>, tensor<1x8xi8>, tensor<1x8xi8>, tensor<1x8xi8>, tensor<1x8xi8>) {
  %m = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
  %s28 = "tosa.const"() <{values = dense<28> : tensor<1xi8>}> : () -> tensor<1xi8>
  %s33 = "tosa.const"() <{values = dense<33> : tensor<1xi8>}> : () -> tensor<1xi8>
  %z8 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %z32 = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %k = "tosa.const"() <{values = dense<3> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
  %t = "tosa.const"() <{values = dense<5> : tensor<256xi8>}> : () -> tensor<256xi8>
  %a0 = tosa.rescale %x, %mult, %s28, %z8, %z32 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x8xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<1x8xi32>
  %a1 = tosa.rescale %a0, %m, %s33, %z32, %z8 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x8xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x8xi8>
  %b0 = tosa.rescale %x, %m, %s28, %z8, %z32 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x8xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<1x8xi32>
  %b1 = tosa.rescale %b0, %m, %shift, %z32, %z8 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x8xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x8xi8>
  %c0 = tosa.rescale %x, %m, %s28, %izp, %z32 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x8xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<1x8xi32>
  %c1 = tosa.rescale %c0, %m, %s33, %z32, %z8 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x8xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x8xi8>
  %d0 = tosa.rescale %x, %m, %s28, %z8, %z32 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x8xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<1x8xi32>
  %d1 = tosa.rescale %d0, %m, %s33, %z32, %ozp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x8xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x8xi8>
  %e0 = tosa.rescale %x, %m, %s28, %z8, %z32 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x8xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<1x8xi32>
  %e1 = tosa.mul %e0, %k, %mshift : (tensor<1x8xi32>, tensor<1x1xi32>, tensor<1xi8>) -> tensor<1x8xi32>
  %e2 = tosa.rescale %e1, %m, %s33, %z32, %z8 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x8xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x8xi8>
  %f0 = tosa.table %x, %t : (tensor<1x8xi8>, tensor<256xi8>) -> tensor<1x8xi8>
  %f1 = tosa.table %f0, %table : (tensor<1x8xi8>, tensor<256xi8>) -> tensor<1x8xi8>
  return %a1, %b1, %c1, %d1, %e2, %f1 : tensor<1x8xi8>, tensor<1x8xi8>, tensor<1x8xi8>, tensor<1x8xi8>, tensor<1x8xi8>, tensor<1x8xi8>
}

func.func @inexact(%x: tensor<1x8xi8>) -> tensor<1x8xi8> {
  %m = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
  %s28 = "tosa.const"() <{values = dense<28> : tensor<1xi8>}> : () -> tensor<1xi8>
  %s33 = "tosa.const"() <{values = dense<33> : tensor<1xi8>}> : () -> tensor<1xi8>
  %z8 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %z32 = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %0 = tosa.rescale %x, %m, %s28, %z8, %z32 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = INEXACT_ROUND, scale32 = true} : (tensor<1x8xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<1x8xi32>
  %1 = tosa.rescale %0, %m, %s33, %z32, %z8 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x8xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x8xi8>
  return %1 : tensor<1x8xi8>
}

func.func @shared_mul(%arg0: tensor<1x4x4x8xi8>) -> (tensor<1x4x4x8xi8>, tensor<1x4x4x8xi32>) {
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

func.func @unsigned(%x: tensor<1x8xi8>, %y: tensor<1x8xi8>) -> (tensor<1x8xi8>, tensor<1x8xi8>) {
  %m = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
  %m7 = "tosa.const"() <{values = dense<1518500250> : tensor<1xi32>}> : () -> tensor<1xi32>
  %s30 = "tosa.const"() <{values = dense<30> : tensor<1xi8>}> : () -> tensor<1xi8>
  %s31 = "tosa.const"() <{values = dense<31> : tensor<1xi8>}> : () -> tensor<1xi8>
  %zp131 = "tosa.const"() <{values = dense<-125> : tensor<1xi8>}> : () -> tensor<1xi8>
  %zp3 = "tosa.const"() <{values = dense<3> : tensor<1xi8>}> : () -> tensor<1xi8>
  %zp5 = "tosa.const"() <{values = dense<5> : tensor<1xi8>}> : () -> tensor<1xi8>
  %zp0 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %zpm2 = "tosa.const"() <{values = dense<-2> : tensor<1xi8>}> : () -> tensor<1xi8>
  %u0 = tosa.rescale %x, %m, %s30, %zp131, %zp3 {input_unsigned = true, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x8xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x8xi8>
  %u1 = tosa.rescale %u0, %m, %s31, %zp3, %zp5 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x8xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x8xi8>
  %v0 = tosa.rescale %y, %m7, %s31, %zp0, %zpm2 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x8xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x8xi8>
  %v1 = tosa.rescale %v0, %m, %s30, %zpm2, %zp131 {input_unsigned = false, output_unsigned = true, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x8xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x8xi8>
  return %u1, %v1 : tensor<1x8xi8>, tensor<1x8xi8>
}

func.func @chain(%x: tensor<1x8xi8>, %y: tensor<1x8xi8>) -> (tensor<1x8xi8>, tensor<1x8xi8>) {
  %m = "tosa.const"() <{values = dense<1518500250> : tensor<1xi32>}> : () -> tensor<1xi32>
  %s31 = "tosa.const"() <{values = dense<31> : tensor<1xi8>}> : () -> tensor<1xi8>
  %zp3 = "tosa.const"() <{values = dense<3> : tensor<1xi8>}> : () -> tensor<1xi8>
  %zpm2 = "tosa.const"() <{values = dense<-2> : tensor<1xi8>}> : () -> tensor<1xi8>
  %t = "tosa.const"() <{values = dense<[-127, -127, -127, -127, -126, -126, -126, -126, -126, -126, -126, -126, -126, -126, -126, -126, -126, -126, -126, -126, -126, -126, -126, -126, -126, -126, -125, -125, -125, -125, -125, -125, -125, -125, -125, -125, -124, -124, -124, -124, -124, -124, -124, -123, -123, -123, -123, -123, -122, -122, -122, -122, -121, -121, -121, -121, -120, -120, -120, -119, -119, -118, -118, -118, -117, -117, -116, -116, -115, -114, -114, -113, -112, -112, -111, -110, -109, -109, -108, -107, -106, -105, -104, -103, -102, -100, -99, -98, -97, -95, -94, -92, -91, -89, -88, -86, -84, -83, -81, -79, -77, -75, -73, -70, -68, -66, -64, -61, -59, -56, -54, -51, -48, -46, -43, -40, -37, -34, -31, -28, -25, -22, -19, -16, -13, -10, -6, -3, 0, 3, 6, 10, 13, 16, 19, 22, 25, 28, 31, 34, 37, 40, 43, 46, 48, 51, 54, 56, 59, 61, 64, 66, 68, 70, 73, 75, 77, 79, 81, 83, 84, 86, 88, 89, 91, 92, 94, 95, 97, 98, 99, 100, 102, 103, 104, 105, 106, 107, 108, 109, 109, 110, 111, 112, 112, 113, 114, 114, 115, 116, 116, 117, 117, 118, 118, 118, 119, 119, 120, 120, 120, 121, 121, 121, 121, 122, 122, 122, 122, 123, 123, 123, 123, 123, 124, 124, 124, 124, 124, 124, 124, 125, 125, 125, 125, 125, 125, 125, 125, 125, 125, 126, 126, 126, 126, 126, 126, 126, 126, 126, 126, 126, 126, 126, 126, 126, 126, 126, 126, 126, 126, 126, 126, 127, 127, 127]> : tensor<256xi8>}> : () -> tensor<256xi8>
  %pm = "tosa.const"() <{values = dense<[1073741824, 1518500250, 1073741824, 1518500250, 1073741824, 1518500250, 1073741824, 1518500250]> : tensor<8xi32>}> : () -> tensor<8xi32>
  %ps1 = "tosa.const"() <{values = dense<[28, 29, 30, 28, 29, 30, 28, 29]> : tensor<8xi8>}> : () -> tensor<8xi8>
  %ps2 = "tosa.const"() <{values = dense<33> : tensor<8xi8>}> : () -> tensor<8xi8>
  %pm1 = "tosa.const"() <{values = dense<1073741824> : tensor<8xi32>}> : () -> tensor<8xi32>
  %z8 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %z32 = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %r = tosa.rescale %x, %m, %s31, %zp3, %zpm2 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x8xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x8xi8>
  %cl = tosa.clamp %r {min_val = -100 : i8, max_val = 100 : i8} : (tensor<1x8xi8>) -> tensor<1x8xi8>
  %tb = tosa.table %cl, %t : (tensor<1x8xi8>, tensor<256xi8>) -> tensor<1x8xi8>
  %p0 = tosa.rescale %y, %pm1, %ps1, %z8, %z32 {input_unsigned = false, output_unsigned = false, per_channel = true, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x8xi8>, tensor<8xi32>, tensor<8xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<1x8xi32>
  %p1 = tosa.rescale %p0, %pm, %ps2, %z32, %z8 {input_unsigned = false, output_unsigned = false, per_channel = true, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x8xi32>, tensor<8xi32>, tensor<8xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x8xi8>
  return %tb, %p1 : tensor<1x8xi8>, tensor<1x8xi8>
}

func.func @affine(%arg0: tensor<1x2x2x2xi8>) -> tensor<1x2x2x2xi32> {
  %table = "tosa.const"() <{values = dense<[-60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -60, -59, -58, -57, -56, -55, -54, -53, -52, -51, -50, -49, -48, -47, -46, -45, -44, -43, -42, -41, -40, -39, -38, -37, -36, -35, -34, -33, -32, -31, -30, -29, -28, -27, -26, -25, -24, -23, -22, -21, -20, -19, -18, -17, -16, -15, -14, -13, -12, -11, -10, -9, -8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60]> : tensor<256xi8>}> : () -> tensor<256xi8>
  %gamma = "tosa.const"() <{values = dense<2> : tensor<1x1x1x2xi8>}> : () -> tensor<1x1x1x2xi8>
  %beta = "tosa.const"() <{values = dense<3> : tensor<1x1x1x2xi8>}> : () -> tensor<1x1x1x2xi8>
  %w = "tosa.const"() <{values = dense<1> : tensor<2x1x1x2xi8>}> : () -> tensor<2x1x1x2xi8>
  %b = "tosa.const"() <{values = dense<[10, -20]> : tensor<2xi32>}> : () -> tensor<2xi32>
  %one = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
  %s30 = "tosa.const"() <{values = dense<30> : tensor<1xi8>}> : () -> tensor<1xi8>
  %z8 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %z32 = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %t = tosa.table %arg0, %table : (tensor<1x2x2x2xi8>, tensor<256xi8>) -> tensor<1x2x2x2xi8>
  %rt = tosa.rescale %t, %one, %s30, %z8, %z32 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x2x2x2xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<1x2x2x2xi32>
  %rg = tosa.rescale %gamma, %one, %s30, %z8, %z32 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x1x1x2xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<1x1x1x2xi32>
  %m = tosa.mul %rt, %rg, %z8 : (tensor<1x2x2x2xi32>, tensor<1x1x1x2xi32>, tensor<1xi8>) -> tensor<1x2x2x2xi32>
  %rp = tosa.rescale %m, %one, %s30, %z32, %z8 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x2x2x2xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x2x2x2xi8>
  %rs = tosa.rescale %rp, %one, %s30, %z8, %z32 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x2x2x2xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<1x2x2x2xi32>
  %rb = tosa.rescale %beta, %one, %s30, %z8, %z32 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x1x1x2xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<1x1x1x2xi32>
  %a = tosa.add %rs, %rb : (tensor<1x2x2x2xi32>, tensor<1x1x1x2xi32>) -> tensor<1x2x2x2xi32>
  %rsum = tosa.rescale %a, %one, %s30, %z32, %z8 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x2x2x2xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x2x2x2xi8>
  %c = tosa.conv2d %rsum, %w, %b, %z8, %z8 {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x2x2x2xi8>, tensor<2x1x1x2xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x2x2x2xi32>
  return %c : tensor<1x2x2x2xi32>
}
