import os
import sys

# reference.py next to the tests; the package itself comes from PYTHONPATH (ctest sets it to
# the build tree; after `pip install ./python`, the installed one).
sys.path.insert(0, os.path.dirname(__file__))
