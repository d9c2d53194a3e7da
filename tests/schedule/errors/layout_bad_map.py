# expect: 3:.*transform_layout: index map uses 'q', which is not one of its parameters
b0 = sch.get_block(name="matmul")
sch.transform_layout(block=b0, buffer=("write", 0), index_map=lambda i, j: (i // 4, q))
