# expect: 3:.*reorder_block_iter_var: new_order must be a permutation of \[0, ..., 2\] for the 3 iters of block 'matmul'
b0 = sch.get_block(name="matmul")
sch.reorder_block_iter_var(block=b0, new_order=[0, 0, 2])
