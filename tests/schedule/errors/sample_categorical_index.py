# expect: 3:.*sample_categorical: the decision 3 is not an index into the 3 candidates: it must be 0 to 2
b0 = sch.get_block(name="matmul")
v1 = sch.sample_categorical(candidates=[0, 16, 64], probs=[0.5, 0.25, 0.25], decision=3)
sch.annotate(block_or_loop=b0, ann_key="meta_schedule.unroll_explicit", ann_val=v1)
