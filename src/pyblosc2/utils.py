"""python-blosc2's ``blosc2.utils`` names that scripts and tests import (index keys).

>>> process_key(2, (5,))
((slice(2, 3, None),), (True,))
"""

from .ndarray.keys import process_key

__all__ = ["process_key"]
