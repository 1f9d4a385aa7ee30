"""Worker side of reprobot: Celery app and tasks, the runner and its sandbox."""
