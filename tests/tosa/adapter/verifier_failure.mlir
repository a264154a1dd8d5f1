// Parses, but the verifier refuses it: the returned type is not the function's (exit 1).
func.func @f(%arg0: tensor<4xi8>) -> tensor<4xi32> {
  return %arg0 : tensor<4xi8>
}
