// RESCALEs that break the spec's rules: a shift outside 2..62, a negative multiplier, an i48
// input with scale32 (bad input; MLIR 22's verifier accepts them, qfold refuses them).
func.func @f(%x: tensor<4xi8>, %w: tensor<4xi48>) -> (tensor<4xi8>, tensor<4xi8>, tensor<4xi8>) {
  %y_m = "tosa.const"() <{values = dense<[1073741824]> : tensor<1xi32>}> : () -> tensor<1xi32> loc("y_m")
  %y_s = "tosa.const"() <{values = dense<[70]> : tensor<1xi8>}> : () -> tensor<1xi8> loc("y_s")
  %y_izp = "tosa.const"() <{values = dense<[0]> : tensor<1xi8>}> : () -> tensor<1xi8> loc("y_izp")
  %y_ozp = "tosa.const"() <{values = dense<[0]> : tensor<1xi8>}> : () -> tensor<1xi8> loc("y_ozp")
  %y = "tosa.rescale"(%x, %y_m, %y_s, %y_izp, %y_ozp) <{input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = #tosa.rounding_mode<SINGLE_ROUND>, scale32 = true}> : (tensor<4xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<4xi8> loc("y")
  %z_m = "tosa.const"() <{values = dense<[-5]> : tensor<1xi32>}> : () -> tensor<1xi32> loc("z_m")
  %z_s = "tosa.const"() <{values = dense<[30]> : tensor<1xi8>}> : () -> tensor<1xi8> loc("z_s")
  %z_izp = "tosa.const"() <{values = dense<[0]> : tensor<1xi8>}> : () -> tensor<1xi8> loc("z_izp")
  %z_ozp = "tosa.const"() <{values = dense<[0]> : tensor<1xi8>}> : () -> tensor<1xi8> loc("z_ozp")
  %z = "tosa.rescale"(%x, %z_m, %z_s, %z_izp, %z_ozp) <{input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = #tosa.rounding_mode<SINGLE_ROUND>, scale32 = true}> : (tensor<4xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<4xi8> loc("z")
  %v_m = "tosa.const"() <{values = dense<[1073741824]> : tensor<1xi32>}> : () -> tensor<1xi32> loc("v_m")
  %v_s = "tosa.const"() <{values = dense<[30]> : tensor<1xi8>}> : () -> tensor<1xi8> loc("v_s")
  %v_izp = "tosa.const"() <{values = dense<[0]> : tensor<1xi48>}> : () -> tensor<1xi48> loc("v_izp")
  %v_ozp = "tosa.const"() <{values = dense<[0]> : tensor<1xi8>}> : () -> tensor<1xi8> loc("v_ozp")
  %v = "tosa.rescale"(%w, %v_m, %v_s, %v_izp, %v_ozp) <{input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = #tosa.rounding_mode<SINGLE_ROUND>, scale32 = true}> : (tensor<4xi48>, tensor<1xi32>, tensor<1xi8>, tensor<1xi48>, tensor<1xi8>) -> tensor<4xi8> loc("v")
  return %y, %z, %v : tensor<4xi8>, tensor<4xi8>, tensor<4xi8>
}
