# expect: 3:.*argument 'loop' must be a loop, not a block
b0 = sch.get_block(name="matmul")
sch.parallel(loop=b0)
