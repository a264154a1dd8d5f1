// MATMULs: a constant right-hand side of one batch (qfold reads it as a linear layer; no pass
// folds into one on TOSA), one of two batches and a product of two activations (not linear).
func.func @f(%a: tensor<2x3x4xi8>, %b: tensor<2x4x2xi8>) -> (tensor<2x3x2xi32>, tensor<2x3x2xi32>, tensor<2x3x2xi32>, tensor<2x3x1x4xi8>) {
  %a4_shape = "tosa.const_shape"() <{values = dense<[2, 3, 1, 4]> : tensor<4xindex>}> : () -> !tosa.shape<4> loc("a4_shape")
  %a4 = "tosa.reshape"(%a, %a4_shape) : (tensor<2x3x4xi8>, !tosa.shape<4>) -> tensor<2x3x1x4xi8> loc("a4")
  %k = "tosa.const"() <{values = dense<[[[1, 2], [3, 4], [5, 6], [7, 8]]]> : tensor<1x4x2xi8>}> : () -> tensor<1x4x2xi8> loc("k")
  %mm1_azp = "tosa.const"() <{values = dense<[-4]> : tensor<1xi8>}> : () -> tensor<1xi8> loc("mm1_azp")
  %mm1_bzp = "tosa.const"() <{values = dense<[0]> : tensor<1xi8>}> : () -> tensor<1xi8> loc("mm1_bzp")
  %mm1 = "tosa.matmul"(%a, %k, %mm1_azp, %mm1_bzp) : (tensor<2x3x4xi8>, tensor<1x4x2xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<2x3x2xi32> loc("mm1")
  %k2 = "tosa.const"() <{values = dense<1> : tensor<2x4x2xi8>}> : () -> tensor<2x4x2xi8> loc("k2")
  %mm2_azp = "tosa.const"() <{values = dense<[-4]> : tensor<1xi8>}> : () -> tensor<1xi8> loc("mm2_azp")
  %mm2_bzp = "tosa.const"() <{values = dense<[0]> : tensor<1xi8>}> : () -> tensor<1xi8> loc("mm2_bzp")
  %mm2 = "tosa.matmul"(%a, %k2, %mm2_azp, %mm2_bzp) : (tensor<2x3x4xi8>, tensor<2x4x2xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<2x3x2xi32> loc("mm2")
  %mm3_azp = "tosa.const"() <{values = dense<[-4]> : tensor<1xi8>}> : () -> tensor<1xi8> loc("mm3_azp")
  %mm3_bzp = "tosa.const"() <{values = dense<[0]> : tensor<1xi8>}> : () -> tensor<1xi8> loc("mm3_bzp")
  %mm3 = "tosa.matmul"(%a, %b, %mm3_azp, %mm3_bzp) : (tensor<2x3x4xi8>, tensor<2x4x2xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<2x3x2xi32> loc("mm3")
  return %mm1, %mm2, %mm3, %a4 : tensor<2x3x2xi32>, tensor<2x3x2xi32>, tensor<2x3x2xi32>, tensor<2x3x1x4xi8>
}
