// MLIR 22 accepts a TABLE of 255 entries; qfold does not (bad input, exit 1).
func.func @f(%arg0: tensor<4xi8>) -> tensor<4xi8> {
  %t = "tosa.const"() <{values = dense<1> : tensor<255xi8>}> : () -> tensor<255xi8>
  %0 = tosa.table %arg0, %t : (tensor<4xi8>, tensor<255xi8>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}
