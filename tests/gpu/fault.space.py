# The design space of tests/gpu/fault.py: the program as written, unrolled
# or not, so that `loom tune` has candidates to measure (each one faults).
b = sch.get_block("A")
