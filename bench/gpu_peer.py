"""The PyTorch side of bench/gpu: each operation of bench/gpu/*.py timed the
way Loom's CUDA runner times a kernel (the L2 cache overwritten before each
call, CUDA events around the call, the median of the calls), printed as
`NAME MS` lines."""
import sys

import torch


def timed(fn, repeat):
    flush = torch.empty(2 * 64 * 1024 * 1024, dtype=torch.uint8, device="cuda")
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    fn()
    torch.cuda.synchronize()
    times = []
    for k in range(repeat):
        flush.fill_(k & 255)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    times.sort()
    return times[len(times) // 2]


def main():
    repeat = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    dev = "cuda"
    big = (16384, 16384)
    a16 = torch.rand(big, dtype=torch.float16, device=dev)
    b16 = torch.rand(big, dtype=torch.float16, device=dev)
    c16 = torch.empty(big, dtype=torch.float16, device=dev)
    cases = {
        "copy_f16": lambda: c16.copy_(a16),
        "add_f16": lambda: torch.add(a16, b16, out=c16),
    }
    r = torch.rand((16384, 1024), dtype=torch.float16, device=dev)
    rs = torch.empty((16384,), dtype=torch.float32, device=dev)
    rm = torch.empty((16384,), dtype=torch.float16, device=dev)
    cases["rowsum_f16"] = lambda: torch.sum(r, dim=1, dtype=torch.float32, out=rs)
    cases["rowmax_f16"] = lambda: torch.amax(r, dim=1, out=rm)
    cases["softmax_f16"] = lambda: torch.softmax(r, dim=1)
    w = torch.rand(big, dtype=torch.float16, device=dev)
    x = torch.rand((16384,), dtype=torch.float16, device=dev)
    y = torch.empty((16384,), dtype=torch.float16, device=dev)
    cases["gemv_f16"] = lambda: torch.mv(w, x, out=y)
    m32a = torch.rand((4096, 4096), dtype=torch.float32, device=dev)
    m32b = torch.rand((4096, 4096), dtype=torch.float32, device=dev)
    m32c = torch.empty((4096, 4096), dtype=torch.float32, device=dev)
    torch.backends.cuda.matmul.allow_tf32 = False
    cases["matmul_f32"] = lambda: torch.matmul(m32a, m32b, out=m32c)
    m16a = m32a.half()
    m16b = m32b.half()
    m16c = torch.empty((4096, 4096), dtype=torch.float16, device=dev)
    cases["matmul_f16"] = lambda: torch.matmul(m16a, m16b, out=m16c)
    cases["matmul_nt_f16"] = lambda: torch.matmul(m16a, m16b.t(), out=m16c)
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = False
    cx = torch.rand((128, 64, 56, 56), dtype=torch.float32, device=dev)
    cw = torch.rand((64, 64, 3, 3), dtype=torch.float32, device=dev)
    cases["conv2d_f32"] = lambda: torch.nn.functional.conv2d(cx, cw, padding=1)
    k16a = torch.rand((8192, 8192), dtype=torch.float16, device=dev)
    k16b = torch.rand((8192, 8192), dtype=torch.float16, device=dev)
    k16c = torch.empty((8192, 8192), dtype=torch.float16, device=dev)
    cases["matmul8k_f16"] = lambda: torch.matmul(k16a, k16b, out=k16c)
    print("# device", torch.cuda.get_device_name(0), "torch", torch.__version__)
    for name, fn in cases.items():
        print(name, "%.6f" % timed(fn, repeat), flush=True)


if __name__ == "__main__":
    main()
