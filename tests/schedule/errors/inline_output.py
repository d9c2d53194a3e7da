# expect: 3:.*compute_inline: block 'matmul' has an init statement
b0 = sch.get_block(name="matmul")
sch.compute_inline(block=b0)
