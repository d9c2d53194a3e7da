# expect: 4:.*tensorize: block 'matmul_o' does not match tensor intrinsic 'wmma_sync_16x16x16_f16f16f32': loop 'j' has extent 8 where the description's loop 'j' has 16
b0 = sch.get_block(name="matmul")
l1, l2, l3 = sch.get_loops(block=b0)
sch.tensorize(block_or_loop=l1, tensor_intrin="wmma_sync_16x16x16_f16f16f32")
