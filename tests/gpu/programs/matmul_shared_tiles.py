# A 256^3 float32 matmul tiled through shared memory: 128 x 128 per block of
# 16 x 16 threads, a k step of 16 (bench/gpu/matmul.sched.py). The fetches
# bind threadIdx inside the loops bound to threadIdx, as MetaSchedule does.
# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((256, 256), "float32"), B: T.Buffer((256, 256), "float32"), C: T.Buffer((256, 256), "float32")):
    T.func_attr({"tir.noalias": True})
    # with T.block("root"):
    C_local = T.alloc_buffer((256, 256), scope="local")
    A_shared = T.alloc_buffer((256, 256), scope="shared")
    B_shared = T.alloc_buffer((256, 256), scope="shared")
    for i_0 in T.thread_binding(2, thread="blockIdx.y"):
        for j_0 in T.thread_binding(2, thread="blockIdx.x"):
            for i_1 in T.thread_binding(16, thread="threadIdx.y"):
                for j_1 in T.thread_binding(16, thread="threadIdx.x"):
                    for i_2_init, j_2_init in T.grid(8, 8):
                        with T.block("C_init"):
                            vi = T.axis.spatial(256, i_0 * 128 + i_1 * 8 + i_2_init)
                            vj = T.axis.spatial(256, j_0 * 128 + j_1 * 8 + j_2_init)
                            T.reads()
                            T.writes(C_local[vi, vj])
                            C_local[vi, vj] = T.float32(0.0)
                    for k_0 in range(16):
                        for ax0_ax1_fused_0 in range(8):
                            for ax0_ax1_fused_1 in T.thread_binding(16, thread="threadIdx.y"):
                                for ax0_ax1_fused_2 in T.thread_binding(16, thread="threadIdx.x"):
                                    with T.block("A_shared"):
                                        v0 = T.axis.spatial(256, i_0 * 128 + ax0_ax1_fused_0 * 16 + ax0_ax1_fused_1)
                                        v1 = T.axis.spatial(256, k_0 * 16 + ax0_ax1_fused_2)
                                        T.reads(A[v0, v1])
                                        T.writes(A_shared[v0, v1])
                                        A_shared[v0, v1] = A[v0, v1]
                        for ax0_ax1_fused_0 in range(8):
                            for ax0_ax1_fused_1 in T.thread_binding(16, thread="threadIdx.y"):
                                for ax0_ax1_fused_2 in T.thread_binding(16, thread="threadIdx.x"):
                                    with T.block("B_shared"):
                                        v0 = T.axis.spatial(256, k_0 * 16 + ax0_ax1_fused_0 * 2 + (ax0_ax1_fused_1 * 16 + ax0_ax1_fused_2) // 128)
                                        v1 = T.axis.spatial(256, j_0 * 128 + (ax0_ax1_fused_1 * 16 + ax0_ax1_fused_2) % 128)
                                        T.reads(B[v0, v1])
                                        T.writes(B_shared[v0, v1])
                                        B_shared[v0, v1] = B[v0, v1]
                        for k_1 in T.unroll(16):
                            for i_2 in T.unroll(8):
                                for j_2 in T.unroll(8):
                                    with T.block("C_update"):
                                        vi = T.axis.spatial(256, i_0 * 128 + i_1 * 8 + i_2)
                                        vj = T.axis.spatial(256, j_0 * 128 + j_1 * 8 + j_2)
                                        vk = T.axis.reduce(256, k_0 * 16 + k_1)
                                        T.reads(C_local[vi, vj], A_shared[vi, vk], B_shared[vk, vj])
                                        T.writes(C_local[vi, vj])
                                        C_local[vi, vj] = C_local[vi, vj] + A_shared[vi, vk] * B_shared[vk, vj]
                    for ax0, ax1 in T.grid(8, 8):
                        with T.block("C_local"):
                            v0 = T.axis.spatial(256, i_0 * 128 + i_1 * 8 + ax0)
                            v1 = T.axis.spatial(256, j_0 * 128 + j_1 * 8 + ax1)
                            T.reads(C_local[v0, v1])
                            T.writes(C[v0, v1])
                            C[v0, v1] = C_local[v0, v1]
