"""The client's settings for each workspace folder.

A document is linted with the settings of the workspace folder that holds it
(the innermost one, when folders nest). A document outside every folder, or a
client that cannot be asked per folder, gets the global settings: from
`initializationOptions`, a pushed `didChangeConfiguration`, or
`workspace/configuration` without a scope.
"""

from __future__ import annotations

from pathlib import Path

from torchlint.lsp.settings import ClientSettings


class FolderSettings:
    def __init__(self) -> None:
        self.default = ClientSettings()
        self._folders: dict[str, ClientSettings] = {}  # folder path -> its settings

    def for_path(self, path: str) -> ClientSettings:
        """The settings of the innermost workspace folder holding `path`, else the global ones."""
        holding = [folder for folder in self._folders if Path(path).is_relative_to(folder)]
        return self._folders[max(holding, key=len)] if holding else self.default

    def replace(self, default: ClientSettings, folders: dict[str, ClientSettings]) -> bool:
        """Take new settings; True if any differ from the old ones."""
        changed = (default, folders) != (self.default, self._folders)
        self.default, self._folders = default, folders
        return changed
