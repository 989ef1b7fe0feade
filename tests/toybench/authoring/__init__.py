"""The toy's authoring: the task generator behind ``data/tasks.json`` (``build.py``)."""
