# expect: 3:.*transform_block_layout: result 0 of the index map mixes spatial and reduction iters of block 'matmul'
b0 = sch.get_block(name="matmul")
sch.transform_block_layout(block=b0, index_map=lambda i, j, k: (j * 12 + k, i))
