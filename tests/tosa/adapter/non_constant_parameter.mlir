// Parameters TOSA 1.0 requires to be constants, computed at run time (function arguments): a
// RESCALE pair's multiplier, shift, input and output zero points, a MUL's shift, a TABLE's table.
// Every site is refused (not_constant), never an adapter failure; the module is written as read.
func.func @f(%x: tensor<1x8xi8>, %mult: tensor<1xi32>, %shift: tensor<1xi8>, %izp: tensor<1xi8>, %ozp: tensor<1xi8>, %mshift: tensor<1xi8>, %table: tensor<256xi8>) -> (tensor<1x8xi8>, tensor<1x8xi8>, tensor<1x8xi8>, tensor<1x8xi8>, tensor<1x8xi8>, tensor<1x8xi8>) {
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
