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
        for i_0, i_1 in T.grid(16, 1):
            for j1 in range(16):
                for k1o, k1i in T.grid(4, 4):
                    with T.sblock("C"):
                        ci = T.axis.spatial(16, i_0 + i_1)
                        cj = T.axis.spatial(16, j1)
                        ck = T.axis.reduce(16, k1o * 4 + k1i)
                        T.reads(A[ci, cj, ck])
                        T.writes(C[ci, cj])
                        with T.init():
                            C[ci, cj] = T.float32(0.0)
                        C[ci, cj] = C[ci, cj] + A[ci, cj, ck]
                for k2o, k2i in T.grid(4, 4):
                    with T.sblock("D"):
                        di = T.axis.spatial(16, i_0 + i_1)
                        dj = T.axis.spatial(16, j1)
                        dk = T.axis.reduce(16, k2o * 4 + k2i)
                        T.reads(A[di, dj, dk], C[di, dj])
                        T.writes(D[di, dj])
                        with T.init():
                            D[di, dj] = T.float32(0.0)
                        D[di, dj] = D[di, dj] + A[di, dj, dk] + C[di, dj]
            for j2 in range(16):
                for k3o, k3i in T.grid(4, 4):
                    with T.sblock("E"):
                        ei = T.axis.spatial(16, i_0 + i_1)
                        ej = T.axis.spatial(16, j2)
                        ek = T.axis.reduce(16, k3o * 4 + k3i)
                        T.reads(A[ei, ej, ek], D[ei, ej])
                        T.writes(E[ei, ej])
                        with T.init():
                            E[ei, ej] = T.float32(0.0)
                        E[ei, ej] = E[ei, ej] + A[ei, ej, ek] + D[ei, ej]
                for k4o_0, k4o_1, k4i in T.grid(1, 5, 4):
                    with T.sblock("F"):
                        fi = T.axis.spatial(16, i_0 + i_1)
                        fj = T.axis.spatial(16, j2)
                        fk = T.axis.reduce(16, (k4o_0 * 5 + k4o_1) * 4 + k4i)
                        T.where(k4o_0 * 5 + k4o_1 < 4)
                        T.reads(A[fi, fj, fk], E[fi, fj])
                        T.writes(F[fi, fj])
                        with T.init():
                            F[fi, fj] = T.float32(0.0)
                        F[fi, fj] = F[fi, fj] + A[fi, fj, fk] + E[fi, fj]