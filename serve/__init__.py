"""The class server: streamlit replicas of the app behind nginx (``python -m serve``), and the two
things each replica runs in-process (decode Steps in line, a frozen heap). Imports no streamlit:
a streamlit import prints to stdout and adds seconds to a command that only starts processes."""
