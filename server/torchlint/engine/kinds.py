"""What a value is: the vocabulary of the shared binding analysis.

Knowledge about torch APIs (which constructors make optimizers, which functions
return losses, ...) lives here so every rule reads the same facts.
"""

from __future__ import annotations

import enum
import re


class Kind(enum.Flag):
    NONE = 0
    MODEL = enum.auto()  # an nn.Module instance
    WRAPPED = enum.auto()  # a DataParallel / DistributedDataParallel wrapper
    OPTIMIZER = enum.auto()
    SCHEDULER = enum.auto()
    DATALOADER = enum.auto()
    SAMPLER = enum.auto()
    DEVICE = enum.auto()
    CRITERION = enum.auto()  # a loss module such as nn.CrossEntropyLoss()
    LOSS = enum.auto()  # a grad-carrying scalar tensor
    TENSOR = enum.auto()
    SCALER = enum.auto()  # AMP GradScaler
    ACCELERATOR = enum.auto()  # Hugging Face Accelerate
    NUMBER = enum.auto()  # a Python float/int, e.g. `loss.item()`
    BATCH = enum.auto()  # an element drawn from a DataLoader


TENSOR_FACTORIES = frozenset(
    "tensor as_tensor asarray from_numpy zeros ones empty full rand randn randint randperm "
    "arange linspace logspace eye zeros_like ones_like empty_like full_like rand_like "
    "randn_like randint_like Tensor FloatTensor LongTensor DoubleTensor HalfTensor "
    "BoolTensor IntTensor ByteTensor stack cat".split()
)

LOSS_FUNCTIONS = frozenset(
    "cross_entropy nll_loss mse_loss l1_loss smooth_l1_loss huber_loss binary_cross_entropy "
    "binary_cross_entropy_with_logits kl_div cosine_embedding_loss ctc_loss hinge_embedding_loss "
    "margin_ranking_loss multi_margin_loss multilabel_margin_loss multilabel_soft_margin_loss "
    "poisson_nll_loss gaussian_nll_loss soft_margin_loss triplet_margin_loss".split()
)

MODEL_FACTORIES = re.compile(
    r"^(torchvision\.models\.[a-z_0-9]+|timm\.create_model|"
    r"transformers\.\w*Model\w*\.from_pretrained|transformers\.\w+For\w+\.from_pretrained)$"
)

# Name conventions used only when no assignment tells us more.
_NAME_HINTS = [
    (re.compile(r"(^|_)(sched|scheduler|lr_scheduler|lr_sched)s?($|_)"), Kind.SCHEDULER),
    (re.compile(r"(^|_)(opt|optim|optimizer|optimiser)s?($|_|\d)"), Kind.OPTIMIZER),
    (
        re.compile(
            r"(^|_)(model|net|network|module|ddp_model|generator|discriminator|encoder|decoder|backbone|head|classifier|critic|teacher|student)($|_|\d)"
        ),
        Kind.MODEL,
    ),
    (re.compile(r"(^|_)(loader|dataloader|data_loader)($|_)|_loader$|_dl$"), Kind.DATALOADER),
    (re.compile(r"(^|_)sampler($|_)"), Kind.SAMPLER),
    (re.compile(r"^(device|dev)$"), Kind.DEVICE),
    (re.compile(r"(^|_)(criterion|loss_fn|loss_func|loss_function|lossfn)($|_)"), Kind.CRITERION),
    (re.compile(r"^(loss|losses?_?\w*|\w+_loss)$"), Kind.LOSS),
    (re.compile(r"(^|_)scaler($|_)"), Kind.SCALER),
    (re.compile(r"^accelerator$"), Kind.ACCELERATOR),
]


def kind_from_name(name: str) -> Kind:
    low = name.lower()
    for pattern, kind in _NAME_HINTS:
        if pattern.search(low):
            return kind
    return Kind.NONE


_TYPE_KINDS = {
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
}


def kind_from_qualname(q: str) -> Kind:
    """Kind of the value a call to the qualified name `q` returns."""
    if q in _TYPE_KINDS:
        return _TYPE_KINDS[q]
    if q in ("torch.nn.parallel.DistributedDataParallel", "torch.nn.DataParallel") or q.startswith(
        "torch.distributed.fsdp.FullyShardedDataParallel"
    ):
        return Kind.MODEL | Kind.WRAPPED
    head, _, last = q.rpartition(".")
    if head == "torch.optim.lr_scheduler" or q.startswith("transformers.get_") and "schedule" in q:
        return Kind.SCHEDULER
    if head == "torch.optim" and last[:1].isupper():
        return Kind.OPTIMIZER
    if head.startswith("torch.utils.data") and last.endswith("Sampler"):
        return Kind.SAMPLER
    if head in ("torch.nn", "torch.nn.modules") and last[:1].isupper():
        return Kind.CRITERION if last.endswith("Loss") else Kind.MODEL
    if head == "torch.nn.functional" and last in LOSS_FUNCTIONS:
        return Kind.LOSS
    if head == "torch" and last in TENSOR_FACTORIES:
        return Kind.TENSOR
    if MODEL_FACTORIES.match(q):
        return Kind.MODEL
    return Kind.NONE


def kind_from_annotation(q: str | None) -> Kind:
    return _TYPE_KINDS.get(q or "", Kind.NONE)
