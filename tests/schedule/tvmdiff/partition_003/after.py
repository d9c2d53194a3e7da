# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(7), T.int64(512)), "float32"), B: T.Buffer((T.int64(1),), "int32"), C: T.Buffer((T.int64(1), T.int64(512)), "float32")):
        T.func_attr({"global_symbol": "nested_buffer_access"})
        # with T.sblock("root"):
        for ax0 in range(T.int64(1)):
            with T.sblock("C_ax1_common"):
                T.reads()
                T.writes()
                with T.sblock("C_ax10_partition"):
                    T.reads()
                    T.writes()
                    for ax10 in range(T.int64(8)):
                        with T.sblock("C_ax10"):
                            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax10])
                            T.reads(A[B[v_ax0], v_ax1], B[T.int64(0)])
                            T.writes(C[T.int64(0), T.int64(0):T.int64(8)])
                            C[v_ax0, v_ax1] = A[B[v_ax0], v_ax1]
                with T.sblock("C_ax11_partition"):
                    T.reads()
                    T.writes()
                    for ax11 in range(T.int64(8), T.int64(496)):
                        with T.sblock("C_ax11"):
                            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax11])
                            T.reads(A[B[v_ax0], v_ax1], B[T.int64(0)])
                            T.writes(C[T.int64(0), T.int64(8):T.int64(496)])
                            C[v_ax0, v_ax1] = A[B[v_ax0], v_ax1]
                with T.sblock("C_ax12_partition"):
                    T.reads()
                    T.writes()
                    for ax12 in range(T.int64(496), T.int64(512)):
                        with T.sblock("C_ax12"):
                            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax12])
                            T.reads(A[B[v_ax0], v_ax1], B[T.int64(0)])
                            T.writes(C[T.int64(0), T.int64(496):T.int64(512)])
                            C[v_ax0, v_ax1] = A[B[v_ax0], v_ax1]