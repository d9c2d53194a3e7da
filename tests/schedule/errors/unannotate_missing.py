# expect: 4:.*unannotate: loop 'i' has no annotation 'x'
b0 = sch.get_block(name="matmul")
l1, l2, l3 = sch.get_loops(block=b0)
sch.unannotate(block_or_loop=l1, ann_key="x")
