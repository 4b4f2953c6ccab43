"""bf16 inference keeps memory flat: oneDNN keeps a kernel (with buffers) per product shape, so
the lower-dtype products pad their rows to a few shapes (tagger.modules.precision.ROW_QUANTUM)."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from tagger.modules.precision import ROW_QUANTUM, lowered_matmul, cpu_has_bf16

SCRIPT = """
import sys
import torch
torch.set_num_threads(1)
import tagger.modules.precision as precision
import tagger.modules.recurrent as recurrent
if sys.argv[1] == "unpadded":
    precision.ROW_QUANTUM = recurrent.BATCH_QUANTUM = 1

def rss():
    return int(open("/proc/self/status").read().split("VmRSS:")[1].split()[0]) // 1024

w_x = torch.randn(2, 128, 512).to(torch.bfloat16)
w_h = torch.randn(2, 128, 512).to(torch.bfloat16)
with torch.inference_mode():
    start = rss()
    for i in range(200):  # 200 distinct batch shapes, as length-bucketed batches give
        gx = recurrent._both_directions(torch.randn(2, 150 + 3 * i, 128), w_x, None)
        recurrent._scan_inference(gx, w_h, {}, None, 128, 3, True)
print(rss() - start)
"""


def growth(mode: str) -> int:
    done = subprocess.run([sys.executable, "-c", SCRIPT, mode], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return int(done.stdout.split()[-1])


@pytest.mark.slow
@pytest.mark.skipif(not cpu_has_bf16(), reason="bf16 products are native only on avx512_bf16/amx CPUs")
def test_bf16_products_of_many_shapes_keep_memory_flat():
    padded, unpadded = growth("padded"), growth("unpadded")
    # measured (200 shapes): 40 MB padded against 457 MB with a kernel per shape (400 shapes: 87 and 1,360)
    assert padded * 4 < unpadded, (padded, unpadded)


def test_lowered_matmul_pads_rows_and_gives_the_unpadded_product():
    x = torch.randn(ROW_QUANTUM + 3, 16)
    w = torch.randn(2, 16, 8).to(torch.bfloat16)
    out = lowered_matmul(x, w)
    assert out.dtype == torch.float32 and out.shape == (2, ROW_QUANTUM + 3, 8)
    assert torch.equal(out, torch.matmul(x.to(torch.bfloat16), w).float())
