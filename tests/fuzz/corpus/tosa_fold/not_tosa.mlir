// No TOSA: a declaration, arith ops, and a function of two blocks.
module {
  func.func private @decl(i32) -> i32
  func.func @add(%a: i32, %b: i32) -> i32 {
    %0 = arith.addi %a, %b : i32
    %1 = func.call @decl(%0) : (i32) -> i32
    return %1 : i32
  }
  func.func @blocks(%c: i1, %x: tensor<4xi8>) -> tensor<4xi8> {
    cf.cond_br %c, ^bb1, ^bb2
  ^bb1:
    %t = "tosa.const"() <{values = dense<1> : tensor<256xi8>}> : () -> tensor<256xi8>
    %y = tosa.table %x, %t : (tensor<4xi8>, tensor<256xi8>) -> tensor<4xi8>
    return %y : tensor<4xi8>
  ^bb2:
    return %x : tensor<4xi8>
  }
}
