"""The process runtime: child processes and their end, interruption, progress lines, page workers
(local and on Ray), the memory budget, the Prefect server a command starts."""
