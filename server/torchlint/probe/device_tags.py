"""Logical devices: what device each tensor would be on, and where CPU tensors were made.

Tags are keyed by the tensor's storage, so views, `.data`, `nn.Parameter(t)` and the
tensors autograd saves for backward all share their tag without extra work; a weak
storage reference detects a freed storage whose address came back. Nothing is
stored on the tensors themselves, so `torch.save` files stay clean.
"""

from __future__ import annotations

import torch

_Storage = torch.UntypedStorage


def _storage_key(t: torch.Tensor) -> int | None:
    try:
        return t.untyped_storage()._cdata
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
        self._tags[key] = (device, storage._weak_ref(), storage.nbytes())
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
        _Storage._free_weak_ref(weak)

    def _purge(self) -> None:
        for key in [k for k, (_d, w, _s) in self._tags.items() if _Storage._expired(w)]:
            self._drop(key)


class Origins:
    """Where user code created tensors on the default device, so a mismatch can name that line too.

    Bounded: only the most recent few thousand storages are remembered.
    """

    LIMIT = 4096

    def __init__(self) -> None:
        self._sites: dict[int, tuple] = {}

    def record(self, out, site) -> None:
        if not isinstance(out, torch.Tensor):
            return
        key = _storage_key(out)
        if key is None:
            return
        self._sites[key] = (site, out.untyped_storage()._weak_ref())
        if len(self._sites) > self.LIMIT:
            for old in list(self._sites)[: self.LIMIT // 2]:
                _Storage._free_weak_ref(self._sites.pop(old)[1])

    def inherit(self, out, source) -> None:
        """`out` was computed from `source` on the same line: it comes from where `source` was made."""
        if isinstance(out, torch.Tensor) and isinstance(source, torch.Tensor):
            entry = self._sites.get(_storage_key(source))
            if entry is not None and not _Storage._expired(entry[1]):
                self.record(out, entry[0])

    def sites(self, tensors) -> list[dict]:
        found = []
        for t in tensors:
            entry = self._sites.get(_storage_key(t))
            if entry is not None and not _Storage._expired(entry[1]):
                where = {"path": entry[0].path, "line": entry[0].line}
                if where not in found:
                    found.append(where)
        return found


def parse_device(value) -> str | None:
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
