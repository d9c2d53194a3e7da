# expect: 3:.*storage_align: buffer 'C' has 2 dimensions, so axis must be in \[-2, 2\), not 2
b0 = sch.get_block(name="matmul")
sch.storage_align(block=b0, buffer_index=0, axis=2, factor=128, offset=127)
