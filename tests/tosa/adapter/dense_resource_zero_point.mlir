// A zero point whose tosa.const holds a dense_resource blob (the form MLIR keeps large constants
// in): bad input, exit 1, refused before MLIR 22's
// verifier itself aborts on it (RescaleOp's, Conv2DOp's, MatMulOp's zero-point check reads the
// blob with getValues<APInt>, which a dense_resource does not provide: report_fatal_error,
// SIGTRAP, exit 133, mlir-opt too); qfold-tosa-opt checks for it first (parser_guards.hpp).
func.func @f(%x: tensor<1x8xi8>) -> tensor<1x8xi8> {
  %m = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
  %s = "tosa.const"() <{values = dense<30> : tensor<1xi8>}> : () -> tensor<1xi8>
  %z = "tosa.const"() <{values = dense_resource<zp> : tensor<1xi8>}> : () -> tensor<1xi8>
  %0 = tosa.rescale %x, %m, %s, %z, %z {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x8xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x8xi8>
  return %0 : tensor<1x8xi8>
}
{-#
  dialect_resources: {
    builtin: {
      zp: "0x0400000000"
    }
  }
#-}
