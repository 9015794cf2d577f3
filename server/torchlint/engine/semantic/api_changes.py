"""The torch API's deprecations and removals, each with the release it happened in, kept as data in one place
(as TorchFix's deprecated_symbols table): TL701 and TL710 read these tables and attach their rewrites by name, so
a new entry is one line here, and a target version below `since` (or below `available`, the release that brought the
replacement the message names) keeps a file silent: a project pinned to torch 1.6 is not told to use an API of 2.1."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ApiChange:
    use: str  # what to use instead, as the message says it
    since: tuple[int, int] = (0, 0)  # the torch release it happened in; (0, 0): before any target we know
    available: tuple[int, int] = (0, 0)  # the release that brought `use`, when later than `since`

    @property
    def applies_from(self) -> tuple[int, int]:
        """The first target release the advice is true on: deprecated there, and its replacement exists."""
        return max(self.since, self.available)

    @property
    def since_text(self) -> str:
        """`since 1.9` for a message, empty when the release is not known."""
        return f"since {self.since[0]}.{self.since[1]}" if self.since != (0, 0) else ""


# Deprecated: they still run (with a warning) on current torch.
DEPRECATED: dict[str, ApiChange] = {
    "torch.qr": ApiChange("torch.linalg.qr", since=(1, 9)),
    "torch.cholesky": ApiChange("torch.linalg.cholesky", since=(1, 9)),
    "torch.chain_matmul": ApiChange("torch.linalg.multi_dot", since=(1, 9)),
    "torch.range": ApiChange("torch.arange (which excludes the end)", since=(0, 4)),
    "torch.norm": ApiChange("torch.linalg.vector_norm / matrix_norm", since=(1, 7), available=(1, 9)),
    "torch.ger": ApiChange("torch.outer", since=(1, 8)),
    "torch.lu": ApiChange("torch.linalg.lu_factor", since=(1, 13)),
    "torch.lu_solve": ApiChange("torch.linalg.lu_solve(LU, pivots, B) (note the argument order)", since=(1, 13)),
    "torch.svd": ApiChange("torch.linalg.svd (returns Vh, not V; full_matrices replaces some)", since=(1, 9)),
    "torch.triangular_solve": ApiChange("torch.linalg.solve_triangular(A, B, upper=...)", since=(1, 11)),
    "torch.nn.UpsamplingNearest2d": ApiChange('torch.nn.Upsample(..., mode="nearest")', since=(0, 4)),
    "torch.nn.UpsamplingBilinear2d": ApiChange(
        'torch.nn.Upsample(..., mode="bilinear", align_corners=True)', since=(0, 4)
    ),
    "torch.nn.functional.upsample": ApiChange("torch.nn.functional.interpolate", since=(0, 4)),
    "torch.testing.assert_allclose": ApiChange("torch.testing.assert_close", since=(1, 12)),
    "torch.nn.utils.weight_norm": ApiChange(
        "torch.nn.utils.parametrizations.weight_norm (state_dict keys change)", since=(2, 1)
    ),
    "torch.utils._pytree._register_pytree_node": ApiChange("torch.utils._pytree.register_pytree_node", since=(2, 2)),
    "torch.backends.cuda.sdp_kernel": ApiChange("torch.nn.attention.sdpa_kernel", since=(2, 3)),
    "torch.cuda.amp.autocast": ApiChange('torch.amp.autocast("cuda", ...)', since=(2, 4)),
    "torch.cuda.amp.GradScaler": ApiChange('torch.amp.GradScaler("cuda", ...)', since=(2, 4)),
    # TorchScript: deprecated in 2.5 (its docs), warning on every call in later releases
    "torch.jit.script": ApiChange("torch.compile or torch.export", since=(2, 5)),
    "torch.jit.trace": ApiChange("torch.export or torch.compile", since=(2, 5)),
    "torch.jit.freeze": ApiChange("torch.compile", since=(2, 5)),
    "torch.set_default_tensor_type": ApiChange("torch.set_default_dtype / torch.set_default_device", since=(2, 1)),
    "torchvision.transforms.v2.ToTensor": ApiChange(
        "v2.Compose([v2.ToImage(), v2.ToDtype(torch.float32, scale=True)])", since=(2, 1)
    ),  # torchvision 0.16, paired with torch 2.1
    # not here: non-public aliases of public functions (`torch.utils.data._utils.collate.default_collate`) are
    # the same object as the public name and warn nothing; calling them deprecated was false (bench/realworld)
    **{
        f"functorch.{fn}": ApiChange(f"torch.func.{fn}", since=(2, 0))
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
