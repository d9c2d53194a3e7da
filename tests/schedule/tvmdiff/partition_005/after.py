# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((16, 16, 16), "float32"), F: T.Buffer((16, 16), "float32")):
        T.func_attr({"global_symbol": "multiple_reduction_blocks"})
        # with T.sblock("root"):
        C = T.sblock_alloc_buffer((16, 16))
        D = T.sblock_alloc_buffer((16, 16))
        E = T.sblock_alloc_buffer((16, 16))
        for i in range(16):
            for j1 in range(16):
                for k1o, k1i in T.grid(4, 4):
                    with T.sblock("C"):
                        ci, cj = T.axis.remap("SS", [i, j1])
                        ck = T.axis.reduce(16, k1o * 4 + k1i)
                        T.reads(A[ci, cj, ck])
                        T.writes(C[ci, cj])
                        with T.init():
                            C[ci, cj] = T.float32(0.0)
                        C[ci, cj] = C[ci, cj] + A[ci, cj, ck]
                for k2o in range(4):
                    with T.sblock("D_k2i_common"):
                        T.reads()
                        T.writes()
                        with T.sblock("D_k2i0_partition"):
                            T.reads()
                            T.writes()
                            for k2i0 in range(3):
                                with T.sblock("D_k2i0"):
                                    di, dj = T.axis.remap("SS", [i, j1])
                                    dk = T.axis.reduce(16, k2o * 4 + k2i0)
                                    T.reads(A[di, dj, dk], C[di, dj])
                                    T.writes(D[di, dj])
                                    with T.init():
                                        D[di, dj] = T.float32(0.0)
                                    D[di, dj] = D[di, dj] + A[di, dj, dk] + C[di, dj]
                        with T.sblock("D_k2i1_partition"):
                            T.reads()
                            T.writes()
                            for k2i1 in range(3, 4):
                                with T.sblock("D_k2i1"):
                                    di, dj = T.axis.remap("SS", [i, j1])
                                    dk = T.axis.reduce(16, k2o * 4 + k2i1)
                                    T.reads(A[di, dj, dk], C[di, dj])
                                    T.writes(D[di, dj])
                                    with T.init():
                                        D[di, dj] = T.float32(0.0)
                                    D[di, dj] = D[di, dj] + A[di, dj, dk] + C[di, dj]
            for j2 in range(16):
                for k3o, k3i in T.grid(4, 4):
                    with T.sblock("E"):
                        ei, ej = T.axis.remap("SS", [i, j2])
                        ek = T.axis.reduce(16, k3o * 4 + k3i)
                        T.reads(A[ei, ej, ek], D[ei, ej])
                        T.writes(E[ei, ej])
                        with T.init():
                            E[ei, ej] = T.float32(0.0)
                        E[ei, ej] = E[ei, ej] + A[ei, ej, ek] + D[ei, ej]
                for k4o, k4i in T.grid(4, 4):
                    with T.sblock("F"):
                        fi, fj = T.axis.remap("SS", [i, j2])
                        fk = T.axis.reduce(16, k4o * 4 + k4i)
                        T.reads(A[fi, fj, fk], E[fi, fj])
                        T.writes(F[fi, fj])
                        with T.init():
                            F[fi, fj] = T.float32(0.0)
                        F[fi, fj] = F[fi, fj] + A[fi, fj, fk] + E[fi, fj]