"""The signatures the API-migration fixes bind calls to, kept beside the deprecation tables.

Each is a `def` parameter list as the library defines it (aten builtins name their first
tensor `input` in Python), for the releases the rules fix: torch from the release each
table entry names (`since`) to the installed one, torchvision from 0.13 (`weights=`).
tests/rules/legacy/test_api_signatures.py checks every entry against the installed torch
(and torchvision, when present) with `inspect.signature` or the operator's schema.
"""

from __future__ import annotations

_UPSAMPLE_MODULE = "size=None, scale_factor=None"
_GRAD_SCALER = "init_scale=65536.0, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000, enabled=True"
_PYTREE = (
    "*, serialized_type_name=None, to_dumpable_context=None, from_dumpable_context=None, flatten_with_keys_fn=None"
)
_FUNC = {
    "vmap": "func, in_dims=0, out_dims=0, randomness='error', *, chunk_size=None",
    "grad": "func, argnums=0, has_aux=False",
    "vjp": "func, *primals, has_aux=False",
    "jvp": "func, primals, tangents, *, strict=False, has_aux=False",
    "jacrev": "func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False",
    "jacfwd": "func, argnums=0, has_aux=False, *, randomness='error'",
    "hessian": "func, argnums=0",
    "functionalize": "func, *, remove='mutations'",
}

TORCH: dict[str, str] = {
    "torch.nn.functional.upsample": "input, size=None, scale_factor=None, mode='nearest', align_corners=None",
    "torch.nn.functional.interpolate": (
        "input, size=None, scale_factor=None, mode='nearest', align_corners=None, recompute_scale_factor=None, "
        "antialias=False"
    ),
    "torch.cuda.amp.autocast": "enabled=True, dtype=torch.float16, cache_enabled=True",
    "torch.amp.autocast": "device_type, dtype=None, enabled=True, cache_enabled=None",
    "torch.cuda.amp.GradScaler": _GRAD_SCALER,
    "torch.amp.GradScaler": f"device='cuda', {_GRAD_SCALER}",
    "torch.ger": "input, vec2, *, out=None",
    "torch.qr": "input, some=True, *, out=None",
    "torch.cholesky": "input, upper=False, *, out=None",
    "torch.chain_matmul": "*matrices, out=None",
    "torch.norm": "input, p='fro', dim=None, keepdim=False, out=None, dtype=None",
    "torch.lu_solve": "input, LU_data, LU_pivots, *, out=None",
    "torch.outer": "input, vec2, *, out=None",
    "torch.lu": "A, pivot=True, get_infos=False, out=None",
    "torch.linalg.lu_factor": "A, *, pivot=True, out=None",
    "torch.matrix_rank": "input, tol=None, symmetric=False, *, out=None",
    "torch.linalg.matrix_rank": "input, *, atol=None, rtol=None, hermitian=False, out=None",
    "torch.nn.UpsamplingNearest2d": _UPSAMPLE_MODULE,
    "torch.nn.UpsamplingBilinear2d": _UPSAMPLE_MODULE,
    "torch.nn.Upsample": f"{_UPSAMPLE_MODULE}, mode='nearest', align_corners=None, recompute_scale_factor=None",
    "torch.utils._pytree._register_pytree_node": (
        f"cls, flatten_fn, unflatten_fn, to_str_fn=None, maybe_from_str_fn=None, {_PYTREE}"
    ),
    "torch.utils._pytree.register_pytree_node": f"cls, flatten_fn, unflatten_fn, {_PYTREE}",
    "torch.utils.checkpoint.checkpoint": (
        "function, *args, use_reentrant=None, context_fn=noop_context_fn, determinism_check='default', "
        "debug=False, early_stop=True, **kwargs"
    ),
    "torch.utils.checkpoint.checkpoint_sequential": "functions, segments, input, use_reentrant=None, **kwargs",
    # a C type (no inspect.signature): checked by calling it (test_api_signatures._binds_as_written)
    "torch.autograd.Variable": "data=None, requires_grad=False, volatile=False, _grad_fn=None, name=None",
    "torch.Tensor.backward": "gradient=None, retain_graph=None, create_graph=False, inputs=None",
    "torch.hub.load": (
        "repo_or_dir, model, *args, source='github', trust_repo='check', force_reload=False, verbose=True, "
        "skip_validation=False, **kwargs"
    ),
    **{f"functorch.{name}": params for name, params in _FUNC.items()},
    **{f"torch.func.{name}": params for name, params in _FUNC.items()},
}

# torchvision's model builders since 0.13 (`weights=` replaced `pretrained=`); older releases (a
# `torch.hub.load('pytorch/vision:v0.9.0', ...)`) have no `weights=`. A classification builder of
# `torchvision.models` itself that is not listed has CLASSIFIER's signature (checked over every such
# builder where torchvision is installed); builders of the subpackages (detection, segmentation, video,
# ...) have their own and are known only when listed.
TORCHVISION_WEIGHTS = (0, 13)
CLASSIFIER = "*, weights=None, progress=True, **kwargs"
TORCHVISION: dict[str, str] = {
    "torchvision.models.resnet18": "*, weights=None, progress=True, **kwargs",
    "torchvision.models.resnet50": "*, weights=None, progress=True, **kwargs",
    "torchvision.models.mobilenet_v2": "*, weights=None, progress=True, **kwargs",
    "torchvision.models.detection.fasterrcnn_resnet50_fpn": (
        "*, weights=None, progress=True, num_classes=None, weights_backbone=ResNet50_Weights.IMAGENET1K_V1, "
        "trainable_backbone_layers=None, **kwargs"
    ),
}
