"""`python -m torchlint`."""

import os
import sys

# `python -m` puts the current directory first on sys.path, so a project file named like a
# dependency (tomllib.py, libcst.py, torch.py) would run when we import it: analysed code
# must never run. torchlint itself is already imported, from where it is installed.
if sys.path and sys.path[0] in ("", os.getcwd()):
    del sys.path[0]

from torchlint.cli import main

raise SystemExit(main())
