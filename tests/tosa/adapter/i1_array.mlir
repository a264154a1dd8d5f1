// MLIR 16 parsed `array<i1: 1>` into an attribute without data and crashed printing it; MLIR 22
// refuses it as a parse error ("expected 'true' or 'false' values for i1 type"): exit 1, nothing
// written.
func.func @f(%x: tensor<4xi8>) -> tensor<4xi8> {
  %0 = tosa.transpose %x {perms = array<i1: 1>} : (tensor<4xi8>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}
