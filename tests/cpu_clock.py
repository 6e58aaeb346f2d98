"""CPU seconds of this process and of its reaped children (solver workers, Storm's forked checks): what a time-limit
test compares, since wall-clock time on the shared CI machine grows with the other jobs' load."""
import os


def tree_cpu_seconds() -> float:
    """User and system seconds of this process and of every child it has waited for."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system
