# A design space for matmul_16.py: the tile sizes are sampled, so
# `loom tune examples/matmul_16.py --space THIS --trials 16` searches them.
b0 = sch.get_block(name="matmul", func_name="main")
l1, l2, l3 = sch.get_loops(block=b0)
v4, v5 = sch.sample_perfect_tile(loop=l1, n=2, max_innermost_factor=8)
l6, l7 = sch.split(loop=l1, factors=[v4, v5])
v8, v9 = sch.sample_perfect_tile(loop=l2, n=2, max_innermost_factor=16)
l10, l11 = sch.split(loop=l2, factors=[v8, v9])
sch.reorder(l6, l10, l3, l7, l11)
sch.vectorize(loop=l11)
