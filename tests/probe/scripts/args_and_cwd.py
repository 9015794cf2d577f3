import os
import sys

print("ARGS", sys.argv[1:], "CWD", os.getcwd())
