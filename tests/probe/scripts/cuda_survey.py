"""CUDA and accelerator calls from the torch docs' `torch.cuda` and `torch.accelerator` pages, each with
the kind of result a machine with one GPU gives. Under simulated CUDA every call must run and give
that kind; prints one line per mismatch and a summary."""

import contextlib
import io

import torch
from torch import nn

x = torch.ones(4, 3, device="cuda")
stream = torch.cuda.Stream()
event = torch.cuda.Event(enable_timing=True)
event.record()
state = torch.cuda.get_rng_state()
buffer = io.BytesIO()


def cuda(value):
    return isinstance(value, torch.Tensor) and value.is_cuda and value.device.index == 0


def cpu(value):
    return isinstance(value, torch.Tensor) and not value.is_cuda


def of(*kinds):
    return lambda value: isinstance(value, kinds)


def ctx(value):
    return hasattr(value, "__enter__") and hasattr(value, "__exit__")


def saved_and_loaded(**kwargs):
    buffer.seek(0)
    buffer.truncate()
    torch.save({"w": torch.ones(2, device="cuda")}, buffer)
    buffer.seek(0)
    return torch.load(buffer, **kwargs)["w"]


NONE, BOOL, INT, FLOAT, STR = of(type(None)), of(bool), of(int), of(float), of(str)
SURVEY = [
    # torch.cuda: the runtime
    ("torch.cuda.is_available()", lambda v: v is True),
    ("torch.cuda.is_initialized()", BOOL),
    ("torch.cuda.init()", NONE),
    ("torch.cuda.device_count()", lambda v: v == 1),
    ("torch.cuda.current_device()", lambda v: v == 0),
    ("torch.cuda.set_device(0)", NONE),
    ("torch.cuda.set_device('cuda:0')", NONE),
    ("torch.cuda.set_device(torch.device('cuda', 0))", NONE),
    ("torch.cuda.device(0)", ctx),
    ("torch.cuda.device_of(x)", ctx),
    ("torch.cuda.get_device_name()", STR),
    ("torch.cuda.get_device_name(0)", STR),
    ("torch.cuda.get_device_capability()", lambda v: isinstance(v, tuple) and len(v) == 2),
    ("torch.cuda.get_device_properties(0).total_memory", INT),
    ("torch.cuda.get_device_properties(0).multi_processor_count", INT),
    ("torch.cuda.get_device_properties(0).uuid", lambda v: v is not None),
    ("torch.cuda.get_arch_list()", lambda v: isinstance(v, list) and v),
    ("torch.cuda.is_bf16_supported()", BOOL),
    ("torch.cuda.is_tf32_supported()", BOOL),
    ("torch.cuda.can_device_access_peer(0, 0)", BOOL),
    ("torch.cuda.synchronize()", NONE),
    ("torch.cuda.synchronize(0)", NONE),
    ("torch.cuda.ipc_collect()", NONE),
    ("torch.cuda.set_sync_debug_mode('warn')", NONE),
    ("torch.cuda.get_sync_debug_mode()", INT),
    ("torch.cuda.set_sync_debug_mode(0)", NONE),
    ("torch.cuda.is_current_stream_capturing()", lambda v: v is False),
    # random numbers
    ("torch.cuda.manual_seed(0)", NONE),
    ("torch.cuda.manual_seed_all(0)", NONE),
    ("torch.cuda.seed()", NONE),
    ("torch.cuda.seed_all()", NONE),
    ("torch.cuda.initial_seed()", INT),
    ("torch.cuda.get_rng_state()", cpu),
    ("torch.cuda.get_rng_state(0)", cpu),
    ("torch.cuda.get_rng_state_all()", lambda v: isinstance(v, list) and len(v) == 1),
    ("torch.cuda.set_rng_state(state)", NONE),
    ("torch.cuda.set_rng_state_all([state])", NONE),
    ("torch.cuda.random.manual_seed(1)", NONE),
    ("torch.cuda.default_generators[0].initial_seed()", INT),
    ("torch.manual_seed(0)", lambda v: isinstance(v, torch.Generator)),
    ("torch.seed()", INT),
    ("torch.random.fork_rng(devices=[0])", ctx),
    ("torch.Generator(device='cuda').device", lambda v: v == torch.device("cuda", 0)),
    ("torch.Generator(device='cuda').manual_seed(3).initial_seed()", lambda v: v == 3),
    ("torch.randn(2, device='cuda', generator=torch.Generator(device='cuda'))", cuda),
    ("isinstance(torch.default_generator, torch.Generator)", lambda v: v is True),
    # devices
    ("torch.device(0)", lambda v: v == torch.device("cuda", 0)),
    ("isinstance(torch.device('cuda'), torch.device)", lambda v: v is True),
    ("x.to(0)", cuda),
    ("torch.ones(2).to(0)", cuda),
    ("torch.ones(2).cuda(0)", cuda),
    ("torch.ones(2).to('cuda:0')", cuda),
    ("torch.ones(2).to(torch.device('cuda', 0))", cuda),
    ("nn.Linear(2, 2).to(0).weight", cuda),
    ("nn.Linear(2, 2).cuda(0).weight", cuda),
    ("nn.Linear(2, 2).to(device=0).weight", cuda),
    ("torch.zeros(2, device=0)", cuda),
    ("x.get_device()", lambda v: v == 0),
    ("torch.ones(2).get_device()", lambda v: v == -1),
    ("x.device", lambda v: v == torch.device("cuda", 0)),
    ("x.is_cuda", lambda v: v is True),
    ("x.cpu().is_cuda", lambda v: v is False),
    ("x.type()", lambda v: v == "torch.cuda.FloatTensor"),
    ("torch.ones(2).type('torch.cuda.DoubleTensor')", lambda v: cuda(v) and v.dtype == torch.float64),
    ("x.type(torch.int64)", lambda v: cuda(v) and v.dtype == torch.int64),
    ("x.type('torch.LongTensor')", lambda v: cpu(v) and v.dtype == torch.int64),
    ("x.new_zeros(2)", cuda),
    ("torch.zeros_like(x)", cuda),
    ("x.pin_memory()", cuda),
    ("torch.ones(2).pin_memory().is_pinned()", BOOL),
    ("x.record_stream(torch.cuda.current_stream())", NONE),
    # legacy tensor types
    ("torch.cuda.FloatTensor(2)", lambda v: cuda(v) and v.dtype == torch.float32),
    ("torch.cuda.LongTensor([1, 2])", lambda v: cuda(v) and v.dtype == torch.int64),
    ("torch.cuda.HalfTensor(2)", lambda v: cuda(v) and v.dtype == torch.float16),
    ("torch.cuda.ByteTensor(2)", lambda v: cuda(v) and v.dtype == torch.uint8),
    ("torch.cuda.BoolTensor(2)", lambda v: cuda(v) and v.dtype == torch.bool),
    ("isinstance(x, torch.cuda.FloatTensor)", lambda v: v is True),
    ("isinstance(torch.ones(2), torch.cuda.FloatTensor)", lambda v: v is False),
    # streams and events
    ("torch.cuda.current_stream()", lambda v: isinstance(v, torch.cuda.Stream)),
    ("torch.cuda.default_stream()", lambda v: isinstance(v, torch.cuda.Stream)),
    ("torch.cuda.stream(stream)", ctx),
    ("torch.cuda.set_stream(stream)", NONE),
    ("stream.synchronize()", NONE),
    ("stream.query()", lambda v: v is True),
    ("stream.wait_stream(torch.cuda.current_stream())", NONE),
    ("stream.record_event()", lambda v: v is not None),
    ("torch.cuda.Event()", lambda v: v is not None),
    ("event.synchronize()", NONE),
    ("event.query()", lambda v: v is True),
    ("event.elapsed_time(torch.cuda.Event(enable_timing=True).record() or event)", FLOAT),
    ("torch.Event(device='cuda')", lambda v: v is not None),
    ("torch.Stream(device='cuda')", lambda v: v is not None),
    # memory
    ("torch.cuda.memory_allocated()", INT),
    ("torch.cuda.memory_allocated(0)", INT),
    ("torch.cuda.max_memory_allocated()", INT),
    ("torch.cuda.memory_reserved()", INT),
    ("torch.cuda.max_memory_reserved()", INT),
    ("torch.cuda.memory_stats()", lambda v: isinstance(v, dict) and "allocated_bytes.all.current" in v),
    ("torch.cuda.memory_summary()", STR),
    ("torch.cuda.mem_get_info()", lambda v: isinstance(v, tuple) and len(v) == 2),
    ("torch.cuda.reset_peak_memory_stats()", NONE),
    ("torch.cuda.reset_max_memory_allocated()", NONE),
    ("torch.cuda.reset_accumulated_memory_stats()", NONE),
    ("torch.cuda.empty_cache()", NONE),
    ("torch.cuda.set_per_process_memory_fraction(0.5)", NONE),
    ("torch.cuda.get_allocator_backend()", STR),
    ("torch.cuda.memory._record_memory_history()", NONE),
    ("torch.cuda.nvtx.range_push('step')", INT),
    ("torch.cuda.nvtx.range_pop()", INT),
    ("torch.cuda.nvtx.mark('here')", NONE),
    ("torch.cuda.nvtx.range('block')", ctx),
    # torch.accelerator
    ("torch.accelerator.is_available()", lambda v: v is True),
    ("torch.accelerator.current_accelerator()", lambda v: v == torch.device("cuda")),
    ("torch.accelerator.device_count()", lambda v: v == 1),
    ("torch.accelerator.current_device_index()", lambda v: v == 0),
    ("torch.accelerator.set_device_index(0)", NONE),
    ("torch.accelerator.device_index(0)", ctx),
    ("torch.accelerator.synchronize()", NONE),
    ("torch.accelerator.current_stream()", lambda v: v is not None),
    ("torch.accelerator.memory_allocated()", INT),
    ("torch.accelerator.max_memory_allocated()", INT),
    ("torch.accelerator.memory_reserved()", INT),
    ("torch.accelerator.memory_stats()", lambda v: isinstance(v, dict)),
    ("torch.accelerator.reset_peak_memory_stats()", NONE),
    ("torch.accelerator.empty_cache()", NONE),
    ("torch.accelerator.get_memory_info()", lambda v: isinstance(v, tuple) and len(v) == 2),
    # backends, amp, checkpoints, packed sequences, DataParallel
    ("torch.backends.cudnn.is_available()", lambda v: v is True),
    ("torch.backends.cudnn.version()", INT),
    ("torch.backends.cuda.is_built()", BOOL),
    ("torch.autocast('cuda', dtype=torch.bfloat16)", ctx),
    ("torch.amp.GradScaler('cuda').is_enabled()", lambda v: v is True),
    ("torch.amp.autocast('cuda').fast_dtype", lambda v: v == torch.float16),
    ("saved_and_loaded()", cuda),
    ("saved_and_loaded(map_location='cpu')", cpu),
    ("saved_and_loaded(map_location='cuda:0')", cuda),
    ("saved_and_loaded(map_location={'cuda:0': 'cpu'})", cpu),
    ("saved_and_loaded(map_location=lambda storage, location: storage.cuda(0))", cuda),
    ("saved_and_loaded(map_location=lambda storage, location: storage)", cpu),
    ("nn.utils.rnn.pack_padded_sequence(torch.ones(3, 2, 4, device='cuda'), torch.tensor([3, 2])).batch_sizes", cpu),
    ("nn.utils.rnn.pack_padded_sequence(torch.ones(3, 2, 4, device='cuda'), torch.tensor([3, 2])).data", cuda),
    ("nn.DataParallel(nn.Linear(3, 2).cuda())(x)", cuda),
]

failures = []
for expr, expected in SURVEY:
    try:
        value = eval(expr)
        if isinstance(value, contextlib.AbstractContextManager) or ctx(value):
            with value:
                pass
        ok = expected(value)
    except Exception as exc:  # a call simulation does not stand in for
        value, ok = f"{type(exc).__name__}: {exc}".splitlines()[0], False
    if not ok:
        failures.append(expr)
        print(f"SURVEY MISMATCH {expr} -> {value!r}")
with torch.autocast("cuda", dtype=torch.bfloat16):
    if nn.Linear(3, 2).cuda()(x).dtype != torch.bfloat16:
        failures.append("autocast dtype")
        print("SURVEY MISMATCH autocast did not cast to bfloat16")
print(f"SURVEY {len(SURVEY) + 1} calls, {len(failures)} mismatches")
