"""What a value is: the vocabulary of the shared binding analysis, and what library APIs return.

A kind is only ever assigned from evidence: a constructor or library call whose
result is known (the tables below), an annotation, an assignment, a project class
or function (see `project.py`), or a use that only one kind allows (`x.backward()`).
Never from what a variable is called: `optim_state` may be a dict and
`query_model` a function. Unknown is `Kind.NONE`, and rules stay silent on it.
"""

from __future__ import annotations

import enum


class Kind(enum.Flag):
    NONE = 0
    MODEL = enum.auto()  # an nn.Module instance
    WRAPPED = enum.auto()  # a DataParallel / DistributedDataParallel / FSDP wrapper
    OPTIMIZER = enum.auto()  # a torch.optim.Optimizer (has zero_grad, step(closure=None))
    SCHEDULER = enum.auto()
    DATALOADER = enum.auto()
    SAMPLER = enum.auto()
    DEVICE = enum.auto()
    CRITERION = enum.auto()  # a loss module such as nn.CrossEntropyLoss()
    LOSS = enum.auto()  # a grad-carrying scalar tensor
    TENSOR = enum.auto()
    SCALER = enum.auto()  # AMP GradScaler
    ACCELERATOR = enum.auto()  # Hugging Face Accelerate / Lightning Fabric: has backward(loss)
    NUMBER = enum.auto()  # a Python float/int, e.g. `loss.item()`
    BATCH = enum.auto()  # an element drawn from a DataLoader
    CONTAINER = enum.auto()  # a Python dict / list / tuple (never a module or tensor)


TENSOR_FACTORIES = frozenset(
    "tensor as_tensor asarray from_numpy zeros ones empty full rand randn randint randperm "
    "arange linspace logspace eye zeros_like ones_like empty_like full_like rand_like "
    "randn_like randint_like Tensor FloatTensor LongTensor DoubleTensor HalfTensor "
    "BoolTensor IntTensor ByteTensor stack cat".split()
)

# Tensor methods whose result is a tensor on the same device: dtype and shape changes, copies.
SAME_DEVICE_METHODS = frozenset(
    "float half double long int bool view reshape contiguous squeeze unsqueeze permute transpose clone "
    "detach flatten".split()
)
# Methods that return their receiver: a module or tensor moved, cast or switched to train/eval.
SAME_OBJECT_METHODS = frozenset(
    {"to", "cuda", "cpu", "train", "eval", "half", "float", "double", "bfloat16", "requires_grad_"}
)
# Methods whose result carries no autograd graph (a detached tensor, a Python number, a shape).
GRAPH_CUTTING_METHODS = frozenset(
    {"detach", "item", "tolist", "numpy", "size", "dim", "numel", "data_ptr", "stride", "element_size"}
)
# Calls a loop wraps around the iterable it draws batches from: `enumerate(loader)`, `tqdm(loader)`.
LOADER_WRAPPERS = frozenset(
    {
        "enumerate",
        "iter",
        "zip",
        "islice",
        "itertools.islice",
        "tqdm",
        "tqdm.tqdm",
        "tqdm.auto.tqdm",
        "tqdm.notebook.tqdm",
    }
)
# ...and those that also keep it a tensor (possibly elsewhere): moves, reductions, elementwise maths.
TENSOR_METHODS = SAME_DEVICE_METHODS | frozenset(
    "to cuda cpu mean sum abs pow sqrt exp log softmax log_softmax".split()
)

# Tensor methods that return a new tensor object (never their receiver, never a Python number), and
# those that return a tuple of new tensors (`values, indices = x.topk(k)`; `max`/`min` only with a dim).
NEW_TENSOR_METHODS = frozenset("argmax argmin argsort sum mean abs exp log softmax log_softmax clone detach".split())
TENSOR_TUPLE_METHODS = frozenset("topk sort kthvalue max min median mode".split())
# Tensor methods computed from their receiver alone (their arguments are sizes, dims, flags or dtypes, never
# another tensor), and the fields of the named tuples some return: the result lives where the receiver lives
# and meets no other tensor (`rand.topk(k, dim=-1).indices` is an index wherever `rand` is).
RECEIVER_ONLY_METHODS = frozenset(
    "topk sort argsort argmax argmin kthvalue unsqueeze squeeze view reshape flatten t transpose permute flip "
    "contiguous clone detach long int cumsum".split()
)
RESULT_FIELDS = frozenset({"indices", "values"})

# Integer and bool dtypes by every spelling, and the casts and factories that make them.
INTEGER_DTYPES = {
    **{f"torch.{n}": "torch.int64" for n in ("long", "int64")},
    **{f"torch.{n}": "torch.int32" for n in ("int", "int32")},
    **{f"torch.{n}": "torch.int16" for n in ("short", "int16")},
    "torch.int8": "torch.int8",
    "torch.uint8": "torch.uint8",
    "torch.bool": "torch.bool",
}
INTEGER_CASTS = {"long": "torch.int64", "int": "torch.int32", "short": "torch.int16", "byte": "torch.uint8"}
INTEGER_CASTS |= {"char": "torch.int8", "bool": "torch.bool"}
FLOAT_CASTS = frozenset({"float", "double", "half", "bfloat16"})
INTEGER_TENSOR_CLASSES = {
    "torch.LongTensor": "torch.int64",
    "torch.IntTensor": "torch.int32",
    "torch.ByteTensor": "torch.uint8",
    "torch.BoolTensor": "torch.bool",
}

# torch functions whose result is a boolean tensor (or a bool computed from tensor values on the device).
TENSOR_PREDICATES = frozenset(
    "all any isfinite isnan isinf isneginf isposinf isclose allclose equal eq ne gt lt ge le logical_and "
    "logical_or logical_not".split()
)

# Methods only a tensor has (a list has none, a NumPy array's `size` is no method): calling one on a
# value is evidence that it is a tensor.
TENSOR_ONLY_METHODS = frozenset(
    "size dim view unsqueeze permute contiguous masked_fill new_zeros new_ones new_full new_empty new_tensor "
    "type_as expand_as view_as".split()
)

LOSS_FUNCTIONS = frozenset(
    "cross_entropy nll_loss mse_loss l1_loss smooth_l1_loss huber_loss binary_cross_entropy "
    "binary_cross_entropy_with_logits kl_div cosine_embedding_loss ctc_loss hinge_embedding_loss "
    "margin_ranking_loss multi_margin_loss multilabel_margin_loss multilabel_soft_margin_loss "
    "poisson_nll_loss gaussian_nll_loss soft_margin_loss triplet_margin_loss".split()
)

# -- what a call to a library API returns -------------------------------------------------
# numpy reductions: a host number (numpy's float; an array of them with `axis=`), never a tensor with a graph
# (`np.mean(losses)` of a tensor on the device raises).
NUMPY_REDUCTIONS = frozenset(
    "mean average sum nansum nanmean median std var min max amin amax prod ptp percentile quantile".split()
)
# Exact qualified names (after names.CANONICAL folding).
RETURNS: dict[str, Kind] = {
    "torch.nn.Module": Kind.MODEL,
    "torch.optim.Optimizer": Kind.OPTIMIZER,
    "torch.optim.optimizer.Optimizer": Kind.OPTIMIZER,
    "torch.optim.lr_scheduler.LRScheduler": Kind.SCHEDULER,
    "torch.optim.lr_scheduler._LRScheduler": Kind.SCHEDULER,
    "torch.utils.data.DataLoader": Kind.DATALOADER,
    "torch.device": Kind.DEVICE,
    "torch.Tensor": Kind.TENSOR,
    "torch.nn.Parameter": Kind.TENSOR,  # a Tensor subclass, not a Module (despite living in torch.nn)
    "torch.nn.parameter.Parameter": Kind.TENSOR,
    "torch.amp.GradScaler": Kind.SCALER,
    "accelerate.Accelerator": Kind.ACCELERATOR,
    "lightning.fabric.Fabric": Kind.ACCELERATOR,
    "lightning.Fabric": Kind.ACCELERATOR,
    "torch.nn.parallel.DistributedDataParallel": Kind.MODEL | Kind.WRAPPED,
    "torch.nn.DataParallel": Kind.MODEL | Kind.WRAPPED,
    # FSDP names its state-dict keys as the bare model does: a module, not a `module.`-prefixing wrapper.
    "torch.distributed.fsdp.FullyShardedDataParallel": Kind.MODEL,
    # Composable parallelism returns the (sharded) module itself, not a tensor.
    "torch.distributed.tensor.parallel.parallelize_module": Kind.MODEL,
    "torch.distributed.fsdp.fully_shard": Kind.MODEL,
    "torch.distributed._composable.fsdp.fully_shard": Kind.MODEL,
    "torch.distributed._composable.fully_shard": Kind.MODEL,
    "torch.distributed._composable.replicate": Kind.MODEL,
    "torch.compile": Kind.NONE,  # the kind of its argument: see PASS_THROUGH
    "torch.jit.script": Kind.NONE,
    "torch.jit.trace": Kind.NONE,
    "timm.create_model": Kind.MODEL,
    "torch.hub.load": Kind.MODEL,
    "torch.load": Kind.NONE,  # a module, a state dict or anything pickled: unknown
    "torch.Generator": Kind.NONE,
    "torch.no_grad": Kind.NONE,
    # A DistributedOptimizer steps with a distributed-autograd context and has no zero_grad;
    # an RPC RemoteModule's documented API is `forward`. Neither is the local kind its name suggests.
    "torch.distributed.optim.DistributedOptimizer": Kind.NONE,
    "torch.distributed.nn.RemoteModule": Kind.NONE,
    "torch.distributed.nn.api.remote_module.RemoteModule": Kind.NONE,
    "dict": Kind.CONTAINER,
    "list": Kind.CONTAINER,
    "tuple": Kind.CONTAINER,
    "collections.OrderedDict": Kind.CONTAINER,
    "float": Kind.NUMBER,
    "int": Kind.NUMBER,
    "len": Kind.NUMBER,
} | dict.fromkeys((f"numpy.{f}" for f in NUMPY_REDUCTIONS), Kind.NUMBER)

# Calls whose result is their first argument (same kind): wrappers that keep the object's API.
PASS_THROUGH = frozenset({"torch.compile", "torch.jit.script", "torch.jit.trace", "copy.deepcopy"})

# Classes a project class may derive from and be an nn.Module (besides torch.nn.* containers).
MODULE_BASES = frozenset(
    {
        "torch.nn.Module",
        "lightning.pytorch.LightningModule",
        "transformers.PreTrainedModel",
        "transformers.modeling_utils.PreTrainedModel",
    }
)

_NOT_MODULES = frozenset({"Parameter", "ParameterList", "ParameterDict"})


def is_module_base(q: str) -> bool:
    """A library class whose subclasses are nn.Modules."""
    if q in MODULE_BASES:
        return True
    head, _, last = q.rpartition(".")
    if head in ("torch.nn", "torch.nn.modules") and last[:1].isupper() and last not in _NOT_MODULES:
        return True
    return head.startswith("transformers") and last.endswith("PreTrainedModel")


def kind_from_qualname(q: str) -> Kind:
    """Kind of the value a call to the library API `q` returns (NONE: unknown)."""
    if q in RETURNS:
        return RETURNS[q]
    head, _, last = q.rpartition(".")
    if head in RETURNS and last[:1].islower():  # a static method such as FSDP.full_optim_state_dict
        return Kind.CONTAINER if "state_dict" in last else Kind.NONE
    if head == "torch.optim.lr_scheduler" or (q.startswith("transformers.get_") and "schedule" in q):
        return Kind.SCHEDULER
    if head == "torch.optim" and last[:1].isupper():
        return Kind.OPTIMIZER
    if head.startswith("torch.utils.data") and last.endswith("Sampler"):
        return Kind.SAMPLER
    if head in ("torch.nn", "torch.nn.modules") and last[:1].isupper():
        if last in _NOT_MODULES:
            return Kind.TENSOR if last == "Parameter" else Kind.NONE
        return Kind.CRITERION if last.endswith("Loss") else Kind.MODEL
    if head == "torch.nn.functional" and last in LOSS_FUNCTIONS:
        return Kind.LOSS
    if head == "torch" and last in TENSOR_FACTORIES:
        return Kind.TENSOR
    if head.startswith("torchvision.models") and last[:1].islower() and not last.startswith("get_"):
        return Kind.MODEL  # resnet18(), vit_b_16(), detection.fasterrcnn_resnet50_fpn()
    if head.startswith("transformers") and last == "from_pretrained":
        cls = head.rpartition(".")[2]
        if "Model" in cls or "For" in cls:
            return Kind.MODEL  # AutoModelForCausalLM.from_pretrained, BertModel.from_pretrained
    return Kind.NONE


def kind_from_annotation(q: str | None) -> Kind:
    if not q:
        return Kind.NONE
    if q in ("dict", "list", "tuple", "typing.Dict", "typing.List", "typing.Tuple"):
        return Kind.CONTAINER
    if q in RETURNS and q not in ("float", "int", "len") and "." in q:
        kind = RETURNS[q]
        return kind & ~Kind.WRAPPED if q == "torch.nn.Module" else kind
    return Kind.MODEL if is_module_base(q) else Kind.NONE


# Context managers and decorators that turn autograd off, and every one that sets the grad mode.
NO_GRAD = frozenset(
    {"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad"}
)
SET_GRAD_ENABLED = frozenset({"torch.set_grad_enabled", "torch.autograd.set_grad_enabled"})
GRAD_MODE = NO_GRAD | SET_GRAD_ENABLED | {"torch.enable_grad"}

# Calls that tell whether an accelerator is there: a test reading one guards device-specific code.
ACCELERATOR_CHECKS = frozenset(
    {
        "torch.cuda.is_available",
        "torch.cuda.device_count",
        "torch.cuda.is_initialized",
        "torch.backends.mps.is_available",
        "torch.backends.cudnn.is_available",
        "torch.accelerator.is_available",
        "torch.accelerator.device_count",
    }
)
# Calls that raise without a CUDA device: code after them runs only on a GPU machine.
CUDA_REQUIRED = frozenset({"torch.cuda.set_device", "torch.cuda.init"})
DEVICE_TYPES = frozenset({"cpu", "cuda", "mps", "xpu", "hpu", "npu", "xla", "meta"})
# The legacy CUDA tensor types: `isinstance(x, torch.cuda.FloatTensor)` (or `x.type() == "torch.cuda.FloatTensor"`)
# is true only for a tensor already on a GPU, so it tests where the data is, like `x.is_cuda`.
CUDA_TENSOR_TYPES = frozenset(
    f"torch.cuda.{t}Tensor" for t in "Float Double Half BFloat16 Byte Char Short Int Long Bool".split()
)

# A fresh temporary directory or file: a path built on one names no file anything else reads or writes. The
# pytest fixtures are the parameters of that name of a test function (pytest binds them by name).
TEMPORARY_PATHS = frozenset({"tempfile.TemporaryDirectory", "tempfile.mkdtemp", "tempfile.NamedTemporaryFile"})
# Calls that ask whether a path exists: they read nothing of the file and write nothing to it.
PATH_QUERIES = frozenset({"os.path.exists", "os.path.isfile", "os.path.lexists", "os.path.getsize", "os.path.getmtime"})
PYTEST_TEMPORARY_FIXTURES = frozenset({"tmp_path", "tmpdir"})

# Tensor operations whose backward keeps no tensor of the forward pass (sums, additions, views), checked on
# torch 2.13: a graph built only from them can be back-propagated twice without `retain_graph=True`
# (`x.sum().backward()` twice works; `(x * 2).sum()` or `x.pow(2)` raise).
NO_SAVED_TENSORS = frozenset(
    "sum mean add sub neg view reshape flatten clone t transpose permute squeeze unsqueeze expand contiguous".split()
)

# Gradient clipping: each iterates the parameters it is given.
CLIP_GRAD = frozenset(
    f"torch.nn.utils.{m}"
    for m in ("clip_grad_norm_", "clip_grad_value_", "clip_grad_norm", "clip_grad.clip_grad_norm_")
) | {"torch.nn.utils.clip_grad.clip_grad_value_"}

# Module methods that return a one-shot generator (`model.parameters()`): a second pass over it sees nothing.
MODULE_GENERATORS = frozenset(
    "parameters named_parameters buffers named_buffers children named_children modules named_modules".split()
)
# Builtins that run through the iterable they are given.
ITERATING_BUILTINS = frozenset(
    "list tuple set frozenset sorted sum any all max min dict enumerate zip map filter".split()
)

# -- program-level facts ------------------------------------------------------------------
# Libraries that set up distributed training and move batches themselves: a program built on
# one of them has neither an `init_process_group` nor a `.to(device)` of its own to show.
LAUNCHER_LIBRARIES = (
    "accelerate",
    "lightning",
    "pytorch_lightning",
    "deepspeed",
    "horovod",
    "ignite",
    "colossalai",
    "fairscale",
)
# Calls that create the default process group (by their last name: DeepSpeed's, Megatron's too), and with the
# check for one, the calls whose presence in a program shows it handles the process group.
PROCESS_GROUP_INIT = ("init_process_group", "init_distributed", "initialize_model_parallel", "init_device_mesh")
PROCESS_GROUP_SETUP = (*PROCESS_GROUP_INIT, "is_initialized")


# Methods whose result is a Python number, and builtins whose result is a number or a container.
NUMBER_METHODS = frozenset({"item", "tolist", "__float__"})
_BUILTIN_RESULTS = {"float": Kind.NUMBER, "int": Kind.NUMBER, "len": Kind.NUMBER} | dict.fromkeys(
    ("dict", "list", "tuple", "set"), Kind.CONTAINER
)


def builtin_call_kind(name: str) -> Kind:
    """What calling builtin `name` returns (NONE: unknown)."""
    return _BUILTIN_RESULTS.get(name, Kind.NONE)


def method_call_kind(method: str, receiver: Kind) -> Kind | None:
    """What `x.method(...)` returns for a receiver of kind `receiver` (None: the method says nothing): read
    by the one evaluator, inference.py's."""
    if method in NUMBER_METHODS:
        return Kind.NUMBER
    if method == "detach":
        return Kind.TENSOR
    if receiver & Kind.MODEL and method in SAME_OBJECT_METHODS:
        return receiver
    if receiver & (Kind.TENSOR | Kind.LOSS) and method in TENSOR_METHODS:
        return receiver & (Kind.TENSOR | Kind.LOSS)
    if method in ("state_dict", "named_parameters", "items") and receiver & Kind.MODEL:
        return Kind.CONTAINER
    if method == "state_dict" and receiver & (Kind.OPTIMIZER | Kind.SCHEDULER | Kind.SCALER):
        return Kind.CONTAINER
    return None


def agree(kinds: list[Kind]) -> Kind:
    """The kind all of `kinds` share (NONE for an empty list): what every return or argument proves."""
    if not kinds:
        return Kind.NONE
    common = kinds[0]
    for k in kinds[1:]:
        common &= k
    return common
