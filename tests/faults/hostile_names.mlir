// Fault corpus: StableHLO whose argument names (block-argument locations) and result
// paths (jax.result_info) hold a newline, ESC (\1B), BEL (\07), NUL (\00) and a pipe.
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2xf32> loc("x\0Averdict: improvement"), %arg1: tensor<2xf32> loc("\1B[31mred\07bell\00nul|pipe")) -> (tensor<2xf32> {jax.result_info = "result\0A\1B[2J|cleared"}, tensor<2xf32> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.add %arg0, %arg1 : tensor<2xf32>
    return %0, %arg0 : tensor<2xf32>, tensor<2xf32>
  }
}
