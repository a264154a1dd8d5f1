// A RESCALE pair whose first RESCALE is INEXACT_ROUND (any result within the spec's tolerance:
// not a function of its input, so not bit exact): refused, the module written as read.
func.func @f(%x: tensor<1x8xi8>) -> tensor<1x8xi8> {
  %m = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
  %s28 = "tosa.const"() <{values = dense<28> : tensor<1xi8>}> : () -> tensor<1xi8>
  %s33 = "tosa.const"() <{values = dense<33> : tensor<1xi8>}> : () -> tensor<1xi8>
  %z8 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %z32 = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %0 = tosa.rescale %x, %m, %s28, %z8, %z32 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = INEXACT_ROUND, scale32 = true} : (tensor<1x8xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<1x8xi32>
  %1 = tosa.rescale %0, %m, %s33, %z32, %z8 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x8xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x8xi8>
  return %1 : tensor<1x8xi8>
}
