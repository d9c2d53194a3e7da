# A design space of tests/gpu/programs/once_per_block.py: its inner loop
# unrolled or not.
b = sch.get_block("C")
l0, l1 = sch.get_loops(b)
v = sch.sample_categorical(candidates=[0, 16], probs=[0.5, 0.5])
sch.annotate(l1, "pragma_auto_unroll_max_step", v)
