c = sch.get_block("C")
d = sch.get_block("D")
i, j, k = sch.get_loops(c)
sch.reverse_compute_at(d, i)
