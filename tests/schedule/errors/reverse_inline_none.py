# expect: 3:.*reverse_compute_inline: block 'matmul' is not a complete block writing one buffer
b0 = sch.get_block(name="matmul")
sch.reverse_compute_inline(block=b0)
