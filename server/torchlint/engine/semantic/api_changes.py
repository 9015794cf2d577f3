"""The torch API's deprecations and removals, each with the release it happened in, kept as data in one place
(as TorchFix's deprecated_symbols table): TL701 and TL710 read these tables and attach their rewrites by name, so
a new entry is one line here, and a target version below `since` keeps a file silent."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ApiChange:
    use: str  # what to use instead, as the message says it
    since: tuple[int, int] = (0, 0)  # the torch release it happened in; (0, 0): before any target we know


# Deprecated: they still run (with a warning) on current torch.
DEPRECATED: dict[str, ApiChange] = {
    "torch.qr": ApiChange("torch.linalg.qr"),
    "torch.cholesky": ApiChange("torch.linalg.cholesky"),
    "torch.chain_matmul": ApiChange("torch.linalg.multi_dot"),
    "torch.range": ApiChange("torch.arange (which excludes the end)"),
    "torch.norm": ApiChange("torch.linalg.vector_norm / matrix_norm"),
    "torch.ger": ApiChange("torch.outer"),
    "torch.lu": ApiChange("torch.linalg.lu_factor"),
    "torch.lu_solve": ApiChange("torch.linalg.lu_solve(LU, pivots, B) (note the argument order)"),
    "torch.svd": ApiChange("torch.linalg.svd (returns Vh, not V; full_matrices replaces some)"),
    "torch.triangular_solve": ApiChange("torch.linalg.solve_triangular(A, B, upper=...)"),
    "torch.nn.UpsamplingNearest2d": ApiChange('torch.nn.Upsample(..., mode="nearest")'),
    "torch.nn.UpsamplingBilinear2d": ApiChange('torch.nn.Upsample(..., mode="bilinear", align_corners=True)'),
    "torch.nn.functional.upsample": ApiChange("torch.nn.functional.interpolate"),
    "torch.testing.assert_allclose": ApiChange("torch.testing.assert_close"),
    "torch.nn.utils.weight_norm": ApiChange("torch.nn.utils.parametrizations.weight_norm (state_dict keys change)"),
    "torch.utils._pytree._register_pytree_node": ApiChange("torch.utils._pytree.register_pytree_node"),
    "torch.backends.cuda.sdp_kernel": ApiChange("torch.nn.attention.sdpa_kernel"),
    "torch.cuda.amp.autocast": ApiChange('torch.amp.autocast("cuda", ...)', since=(2, 4)),
    "torch.cuda.amp.GradScaler": ApiChange('torch.amp.GradScaler("cuda", ...)', since=(2, 4)),
    # TorchScript: deprecated in 2.5 (its docs), warning on every call in later releases
    "torch.jit.script": ApiChange("torch.compile or torch.export", since=(2, 5)),
    "torch.jit.trace": ApiChange("torch.export or torch.compile", since=(2, 5)),
    "torch.jit.freeze": ApiChange("torch.compile", since=(2, 5)),
    "torch.set_default_tensor_type": ApiChange("torch.set_default_dtype / torch.set_default_device"),
    "torchvision.transforms.v2.ToTensor": ApiChange(
        "v2.Compose([v2.ToImage(), v2.ToDtype(torch.float32, scale=True)])"
    ),
    # not here: non-public aliases of public functions (`torch.utils.data._utils.collate.default_collate`) are
    # the same object as the public name and warn nothing; calling them deprecated was false (bench/realworld)
    **{
        f"functorch.{fn}": ApiChange(f"torch.func.{fn}")
        for fn in ("vmap", "grad", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "functionalize")
    },
}
LAUNCH_MODULE = ApiChange("torchrun (torch.distributed.run)", since=(1, 10))  # torchrun's release; warns since
TYPED_STORAGE = ApiChange("untyped_storage()", since=(2, 0))
LOADER_ITERATOR_NEXT_ALIAS_REMOVED = (1, 13)  # DataLoader iterators lost `.next()`

# Still importable on current torch, but calling them raises RuntimeError ("... is now removed").
REMOVED: dict[str, ApiChange] = {
    "torch.solve": ApiChange("torch.linalg.solve(A, B) (note the swapped arguments)"),
    "torch.symeig": ApiChange("torch.linalg.eigh"),
    "torch.eig": ApiChange("torch.linalg.eig"),
    "torch.lstsq": ApiChange("torch.linalg.lstsq(A, B) (note the swapped arguments)"),
    "torch.matrix_rank": ApiChange("torch.linalg.matrix_rank"),
}
# Gone from their module: AttributeError at the call (ImportError at `from torch.onnx import _export`).
# `since`: the first release known to lack them (all checked absent on torch 2.13).
GONE: dict[str, ApiChange] = {
    "torch.onnx._export": ApiChange("torch.onnx.export", since=(2, 5)),
    "torch.set_deterministic": ApiChange("torch.use_deterministic_algorithms", since=(2, 0)),
    "torch.is_deterministic": ApiChange("torch.are_deterministic_algorithms_enabled", since=(2, 0)),
}
# Removed modules: importing them raises ModuleNotFoundError when the program starts.
REMOVED_MODULES: dict[str, ApiChange] = {
    "torch._six": ApiChange("what it aliased: `math.inf`, `str`, `collections.abc`", since=(2, 0)),
    "torch.distributed.pipeline": ApiChange("torch.distributed.pipelining", since=(2, 5)),
    "torch.utils.ffi": ApiChange("torch.utils.cpp_extension", since=(2, 0)),
    "torch.legacy": ApiChange("torch.nn", since=(2, 0)),
    "torch.distributed.deprecated": ApiChange("torch.distributed", since=(2, 0)),
}
