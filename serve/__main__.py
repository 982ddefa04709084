"""``python -m serve``: the class server (``serve.replicas``: streamlit replicas behind nginx)."""

import sys

from serve.replicas import main

sys.exit(main())
