"""Logical devices: what device each tensor would be on, and where CPU tensors were made.

Tags are keyed by the tensor's storage, so views, `.data`, `nn.Parameter(t)` and the
tensors autograd saves for backward all share their tag without extra work; a weak
storage reference detects a freed storage whose address came back. Nothing is
stored on the tensors themselves, so `torch.save` files stay clean.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import torch

from torchlint.probe.json_types import SiteJson

if TYPE_CHECKING:
    from torchlint.probe.sites import Site

_Storage = torch.UntypedStorage
# _WEAK_REF: `storage._weak_ref()` returns an int handle (what `_expired` and `_free_weak_ref` take);
# torch's annotation says it returns a storage.


def _storage_key(t: torch.Tensor) -> int | None:
    try:
        key: int = t.untyped_storage()._cdata
        return key
    except (RuntimeError, NotImplementedError, TypeError):  # sparse, nested, meta-less subclasses
        return None


class DeviceTags:
    """storage -> logical device string, for storages whose logical device differs from the real one."""

    def __init__(self) -> None:
        self._tags: dict[int, tuple[str, int, int]] = {}  # storage cdata -> (device, weak ref handle, bytes)
        self._writes = 0
        self.devices: set[str] = set()  # every logical device a tensor was put on

    def get(self, t: torch.Tensor) -> str:
        key = _storage_key(t)
        if key is not None:
            entry = self._tags.get(key)
            if entry is not None:
                if not _Storage._expired(entry[1]):
                    return entry[0]
                self._drop(key)
        dev = t.device
        return f"cuda:{dev.index or 0}" if dev.type == "cuda" else dev.type if dev.index is None else str(dev)

    def simulated(self, t: torch.Tensor) -> str | None:
        """The tag of `t`'s storage, None when it has none (its device is its real one)."""
        key = _storage_key(t)
        entry = self._tags.get(key) if key is not None else None
        if entry is None:
            return None
        if _Storage._expired(entry[1]):
            self._drop(key)  # type: ignore[arg-type]  # key is not None when entry is not
            return None
        return entry[0]

    def first_simulated(self, args: tuple[object, ...], kwargs: dict[str, object]) -> str | None:
        """The first tag among the tensor arguments (and the tensors in list arguments)."""
        for a in (*args, *kwargs.values()) if kwargs else args:
            if isinstance(a, torch.Tensor):
                dev = self.simulated(a)
                if dev is not None:
                    return dev
            elif isinstance(a, (list, tuple)):
                for e in a:
                    if isinstance(e, torch.Tensor):
                        dev = self.simulated(e)
                        if dev is not None:
                            return dev
        return None

    def of_storage(self, storage: _Storage) -> str | None:
        """The simulated device of a storage, None when it has none."""
        entry = self._tags.get(storage._cdata)
        return entry[0] if entry is not None and not _Storage._expired(entry[1]) else None

    def set(self, t: torch.Tensor, device: str) -> None:
        try:
            storage = t.untyped_storage()
        except (RuntimeError, NotImplementedError, TypeError):
            return
        self.set_storage(storage, device)

    def set_storage(self, storage: _Storage, device: str) -> None:
        key = storage._cdata
        entry = self._tags.get(key)
        if entry is not None:
            if entry[0] == device and not _Storage._expired(entry[1]):
                return  # views and in-place results keep the storage, and its tag
            self._drop(key)
        if device == storage.device.type:
            return
        self._tags[key] = (device, storage._weak_ref(), storage.nbytes())  # type: ignore[assignment]  # _WEAK_REF
        self.devices.add(device)
        self._writes += 1
        if self._writes % 4096 == 0:
            self._purge()

    def bytes_on(self, device: str) -> int:
        """Bytes of the live storages tagged `device` (what a caching allocator would hand out)."""
        self._purge()
        return sum(size for tag, _weak, size in self._tags.values() if tag == device)

    def _drop(self, key: int) -> None:
        _device, weak, _size = self._tags.pop(key)
        _Storage._free_weak_ref(weak)  # type: ignore[no-untyped-call]  # unannotated in torch

    def _purge(self) -> None:
        for key in [k for k, (_d, w, _s) in self._tags.items() if _Storage._expired(w)]:
            self._drop(key)


class Origins:
    """Where user code created tensors on the default device, so a mismatch can name that line too.

    Bounded: only the most recent few thousand storages are remembered.
    """

    LIMIT = 4096

    def __init__(self) -> None:
        self._sites: dict[int, tuple[Site, int]] = {}  # storage cdata -> (where made, weak ref handle)

    def record(self, out: object, site: Site) -> None:
        if not isinstance(out, torch.Tensor):
            return
        key = _storage_key(out)
        if key is None:
            return
        self._sites[key] = (site, out.untyped_storage()._weak_ref())  # type: ignore[assignment]  # _WEAK_REF
        if len(self._sites) > self.LIMIT:
            for old in list(self._sites)[: self.LIMIT // 2]:
                _Storage._free_weak_ref(self._sites.pop(old)[1])  # type: ignore[no-untyped-call]  # unannotated in torch

    def inherit(self, out: object, source: object) -> None:
        """`out` was computed from `source` on the same line: it comes from where `source` was made."""
        if isinstance(out, torch.Tensor) and isinstance(source, torch.Tensor):
            key = _storage_key(source)
            entry = self._sites.get(key) if key is not None else None
            if entry is not None and not _Storage._expired(entry[1]):
                self.record(out, entry[0])

    def sites(self, tensors: Iterable[torch.Tensor]) -> list[SiteJson]:
        found: list[SiteJson] = []
        for t in tensors:
            key = _storage_key(t)
            entry = self._sites.get(key) if key is not None else None
            if entry is not None and not _Storage._expired(entry[1]):
                where = entry[0].to_json()
                if where not in found:
                    found.append(where)
        return found


def required_device(value: object) -> str:
    """`parse_device` of an argument that must be a device: raises when it is not one, as torch does."""
    device = parse_device(value)
    if device is None:
        raise RuntimeError(f"not a device: {value!r}")
    return device


def parse_device(value: object) -> str | None:
    """A device argument as a logical device string ("cpu", "cuda:0"), or None if not a device."""
    if isinstance(value, torch.device):
        if value.type == "cuda":
            return f"cuda:{value.index or 0}"
        return value.type if value.index is None else str(value)
    if isinstance(value, str):
        try:
            return parse_device(torch.device(value))
        except (RuntimeError, ValueError):
            return None
    if isinstance(value, int) and not isinstance(value, bool):
        return f"cuda:{value}"
    return None
