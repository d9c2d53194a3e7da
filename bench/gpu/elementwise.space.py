# A GPU design space for the elementwise programs: threads per block and
# elements per thread (an unrolled loop, each step coalesced) sampled.
b = sch.get_block("C")
i, j = sch.get_loops(b)
f = sch.fuse(i, j)
u = sch.sample_categorical(candidates=[1, 2, 4, 8], probs=[0.25, 0.25, 0.25, 0.25])
t = sch.sample_categorical(candidates=[64, 128, 256, 512, 1024], probs=[0.2, 0.2, 0.2, 0.2, 0.2])
bx, uu, tx = sch.split(f, [None, u, t])
sch.bind(bx, "blockIdx.x")
sch.bind(tx, "threadIdx.x")
sch.unroll(uu)
