# matmul_manual.sched.py with factors scaled to 64x64x64: the same nest,
# reorder, parallel and vectorize.
b0 = sch.get_block(name="matmul", func_name="main")
l1, l2, l3 = sch.get_loops(block=b0)
l4, l5, l6, l7 = sch.split(loop=l1, factors=[4, 2, 8, 1])
l8, l9, l10, l11 = sch.split(loop=l2, factors=[4, 2, 1, 8])
l12, l13 = sch.split(loop=l3, factors=[16, 4])
sch.reorder(l4, l8, l5, l9, l12, l6, l10, l13, l7, l11)
sch.parallel(loop=l4)
sch.vectorize(loop=l11)
