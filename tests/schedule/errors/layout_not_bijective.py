# expect: 3:.*transform_layout: the index map is not a bijection of buffer 'C' \(128 elements become 64\) and no pad_value is given
b0 = sch.get_block(name="matmul")
sch.transform_layout(block=b0, buffer=("write", 0), index_map=lambda i, j: (i // 2, j))
