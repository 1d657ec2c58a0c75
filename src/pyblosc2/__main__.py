"""``python -m pyblosc2``: the command line tool (:mod:`pyblosc2.cli`)."""

import sys

import pyblosc2.cli

sys.exit(pyblosc2.cli.main())
