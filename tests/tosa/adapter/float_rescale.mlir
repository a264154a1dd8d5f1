// A RESCALE of float values: MLIR 22's verifier refuses it (bad input, exit 1, nothing written).
func.func @f(%arg0: tensor<4xf32>) -> tensor<4xi8> {
  %m = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
  %s = "tosa.const"() <{values = dense<30> : tensor<1xi8>}> : () -> tensor<1xi8>
  %zi = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %zo = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %0 = tosa.rescale %arg0, %m, %s, %zi, %zo {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<4xf32>, tensor<1xi32>, tensor<1xi8>, tensor<1xf32>, tensor<1xi8>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}
