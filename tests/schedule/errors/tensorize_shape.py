# expect: 4:.*tensorize: block 'matmul_o' does not match tensor intrinsic 'loom_f32_dot_16': loop 'k' has extent 12 where the description's loop 'k' has 16
b0 = sch.get_block(name="matmul")
l1, l2, l3 = sch.get_loops(block=b0)
sch.tensorize(block_or_loop=l3, tensor_intrin="loom_f32_dot_16")
