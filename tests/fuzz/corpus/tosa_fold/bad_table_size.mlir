// MLIR 22's verifier accepts a TABLE of 255 entries; qfold does not (bad input).
func.func @f(%x: tensor<4xi8>) -> tensor<4xi8> {
  %t = "tosa.const"() <{values = dense<1> : tensor<255xi8>}> : () -> tensor<255xi8> loc("t")
  %y = "tosa.table"(%x, %t) : (tensor<4xi8>, tensor<255xi8>) -> tensor<4xi8> loc("y")
  return %y : tensor<4xi8>
}
