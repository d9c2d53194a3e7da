# expect: 4:.*reverse_compute_at: block 'matmul' and loop 'i' are not under the same scope, or the loop encloses the block
b0 = sch.get_block(name="matmul")
l1, l2, l3 = sch.get_loops(block=b0)
sch.reverse_compute_at(block=b0, loop=l1, preserve_unit_loops=True)
