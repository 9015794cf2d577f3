"""Start the torchlint language server bundled with the VS Code extension.

Its libraries (built for this CPython version and platform) go first on
sys.path, so whatever torchlint or libcst the user's environment holds cannot
shadow them.
"""

import os
import sys

EXIT_NO_BUNDLE = 3

libs = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
    "libs",
    "cp%d%d" % sys.version_info[:2],
)
if not os.path.isdir(libs):
    sys.stderr.write(
        "torchlint: this extension has no bundled server for Python %d.%d on %s; "
        "set torchlint.importStrategy to fromEnvironment and pip install 'torchlint[server]'\n"
        % (sys.version_info[0], sys.version_info[1], sys.platform)
    )
    sys.exit(EXIT_NO_BUNDLE)
sys.path.insert(0, libs)

from torchlint.cli import main  # noqa: E402

sys.exit(main(["server", *sys.argv[1:]]))
