"""Benches: the classification and generation benches, evaluation of feature files, the papers' claims, findings and their verdicts, discussions, the report."""
# Written by hand: nbdev-export leaves an existing __init__.py alone. This is the subpackage's face: the names a user
# starts from (the README, the index and the experiments use them), at most about two dozen; everything else stays
# importable from its module (`from fewshot_nb.bench.<module> import ...`). Every module is imported, so that importing
# any part of the package registers all of its components (tests/test_api.py checks the face and its `__all__`).
from . import experiment, findings, claims, discussion, classification, generation, evaluate, report, reproduce
from .experiment import stored_run
from .findings import Finding, findings_table, verdict_of
from .claims import load_claims, Measured, judge
from .discussion import RunFiles, discuss
from .classification import ClassificationBench, TaskSetting
from .generation import GenerationBench, train_generative_model, run_generative_model, score_generator, plot_plane
from .evaluate import evaluate_features, Protocol, RunOptions, results_table, plot_results
from .report import write_report
from .reproduce import reproduce_papers

__all__ = ['RunFiles', 'stored_run', 'Finding', 'findings_table', 'verdict_of', 'load_claims', 'Measured', 'judge', 'discuss', 'ClassificationBench',
           'TaskSetting', 'GenerationBench', 'train_generative_model', 'run_generative_model', 'score_generator', 'plot_plane',
           'evaluate_features', 'Protocol', 'RunOptions', 'results_table', 'plot_results', 'write_report', 'reproduce_papers']
