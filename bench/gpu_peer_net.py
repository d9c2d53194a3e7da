"""The PyTorch side of the network rows of scripts/gpu-check.sh: ResNet-18
(torchvision's architecture, written out here: the GPU machine has no
torchvision) in float32, eval mode, eager, cuDNN's autotuner on and TF32
off, as Loom computes float32. Printed as `NAME MS` lines, the median of
the runs:
  resnet18_bN         a run from host memory: the input copied to the GPU,
                      the network, the output copied back (what `loom model
                      run --target cuda` times);
  resnet18_bN_device  the network alone, its input on the GPU already;
  resnet18_f16_bN, resnet18_f16_bN_device
                      the same in float16 (`net.half()`, every tensor
                      float16, as tests/onnx/resnet.py --dtype float16
                      writes the model; cuDNN sums in float32).

  usage: python3 bench/gpu_peer_net.py [REPEAT [BATCH...]]   (10; 1 128)"""
import sys
import time

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                      nn.BatchNorm2d(cout))

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return torch.relu(y + (self.down(x) if self.down is not None else x))


class ResNet18(nn.Module):
    def __init__(self, classes=1000):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64),
                                  nn.ReLU(), nn.MaxPool2d(3, 2, 1))
        layers, cin = [], 64
        for i, cout in enumerate((64, 128, 256, 512)):
            for j in range(2):
                layers.append(Block(cin, cout, 2 if i > 0 and j == 0 else 1))
                cin = cout
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(512, classes)

    def forward(self, x):
        x = self.layers(self.stem(x))
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))


def median_ms(fn, repeat):
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    return times[len(times) // 2]


def main():
    repeat = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    batches = [int(b) for b in sys.argv[2:]] or [1, 128]
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    for name, dtype in (("resnet18", torch.float32), ("resnet18_f16", torch.float16)):
        net = ResNet18().cuda().eval().to(dtype)
        with torch.no_grad():
            for b in batches:
                host = torch.rand((b, 3, 224, 224), dtype=dtype)
                dev = host.cuda()
                print("%s_b%d %.6f" % (name, b, median_ms(lambda: net(host.cuda()).cpu(), repeat)),
                      flush=True)
                print("%s_b%d_device %.6f" % (name, b, median_ms(lambda: net(dev), repeat)),
                      flush=True)


if __name__ == "__main__":
    main()
