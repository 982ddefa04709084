"""The streamlit glue: everything the pages call besides streamlit itself.

Each name is imported from the module where it lives: ``ui.frame`` (navigation, session state,
sidebar), ``ui.page`` (page helpers: ``title``, ``chart``, ``refuse``), ``ui.present`` (presenter
mode), ``ui.models`` (the shared read-only models), and a module or package per page section.
"""
