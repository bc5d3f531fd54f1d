"""``agentrun run DIRS... --job DIR``: a dataset's tasks, each tried K times, as one job.

::

    find_tasks   (run.py)     the task folders of DIRS, filtered by --include/--exclude
    Ledger       (ledger.py)  JOB/job.json: the spec and one TrialRecord per trial, written
                              whole with os.replace after every trial, so a killed job resumes
    run_trial    (run.py)     one trial, its infrastructure failures retried (--infra-retries)
    classify     (causes.py)  why a trial failed: the task, a timeout, or the infrastructure
    summarize    (stats.py)   the mean with a bootstrap confidence interval, pass@k
"""

from agentrun.batch.ledger import JobSpec, Ledger, TrialRecord
from agentrun.batch.run import find_tasks, run_job

__all__ = ["JobSpec", "Ledger", "TrialRecord", "find_tasks", "run_job"]
