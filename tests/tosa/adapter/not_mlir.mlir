this is not MLIR {{{
