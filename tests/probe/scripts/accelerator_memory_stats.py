"""An upstream-style script: the device comes from torch.accelerator; it logs memory and timing."""

import torch
from torch import nn

torch.backends.cudnn.benchmark = True
device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else torch.device("cpu")
props = torch.cuda.get_device_properties(device)
major, minor = torch.cuda.get_device_capability(device)
dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
print(f"device {device} ({torch.accelerator.device_count()}x {props.name}, sm_{major}{minor}, {dtype})")
torch.cuda.set_sync_debug_mode("warn")

model = nn.Sequential(nn.Linear(256, 512), nn.GELU(), nn.Linear(512, 10)).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
data = torch.utils.data.TensorDataset(torch.randn(256, 256), torch.randint(0, 10, (256,)))
loader = torch.utils.data.DataLoader(data, batch_size=32, pin_memory=True)
start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
stream = torch.cuda.current_stream()
torch.cuda.reset_peak_memory_stats()
for step, (x, y) in enumerate(loader):
    x, y = x.pin_memory().to(device, non_blocking=True), y.to(device, non_blocking=True)
    start.record()
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    end.record()
    stream.synchronize()
    stats = torch.cuda.memory_stats()
    free, total = torch.cuda.mem_get_info()
    print(
        f"step {step}: {start.elapsed_time(end):.2f} ms, "
        f"allocated {torch.cuda.memory_allocated() / 2**20:.2f} MiB (stats {stats['allocated_bytes.all.current']}), "
        f"peak {torch.cuda.max_memory_allocated() / 2**20:.2f} MiB, "
        f"reserved {torch.cuda.memory_reserved() / 2**20:.0f} MiB, free {free / 2**30:.1f}/{total / 2**30:.0f} GiB"
    )
torch.accelerator.synchronize()
print(torch.cuda.memory_summary())
